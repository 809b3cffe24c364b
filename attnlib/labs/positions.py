"""The positions lab: choose how word order enters attention, and move a (q, k) pair apart.

Left, the score of one fixed pair, the query of "bites" against the key of "dog", placed
``i - j`` positions apart, for every offset from -12 to 12, with the chosen offset marked; right,
the attention pattern of the short sentence "the dog bites the man" under the same scheme, with
the (bites, dog) cell outlined. Controls: the scheme (none / sinusoidal / RoPE / ALiBi), the
offset, the frequency base of the sinusoidal and RoPE schemes and the ALiBi head (its slope);
the controls a scheme does not use are disabled.

The numbers come from :func:`attnlib.positions.relative_scores` and
:func:`attnlib.positions.positioned_scores`; :func:`positions_state` gathers them for one set
of control values and :func:`update_positions_view` puts them on the figure's artists. Both
run without a browser. The only coupling to the lab machinery is the ``Lab(...)`` call in
:func:`positions_lab`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._validation import check_int
from ..examples import POSITIONS_SENTENCE as SENTENCE
from ..examples import positions_weights as sentence_weights
from ..liveview import Lab
from ..pictures.cell_mesh import cell_mesh, set_cell_colours, weight_colorbar
from ..pictures.heatmap import token_ticks
from ..positions import SCHEMES, alibi_slopes, positioned_scores, relative_scores
from ..softmax import softmax

__all__ = [
    "BASES",
    "N_HEADS",
    "OFFSETS",
    "SENTENCE",
    "positions_caption",
    "positions_lab",
    "positions_state",
    "sentence_weights",
    "update_positions_view",
]

#: The fixed pair of the left panel: the query of "bites" and the key of "dog".
QUERY, KEY = 2, 1
#: The offsets i - j of the left panel.
OFFSETS = np.arange(-12, 13)
#: The frequency bases offered (RoPE's and the sinusoidal table's base; 10000 in the papers).
BASES: tuple[int, ...] = (10, 100, 1000, 10000)
#: ALiBi heads offered: head h of an 8-head model, slope 2 ** -h.
N_HEADS = 8
#: The key's absolute position for the left panel (so every query position is >= 0).
KEY_POSITION = 12

_CMAP = colormaps["Blues"]


def positions_state(
    X: np.ndarray,
    W_Q: np.ndarray,
    W_K: np.ndarray,
    *,
    scheme: str,
    offset: int,
    base: float,
    head: int,
) -> dict[str, Any]:
    """The numbers the lab shows for one set of control values.

    Parameters
    ----------
    X : ndarray, shape (T, d_model)
    W_Q, W_K : ndarray, shape (d_model, d_k)
    scheme : {"none", "sinusoidal", "RoPE", "ALiBi"}
    offset : int
        The marked offset i - j, one of :data:`OFFSETS`.
    base : float
        The frequency base (sinusoidal and RoPE).
    head : int
        The ALiBi head, 1 to :data:`N_HEADS`; slope ``alibi_slopes(N_HEADS)[head - 1]``.

    Returns
    -------
    dict
        ``curve`` (len(OFFSETS),): the pair's score at each offset (unscaled, q . k);
        ``score``: at the marked offset; ``content``: q . k with no positions; ``slope``;
        ``weights`` (T, T): softmax of :func:`~attnlib.positions.positioned_scores`; and the
        control values.
    """
    offset = check_int(offset, "offset", minimum=int(OFFSETS[0]))
    if offset > OFFSETS[-1]:
        raise ValueError(f"offset must lie in [{OFFSETS[0]}, {OFFSETS[-1]}]; got {offset}")
    head = check_int(head, "head")
    if head > N_HEADS:
        raise ValueError(f"head must lie in [1, {N_HEADS}]; got head={head}")
    slope = float(alibi_slopes(N_HEADS)[head - 1])
    q, k = X[QUERY] @ W_Q, X[KEY] @ W_K
    curve = relative_scores(
        q, k, OFFSETS, scheme, base=base, slope=slope, key_position=KEY_POSITION
    )
    scores = positioned_scores(X, W_Q, W_K, scheme, base=base, slope=slope)
    return {
        "scheme": scheme,
        "offset": offset,
        "base": base,
        "head": head,
        "slope": slope,
        "curve": curve,
        "score": float(curve[offset - OFFSETS[0]]),
        "content": float(q @ k),
        "weights": softmax(scores, axis=-1),
    }


def _curve_limits(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray) -> tuple[float, float]:
    """y-limits that hold the curve of every scheme, base and head (fixed while the lab runs)."""
    q, k = X[QUERY] @ W_Q, X[KEY] @ W_K
    curves = [
        relative_scores(q, k, OFFSETS, s, base=b, slope=m, key_position=KEY_POSITION)
        for s in SCHEMES
        for b in BASES
        for m in alibi_slopes(N_HEADS)
    ]
    low, high = float(np.min(curves)), float(np.max(curves))
    pad = 0.08 * (high - low)
    return low - pad, high + pad


def _make_view(figure: Figure, limits: tuple[float, float]) -> tuple[dict[str, Any], list[Artist]]:
    T = len(SENTENCE)
    ax_curve = figure.add_axes((0.08, 0.169, 0.45, 0.682))
    ax_map = figure.add_axes((0.66, 0.106, 0.26, 0.64))

    ax_curve.set_xlim(OFFSETS[0] - 0.5, OFFSETS[-1] + 0.5)
    ax_curve.set_ylim(*limits)
    ax_curve.axvline(0, color="grey", lw=0.8)
    ax_curve.set_xlabel("offset i - j (query after key > 0)", fontsize=10)
    ax_curve.set_ylabel("score q . k", fontsize=10)
    ax_curve.set_title("query 'bites' against key 'dog', moved apart", fontsize=10)
    ax_curve.tick_params(labelsize=10)
    ax_curve.grid(alpha=0.3)
    (line,) = ax_curve.plot(OFFSETS, np.zeros(OFFSETS.size), "-o", ms=3.5, color="#1f77b4")
    (marker,) = ax_curve.plot([0], [0], "o", ms=10, color="crimson")
    marked = ax_curve.axvline(0, color="crimson", lw=1, ls="--")

    image = cell_mesh(ax_map, T)
    token_ticks(ax_map, SENTENCE, rotation=40)
    ax_map.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax_map.set_xlabel("attention pattern of the sentence", fontsize=10)
    ax_map.add_patch(
        Rectangle((KEY - 0.5, QUERY - 0.5), 1, 1, fill=False, edgecolor="crimson", linewidth=2.5)
    )
    colorbar = weight_colorbar(figure, ax_map, _CMAP, fraction=0.08, pad=0.03)
    colorbar.ax.tick_params(labelsize=10)
    view = {"line": line, "marker": marker, "marked": marked, "image": image}
    return view, [line, marker, marked, image]


def update_positions_view(
    view: dict[str, Any], X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, **values: Any
) -> dict[str, Any]:
    """Put the numbers of :func:`positions_state` on the view's artists; return the state."""
    state = positions_state(X, W_Q, W_K, **values)
    view["line"].set_ydata(state["curve"])
    view["marker"].set_data([state["offset"]], [state["score"]])
    view["marked"].set_xdata([state["offset"]] * 2)
    set_cell_colours(view["image"], _CMAP(state["weights"]))
    return state


def positions_caption(state: dict[str, Any]) -> str:
    """Two lines: the marked score against the content alone, and what the scheme does."""
    scheme = state["scheme"]
    head = (
        f"{scheme}: 'bites' {state['offset']:+d} positions from 'dog': score {state['score']:.3f}"
        f" (content alone {state['content']:.3f})"
    )
    detail = {
        "none": "no positions: the same score at every offset, and the two 'the' look alike",
        "sinusoidal": f"sin/cos table (base {state['base']:g}) added to the embeddings",
        "RoPE": f"q and k rotated by p theta_m (base {state['base']:g}): a function of i - j",
        "ALiBi": f"bias -m |i - j| with slope m = {state['slope']:.4g} (head {state['head']} of 8)",
    }[scheme]
    return f"{head}\n{detail}"


def _sync(controls: dict) -> None:
    """Enable the controls the chosen scheme uses; disable the others."""
    scheme = controls["scheme"].value
    controls["base"].disabled = scheme not in ("sinusoidal", "RoPE")
    controls["head"].disabled = scheme != "ALiBi"


def positions_lab(
    scheme: str = "RoPE",
    offset: int = 1,
    base: int = 10000,
    head: int = 1,
    present: bool = False,
) -> Lab:
    """A live lab: pick a position scheme, move a (q, k) pair apart, watch scores and weights.

    Parameters
    ----------
    scheme : {"none", "sinusoidal", "RoPE", "ALiBi"}, default "RoPE"
    offset : int, default 1
        The marked offset i - j (-12 to 12); 1 is where "bites" stands after "dog".
    base : int, default 10000
        One of :data:`BASES`.
    head : int, default 1
        The ALiBi head, 1 (slope 1/2) to 8 (slope 1/256).
    present : bool, default False
        Projector size (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.lab.Lab
        Controls ``scheme``, ``offset``, ``base``, ``head``; ``lab.state`` holds the numbers on
        show (see :func:`positions_state`).
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got scheme={scheme!r}")
    if base not in BASES:
        raise ValueError(f"base must be one of {BASES}; got base={base!r}")
    positions_state(*sentence_weights(), scheme=scheme, offset=offset, base=base, head=head)
    X, W_Q, W_K = sentence_weights()
    slopes = alibi_slopes(N_HEADS)
    controls = {
        "scheme": widgets.ToggleButtons(options=list(SCHEMES), value=scheme, description="scheme"),
        "offset": widgets.IntSlider(
            value=offset, min=int(OFFSETS[0]), max=int(OFFSETS[-1]), description="offset i - j"
        ),
        "base": widgets.SelectionSlider(
            options=[(f"{b:,}", b) for b in BASES], value=base, description="frequency base"
        ),
        "head": widgets.SelectionSlider(
            options=[(f"{h}: m = 1/{round(1 / slopes[h - 1])}", h) for h in range(1, N_HEADS + 1)],
            value=head,
            description="ALiBi head",
        ),
    }
    _sync(controls)
    limits = _curve_limits(X, W_Q, W_K)

    return Lab(
        controls,
        partial(_make_view, limits=limits),
        partial(update_positions_view, X=X, W_Q=W_Q, W_K=W_K),
        figsize=(10.0, 3.4),
        dpi=72,
        title="Positions lab: how word order enters the score",
        caption=positions_caption,
        present=present,
        sync_controls=_sync,
    )
