"""The single-head attention pipeline as a picture, with the shape of every tensor on its arrow.

X -> Q, K, V -> Q K^T -> / sqrt(d_k) -> softmax -> (weights) V -> O W_O -> output
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from .._validation import check_int

# Box centres (x, y) in data coordinates of a 0..19.3 by -2.5..2.6 canvas, and their text.
_BOXES: dict[str, tuple[float, float, str]] = {
    "X": (0.9, 0.4, "$X$\nembeddings"),
    "Q": (4.0, 1.7, "$Q = X W_Q$"),
    "K": (4.0, 0.4, "$K = X W_K$"),
    "V": (4.0, -1.6, "$V = X W_V$"),
    "S": (7.0, 1.05, "$S = Q K^\\top$\nscores"),
    "scale": (9.5, 1.05, "$S / \\sqrt{d_k}$\nscale"),
    "softmax": (12.0, 1.05, "$A = $softmax\nrow by row"),
    "AV": (12.0, -1.6, "$O = A V$\nweighted sum"),
    "WO": (15.1, -1.6, "$O\\,W_O$\noutput proj."),
    "out": (18.2, -1.6, "output\nnext layer"),
}
_BOX_W, _BOX_H = 1.9, 1.0
_BOX_PAD = 0.02  # the rounded outline lies this far outside the nominal box


def _edge_point(centre: tuple[float, float], towards: tuple[float, float]) -> tuple[float, float]:
    """Where the straight line from a box's centre towards a point leaves the box's outline.

    Computed here rather than by letting the arrow clip itself against the box patches
    (``patchA``/``patchB``), which searches the outline on every draw and made the figure
    several times slower to render.
    """
    (x, y), (tx, ty) = centre, towards
    dx, dy = tx - x, ty - y
    half_w, half_h = _BOX_W / 2 + _BOX_PAD, _BOX_H / 2 + _BOX_PAD
    t = min(half_w / abs(dx) if dx else float("inf"), half_h / abs(dy) if dy else float("inf"))
    return x + t * dx, y + t * dy


def _shape_text(symbolic: tuple[str, str], sizes: tuple[int, int]) -> str:
    rows, cols = symbolic
    return f"${rows} \\times {cols}$\n({sizes[0]}, {sizes[1]})"


def draw_attention_pipeline(
    T: int,
    d_model: int,
    d_k: int,
    d_v: int,
    ax: Axes | None = None,
) -> list[Artist]:
    r"""Draw single-head scaled dot-product attention as boxes and arrows, shapes on the arrows.

    The boxes are the stages :math:`X \to Q, K, V \to S = QK^\top \to S/\sqrt{d_k} \to
    A = \mathrm{softmax}(\cdot) \to O = AV \to O W_O`. Each arrow is labelled with the tensor
    it carries, both in symbols (:math:`T \times d_k`) and in numbers computed from the arguments
    (``(5, 3)``). The key arrow carries :math:`K^\top`, shape :math:`d_k \times T`. The
    projection boxes show their weight shapes; :math:`W_O` is :math:`d_v \times d_{model}`, so
    the output has the width of the input. Choose distinct sizes (say T = 5, d_model = 6,
    d_k = 3, d_v = 4) and every number on the picture names its dimension.

    Parameters
    ----------
    T : int
        Sequence length (number of tokens), >= 1.
    d_model : int
        Width of the embeddings, the columns of X, >= 1.
    d_k : int
        Width of queries and keys, >= 1.
    d_v : int
        Width of values and of the output, >= 1.
    ax : matplotlib Axes, optional
        Where to draw; a new 14 x 4.6 inch figure's axes if None. Its axis is switched off and
        its limits set to fit the diagram.

    Returns
    -------
    list of matplotlib.artist.Artist
        Every box, box text, arrow and arrow label drawn, in that order per element. Each has a
        gid: ``"box:NAME"``, ``"boxtext:NAME"``, ``"arrow:TAIL->HEAD"``, ``"label:TAIL->HEAD"``,
        with NAME in X, Q, K, V, S, scale, softmax, AV, WO, out.

    Raises
    ------
    TypeError
        If a size is not an integer or ``ax`` is not a matplotlib Axes.
    ValueError
        If a size is below 1.
    """
    T = check_int(T, "T")
    d_model = check_int(d_model, "d_model")
    d_k = check_int(d_k, "d_k")
    d_v = check_int(d_v, "d_v")
    if ax is None:
        _, ax = plt.subplots(figsize=(16, 4.6))
    elif not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}")

    x_shape = _shape_text(("T", "d_{model}"), (T, d_model))
    arrows = [
        # (tail, head, label, label offset (dx, dy) from the arrow's middle)
        ("X", "Q", x_shape, (-0.3, 0.6)),
        ("X", "K", x_shape, (0.05, -0.4)),
        ("X", "V", x_shape, (-0.4, -0.45)),
        ("Q", "S", _shape_text(("T", "d_k"), (T, d_k)), (0.0, 0.55)),
        ("K", "S", _shape_text(("K^\\top\\!: d_k", "T"), (d_k, T)), (0.2, -0.62)),
        ("S", "scale", _shape_text(("T", "T"), (T, T)), (0.0, 0.62)),
        ("scale", "softmax", _shape_text(("T", "T"), (T, T)), (0.0, 0.62)),
        ("softmax", "AV", _shape_text(("T", "T"), (T, T)), (0.75, 0.0)),
        ("V", "AV", _shape_text(("T", "d_v"), (T, d_v)), (0.0, 0.42)),
        ("AV", "WO", _shape_text(("T", "d_v"), (T, d_v)), (0.0, 0.5)),
        ("WO", "out", x_shape, (0.0, 0.5)),
    ]

    weights = {
        "Q": (d_model, d_k),
        "K": (d_model, d_k),
        "V": (d_model, d_v),
        "WO": (d_v, d_model),
    }
    artists: list[Artist] = []
    for name, (x, y, text) in _BOXES.items():
        if name in weights:
            text += f"\n$W_{name[-1]}$: {weights[name]}"
        is_io = name in ("X", "out")
        box = FancyBboxPatch(
            (x - _BOX_W / 2, y - _BOX_H / 2),
            _BOX_W,
            _BOX_H,
            boxstyle=f"round,pad={_BOX_PAD},rounding_size=0.15",
            facecolor="#fdf1dc" if is_io else "#e4eef8",
            edgecolor="#7a5a1c" if is_io else "#2b5d8a",
            linewidth=1.4,
            gid=f"box:{name}",
        )
        ax.add_patch(box)
        label = ax.text(x, y, text, ha="center", va="center", fontsize=11, gid=f"boxtext:{name}")
        artists += [box, label]

    for tail, head, text, (dx, dy) in arrows:
        (x0, y0, _), (x1, y1, _) = _BOXES[tail], _BOXES[head]
        arrow = FancyArrowPatch(
            _edge_point((x0, y0), (x1, y1)),
            _edge_point((x1, y1), (x0, y0)),
            arrowstyle="-|>",
            mutation_scale=16,
            linewidth=1.3,
            color="#333333",
            shrinkA=0,
            shrinkB=0,
            gid=f"arrow:{tail}->{head}",
        )
        ax.add_patch(arrow)
        label = ax.text(
            (x0 + x1) / 2 + dx,
            (y0 + y1) / 2 + dy,
            text,
            ha="center",
            va="center",
            fontsize=10,
            color="#1f1f1f",
            linespacing=1.1,
            gid=f"label:{tail}->{head}",
        )
        artists += [arrow, label]

    ax.set_xlim(-0.2, 19.3)
    ax.set_ylim(-2.5, 2.6)
    ax.set_axis_off()
    ax.set_title(
        f"Single-head scaled dot-product attention: T = {T}, $d_{{model}}$ = {d_model},"
        f" $d_k$ = {d_k}, $d_v$ = {d_v}",
        fontsize=12,
    )
    return artists
