r"""The tiling lab: step through tiled (FlashAttention-style) attention one tile at a time.

Left, the (T, T) score matrix of a small example cut into ``block_size x block_size`` tiles: the
tiles already processed in colour, the current one outlined, the ones still to come faded, the
causally masked pairs grey. Middle, a table of the running maximum ``m``, running normaliser
``l`` and rescale factor :math:`e^{m_{old} - m_{new}}` for each query row of the current tile,
and how far its partial output still is from the exact one. Right, the outputs drawn as points
(``d_v = 2``): each query row's partial output ``acc / l`` after each key block, walking to the
exact output (open circle) among the value vectors.

The numbers come from :func:`tiling_state`, a plain function built on
:func:`attnlib.tiling.tiled_attention_steps`; :func:`update_tiling_view` puts them on the artists.
Both run without a browser, which is how the tests drive the lab.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import Normalize, to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator
from numpy.typing import ArrayLike

from .._validation import check_int
from ..attention import check_qkv, scaled_dot_product_attention
from ..examples import tiling_example
from ..liveview import Lab
from ..masks import causal_mask
from ..pictures.cell_mesh import cell_mesh, set_cell_colours
from ..pictures.colours import GROUP_COLOURS
from ..tiling import TileStep, tiled_attention_steps

__all__ = [
    "BLOCK_SIZES",
    "TilingSchedule",
    "TilingState",
    "tiling_example",
    "tiling_lab",
    "state_at_step",
    "tiling_schedule",
    "tiling_state",
    "update_tiling_view",
]

#: The block sizes the lab offers (each divides the example's T = 12).
BLOCK_SIZES: tuple[int, ...] = (2, 3, 4, 6)

_CMAP = colormaps["RdBu_r"]
_MASKED_RGBA = (0.80, 0.80, 0.80, 1.0)
#: Where a value's label may sit, tried in this order: (x, y) offset from its point in points
#: and the alignment that puts the label up-right, up-left, down-right or down-left of it.
_LABEL_PLACES = (
    (3, 2, "left", "baseline"),
    (-3, 2, "right", "baseline"),
    (3, -2, "left", "top"),
    (-3, -2, "right", "top"),
)
#: The font size of every text in the picture, in points: 10 px at the notebook size's 72 pixels
#: per inch (7 px, the size before, did not read); 19 px at present size (above its 18.7 floor).
_SMALL = 10
#: One colour per query row of a tile: the colour-blind-safe sequence of attnlib.pictures.colours.
_ROW_COLOURS = np.array([to_rgba(c) for c in GROUP_COLOURS])


def _check_lab_qkv(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[np.ndarray, ...]:
    Q, K, V = check_qkv(Q, K, V)
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2 or Q.shape[0] != K.shape[0]:
        raise ValueError(
            "the tiling lab needs self-attention without a batch: Q and K of shape (T, d_k),"
            f" V of shape (T, d_v); got Q shape {Q.shape}, K shape {K.shape}, V shape {V.shape}"
        )
    return Q, K, V


class TilingSchedule(NamedTuple):
    """Everything about one block size and mask that does not depend on the step shown."""

    block_size: int
    causal: bool
    #: The whole schedule of :func:`attnlib.tiling.tiled_attention_steps`, one entry a tile.
    steps: list[TileStep]
    #: (T, T) scaled scores, -inf where masked.
    scores: np.ndarray
    #: (T, d_v) plain attention's output.
    exact: np.ndarray
    #: (T,) each row's true maximum score.
    row_max: np.ndarray
    #: (T,) each row's softmax normaliser, ``sum(exp(s - row_max))``.
    row_l: np.ndarray


class TilingState(NamedTuple):
    """What the tiling lab shows after some tiles: the lab's state (numbers only)."""

    schedule: TilingSchedule
    #: How many tiles the schedule has.
    n_steps: int
    #: The tile shown, counted from 1 (at most ``n_steps``).
    step: int
    #: The tile shown.
    current: TileStep
    #: (T, T) bool: the pairs in a tile done so far.
    processed: np.ndarray
    #: (k + 1, n_rows, d_v): the current rows' partial outputs after each key block so far.
    paths: np.ndarray
    #: (n_rows,) the largest |partial output - exact output| of each current row.
    errors: np.ndarray
    #: (n_rows,) bool: the row's maximum rose at this tile (rescale < 1, not a first tile).
    grew: np.ndarray
    #: (n_rows,) the current rows' running maximum, normaliser and rescale factor.
    m: np.ndarray
    l: np.ndarray
    rescale: np.ndarray
    #: (T,) every row's running maximum and normaliser so far (final for finished query blocks,
    #: NaN for those not started).
    m_rows: np.ndarray
    l_rows: np.ndarray
    #: The caption's two lines (set by :func:`update_tiling_view`; empty before).
    heading: str = ""
    detail: str = ""


def tiling_schedule(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, block_size: int = 4, causal: bool = False
) -> TilingSchedule:
    """Everything about one block size and mask that does not depend on the step shown.

    Parameters
    ----------
    Q, K : array_like, shape (T, d_k)
    V : array_like, shape (T, d_v)
    block_size : int, default 4
    causal : bool, default False

    Returns
    -------
    TilingSchedule
    """
    Q, K, V = _check_lab_qkv(Q, K, V)
    block_size = check_int(block_size, "block_size")
    steps = list(tiled_attention_steps(Q, K, V, block_size=block_size, causal=causal))
    mask = causal_mask(Q.shape[0]) if causal else None
    exact, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    if causal:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1)
    row_l = np.exp(scores - row_max[:, None]).sum(axis=-1)
    return TilingSchedule(block_size, bool(causal), steps, scores, exact, row_max, row_l)


def state_at_step(schedule: TilingSchedule, step: int) -> TilingState:
    """What the lab shows after ``step`` tiles of a :func:`tiling_schedule` (numbers only).

    Parameters
    ----------
    schedule : TilingSchedule
    step : int
        How many tiles have been processed, counted from 1. Values above the number of tiles
        show the last tile (the lab's step slider can briefly point past the end while the
        block size changes).

    Returns
    -------
    TilingState
    """
    step = check_int(step, "step")
    steps, exact = schedule.steps, schedule.exact
    T = exact.shape[0]
    shown = min(step, len(steps))
    current = steps[shown - 1]
    processed = np.zeros((T, T), dtype=bool)
    m_rows = np.full(T, np.nan)
    l_rows = np.full(T, np.nan)
    for done in steps[:shown]:
        processed[done.rows, done.cols] = True
        m_rows[done.rows], l_rows[done.rows] = done.m[:, 0], done.l[:, 0]
    paths = np.stack([s.output for s in steps[:shown] if s.q_block == current.q_block])
    return TilingState(
        schedule=schedule,
        n_steps=len(steps),
        step=shown,
        current=current,
        processed=processed,
        paths=paths,
        errors=np.abs(current.output - exact[current.rows]).max(axis=-1),
        grew=(current.rescale[:, 0] < 1) & (current.k_block > 0),
        m=current.m[:, 0],
        l=current.l[:, 0],
        rescale=current.rescale[:, 0],
        m_rows=m_rows,
        l_rows=l_rows,
    )


def tiling_state(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    block_size: int = 4,
    step: int = 1,
    causal: bool = False,
) -> TilingState:
    """Everything the lab shows after ``step`` tiles of tiled attention (numbers, no widgets):
    ``state_at_step(tiling_schedule(Q, K, V, block_size, causal), step)``."""
    return state_at_step(tiling_schedule(Q, K, V, block_size, causal), step)


def _make_view(
    figure: Figure, V: np.ndarray, limits: dict[str, Any]
) -> tuple[dict[str, Any], list[Artist]]:
    """Build the four panels once; return the artists an update changes.

    ``limits`` holds the fixed axis ranges: ``score`` (largest |score|), ``l`` (largest l) and
    ``extent`` (``[[x_min, y_min], [x_max, y_max]]`` of every point the outputs panel can show:
    the values and every partial and exact output).
    """
    T = V.shape[0]
    ax_s = figure.add_axes((0.055, 0.15, 0.24, 0.68))
    ax_m = figure.add_axes((0.335, 0.15, 0.135, 0.68))
    ax_l = figure.add_axes((0.51, 0.15, 0.13, 0.68))
    ax_o = figure.add_axes((0.72, 0.15, 0.26, 0.68))
    for ax in (ax_s, ax_m, ax_l):
        ax.set_ylim(T - 0.5, -0.5)
        ax.set_yticks(range(0, T, 2))
        ax.tick_params(labelsize=_SMALL)
    ax_s.set_ylabel("query", fontsize=_SMALL, labelpad=2)

    image = cell_mesh(ax_s, T)
    ax_s.set_xticks(range(0, T, 2))
    ax_s.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax_s.set_title("key", fontsize=_SMALL, pad=16)
    ax_s.set_xlabel(
        "scores (red high, blue low);\ndone in colour, to come faded",
        fontsize=_SMALL,
        color="dimgray",
    )
    grid = LineCollection([], colors="0.3", linewidths=1.0)
    ax_s.add_collection(grid)
    box = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.5)
    ax_s.add_patch(box)
    ax_s.set_aspect("equal")

    # Running maximum: every score seen so far (grey dots), m (bar), the row's true max (circle).
    limit = limits["score"]
    ax_m.set_xlim(-1.08 * limit, 1.08 * limit)
    ax_m.axvline(0, color="lightgray", linewidth=0.8, zorder=0)
    ax_m.set_title("m: running max\n| = m, o = the row's max", fontsize=_SMALL)
    ax_m.set_xlabel("score", fontsize=_SMALL)
    (seen_scores,) = ax_m.plot([], [], "|", color="silver", markersize=7)
    (m_marks,) = ax_m.plot([], [], "|", color="black", markersize=13, mew=2.5)
    (row_max,) = ax_m.plot([], [], "o", mfc="none", mec="crimson", markersize=8, mew=1.3)

    # Running normaliser: one bar per query row; finished rows keep their final l in grey.
    ax_l.set_xlim(0, 1.08 * limits["l"])
    ax_l.set_title("l: running normaliser\n(red edge: just rescaled)", fontsize=_SMALL)
    ax_l.set_xlabel("sum of exp(score - m)", fontsize=_SMALL)
    l_bars = PolyCollection([], linewidths=2)
    ax_l.add_collection(l_bars)

    lo, hi = limits["extent"]
    pad = 0.08 * (hi - lo).max() + 1e-9
    ax_o.set_xlim(lo[0] - pad, hi[0] + pad)
    ax_o.set_ylim(lo[1] - pad, hi[1] + pad)
    ax_o.scatter(V[:, 0], V[:, 1], s=14, color="lightgray", zorder=1)
    panel_pt = ax_o.get_position().size * figure.get_size_inches() * 72
    at = (V - (lo - pad)) / (hi - lo + 2 * pad) * panel_pt  # each value's point, in points
    for j, place in enumerate(_value_label_places(at, panel_pt)):
        dx, dy, ha, va = _LABEL_PLACES[place]
        ax_o.annotate(
            str(j),
            tuple(V[j]),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=_SMALL,
            color="gray",
        )
    ax_o.tick_params(labelsize=_SMALL)
    # At most five ticks an axis: nine (every 0.2) ran together at projector size.
    ax_o.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax_o.yaxis.set_major_locator(MaxNLocator(nbins=5))
    ax_o.set_xlabel("output coordinate 1", fontsize=_SMALL)
    ax_o.set_ylabel("output coordinate 2", fontsize=_SMALL, labelpad=1)
    ax_o.set_title(
        "outputs: acc / l after each key block\n(o = exact; grey = values)", fontsize=_SMALL
    )
    (seen_values,) = ax_o.plot([], [], "o", color="dimgray", markersize=4)
    paths = LineCollection([], linewidths=1.2)
    ax_o.add_collection(paths)
    dots = ax_o.scatter(np.zeros(0), np.zeros(0))  # acc / l after each key block; last one big
    targets = ax_o.scatter(np.zeros(0), np.zeros(0), s=120, facecolors="none", linewidths=1.6)

    view = {
        "T": T,
        "V": V,
        "norm": Normalize(-limit, limit),
        "image": image,
        "grid": grid,
        "box": box,
        "seen_scores": seen_scores,
        "m_marks": m_marks,
        "row_max": row_max,
        "l_bars": l_bars,
        "seen_values": seen_values,
        "paths": paths,
        "dots": dots,
        "targets": targets,
    }
    animated = [
        image, grid, box, seen_scores, m_marks, row_max, l_bars,
        seen_values, paths, dots, targets,
    ]  # fmt: skip
    return view, animated


def _value_label_places(at: np.ndarray, panel: np.ndarray) -> list[int]:
    """For each point, the first of :data:`_LABEL_PLACES` where its label fits: inside the panel,
    on no other point and on no label placed before it (the first place if none fits).

    ``at`` (n, 2): the points, in points from the panel's lower left corner; ``panel`` (2,): its
    width and height in points. Label boxes are estimated for digits at ``_SMALL`` points,
    with a little room around them.
    """
    size, room, dot = _SMALL, 1.5, 3.0  # font size, space kept around a label, a point's radius

    def box(j: int, place: int) -> tuple[float, float, float, float]:
        dx, dy, ha, va = _LABEL_PLACES[place]
        width, height = 0.62 * size * len(str(j)), 0.75 * size
        x0 = at[j, 0] + dx - (width if ha == "right" else 0)
        y0 = at[j, 1] + dy - (height if va == "top" else 0)
        return x0 - room, y0 - room, x0 + width + room, y0 + height + room

    def fits(j: int, b: tuple[float, float, float, float], placed: list) -> bool:
        inside = b[0] >= 0 and b[1] >= 0 and b[2] <= panel[0] and b[3] <= panel[1]
        others = np.delete(at, j, axis=0)
        on_point = (
            (others[:, 0] > b[0] - dot)
            & (others[:, 0] < b[2] + dot)
            & (others[:, 1] > b[1] - dot)
            & (others[:, 1] < b[3] + dot)
        ).any()
        on_label = any(b[0] < c[2] and c[0] < b[2] and b[1] < c[3] and c[1] < b[3] for c in placed)
        return inside and not on_point and not on_label

    places: list[int] = []
    placed: list[tuple[float, float, float, float]] = []
    for j in range(len(at)):
        place = next((k for k in range(len(_LABEL_PLACES)) if fits(j, box(j, k), placed)), 0)
        places.append(place)
        placed.append(box(j, place))
    return places


def _grid_segments(T: int, block_size: int) -> list[list[tuple[float, float]]]:
    edges = [b - 0.5 for b in range(block_size, T, block_size)]
    return [[(e, -0.5), (e, T - 0.5)] for e in edges] + [[(-0.5, e), (T - 0.5, e)] for e in edges]


def _describe(state: TilingState) -> tuple[str, str]:
    current = state.current
    n_k = sum(1 for s in state.schedule.steps if s.q_block == current.q_block)
    heading = (
        f"tile {state.step} of {state.n_steps}: queries {current.rows.start}–"
        f"{current.rows.stop - 1} × keys {current.cols.start}–{current.cols.stop - 1}"
        f" (key block {current.k_block + 1} of {n_k} for these queries)"
    )
    n_rows = current.rows.stop - current.rows.start
    if current.last:
        detail = (
            f"last key block: acc / l is the exact output (largest difference"
            f" {state.errors.max():.0e})"
        )
    elif current.k_block == 0:
        detail = "first key block: m, l and acc start from this tile alone"
    else:
        n_grew = int(state.grew.sum())
        detail = (
            f"the maximum grew in {n_grew} of {n_rows} rows: their l and acc are rescaled"
            if n_grew
            else "no row's maximum grew: l and acc just add this tile's terms"
        )
    return heading, detail


def update_tiling_view(
    view: dict[str, Any], *, schedules: dict, block_size: int, step: int, causal: bool
) -> TilingState:
    """Put :func:`state_at_step` of the schedule of ``block_size`` and ``causal`` on the view's
    artists, in place.

    ``schedules`` maps ``(block_size, causal)`` to a :func:`tiling_schedule`.

    Returns
    -------
    TilingState
        :func:`state_at_step`'s, with ``heading`` and ``detail`` (the caption's lines) set.
    """
    state = state_at_step(schedules[block_size, bool(causal)], step)
    current = state.current
    scores, processed = state.schedule.scores, state.processed
    rows = np.arange(current.rows.start, current.rows.stop)
    colours = _ROW_COLOURS[np.arange(rows.size) % len(_ROW_COLOURS)]

    rgba = _CMAP(view["norm"](np.where(np.isfinite(scores), scores, 0.0)))
    rgba[~processed, :3] = 0.25 * rgba[~processed, :3] + 0.75  # tiles still to come: faded
    rgba[~np.isfinite(scores)] = _MASKED_RGBA
    set_cell_colours(view["image"], rgba)
    view["grid"].set_segments(_grid_segments(view["T"], state.schedule.block_size))
    view["box"].set_bounds(
        current.cols.start - 0.5, rows[0] - 0.5, current.cols.stop - current.cols.start, rows.size
    )

    seen = scores[rows, : current.cols.stop]
    r_idx, c_idx = np.nonzero(np.isfinite(seen))
    view["seen_scores"].set_data(seen[r_idx, c_idx], rows[r_idx])
    view["m_marks"].set_data(state.m, rows)
    view["row_max"].set_data(state.schedule.row_max[rows], rows)

    # Bars: the finished rows' final l in grey, the current rows' running l in their colours,
    # with a red edge where this tile rescaled them.
    widths = np.concatenate([state.l_rows[: rows[0]], state.l])
    ys = np.arange(widths.size)
    half = 0.35
    view["l_bars"].set_verts(
        [[(0, y - half), (w, y - half), (w, y + half), (0, y + half)] for y, w in zip(ys, widths)]
    )
    grey = np.tile(to_rgba("lightgray"), (rows[0], 1))
    faces = np.concatenate([grey, colours])
    view["l_bars"].set_facecolor(faces)
    edges = faces.copy()
    edges[rows[0] :][state.grew] = to_rgba("crimson")
    view["l_bars"].set_edgecolor(edges)

    values = view["V"][: current.cols.stop]
    view["seen_values"].set_data(values[:, 0], values[:, 1])
    paths = state.paths[:, :, :2]  # (n_key_blocks_so_far, n_rows, 2)
    view["paths"].set_segments([paths[:, k] for k in range(rows.size)])
    view["paths"].set_color(colours)
    view["dots"].set_offsets(paths.reshape(-1, 2))
    view["dots"].set_facecolors(np.tile(colours, (paths.shape[0], 1)))
    sizes = np.full(paths.shape[:2], 9.0)
    sizes[-1] = 40.0  # the current partial outputs
    view["dots"].set_sizes(sizes.ravel())
    view["targets"].set_offsets(state.schedule.exact[rows, :2])
    view["targets"].set_edgecolors(colours)

    heading, detail = _describe(state)
    return state._replace(heading=heading, detail=detail)


def tiling_lab(
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    V: ArrayLike | None = None,
    block_size: int = 4,
    step: int = 5,
    causal: bool = False,
    present: bool = False,
) -> Lab:
    """A live lab: step through tiled attention and watch the online softmax converge.

    Parameters
    ----------
    Q, K : array_like, shape (T, d_k), optional
    V : array_like, shape (T, d_v), optional
        Self-attention inputs, no batch; ``d_v = 2`` draws the outputs as points in the plane
        (larger ``d_v``: the first two coordinates). Default :func:`tiling_example` (T = 12).
        Give all three or none.
    block_size : int, default 4
        The first block size; one of :data:`BLOCK_SIZES`.
    step : int, default 5
        The first tile shown, from 1.
    causal : bool, default False
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.lab.Lab
        Controls ``block_size`` (buttons), ``step`` (slider, its maximum follows the number of
        tiles) and ``causal`` (checkbox); ``lab.state`` is :func:`update_tiling_view`'s result.
    """
    given = [x is not None for x in (Q, K, V)]
    if any(given) and not all(given):
        raise ValueError("give all of Q, K and V, or none of them for the built-in example")
    Q, K, V = _check_lab_qkv(*(tiling_example() if Q is None else (Q, K, V)))
    if V.shape[1] < 2:
        raise ValueError(f"the lab draws outputs in the plane: V needs d_v >= 2; got {V.shape}")
    if block_size not in BLOCK_SIZES:
        raise ValueError(f"block_size must be one of {BLOCK_SIZES}; got {block_size!r}")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False; got {causal!r}")
    step = check_int(step, "step")

    # Every schedule the controls can ask for, computed once (a few ms): updates only draw.
    schedules = {
        (b, c): tiling_schedule(Q, K, V, block_size=b, causal=c)
        for b in BLOCK_SIZES
        for c in (False, True)
    }

    def n_steps(block: int, is_causal: bool) -> int:
        return len(schedules[block, bool(is_causal)].steps)

    def follow(controls: dict) -> None:
        """The lab's ``sync_controls``: more or fewer tiles, the step slider's end follows
        (ipywidgets clamps its value)."""
        controls["step"].max = n_steps(controls["block_size"].value, controls["causal"].value)

    controls = {
        "block_size": widgets.ToggleButtons(
            options=list(BLOCK_SIZES), value=block_size, description="block size"
        ),
        "step": widgets.IntSlider(
            value=min(step, n_steps(block_size, causal)),
            min=1,
            max=n_steps(block_size, causal),
            description="tiles done",
        ),
        "causal": widgets.Checkbox(value=bool(causal), description="causal mask"),
    }
    every_tile = [tile for sched in schedules.values() for tile in sched.steps]
    # The outputs panel shows every value and every output any setting can draw (outputs are
    # weighted averages of the values, so in practice the values' extent), fixed for the lab.
    points = np.concatenate([V[:, :2], *(tile.output[:, :2] for tile in every_tile)])
    limits = {
        "score": float(np.abs(Q @ K.T).max() / np.sqrt(Q.shape[1])),
        "l": float(max(tile.l.max() for tile in every_tile)),
        "extent": np.stack([points.min(axis=0), points.max(axis=0)]),
    }

    lab = Lab(
        controls,
        partial(_make_view, V=V[:, :2], limits=limits),
        partial(update_tiling_view, schedules=schedules),
        figsize=(10.5, 3.7),
        dpi=72,
        title="Tiling lab: tiled attention, one tile at a time",
        caption=lambda state: f"{state.heading}\n{state.detail}",
        present=present,
        sync_controls=follow,
    )
    return lab
