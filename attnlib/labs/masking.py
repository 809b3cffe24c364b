"""The masking lab: choose a query token and a mask, and watch the attention weights follow.

Left, the (T, T) weight matrix of a sentence, with masked cells greyed out and the chosen query's
row outlined; right, that row as bars, one per key, with its weights written above them. The
controls are the query token, the mask type and the true length of the sentence for the padding
masks (disabled, and ignored, for the other types). Padded positions are labelled ``<pad>``.

One mask type is the wrong way on purpose: "zero after softmax (wrong)" takes the ordinary softmax
of every score and only then zeroes the future weights. The hatched bars show the weight the
future keys took: they sat in the softmax's denominator, so the kept weights are too small, the
row no longer sums to 1, and changing a future key would change the past.

The numbers come from :func:`masking_weights`, a plain function; :func:`update_masking_view`
puts them on the figure's artists in place. Both run without a browser, which is how the tests
drive the lab. The live figure is the shared machinery of :mod:`attnlib.liveview.lab`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_finite, check_int
from ..examples import MASKING_SENTENCE as SENTENCE
from ..examples import masking_scores as sentence_scores
from ..liveview import Lab, TextLabels, heading_and_detail
from ..masks import causal_mask, padding_mask
from ..pictures.cell_mesh import cell_mesh, set_cell_colours, weight_colorbar
from ..pictures.heatmap import attention_axes, token_ticks
from ..softmax import softmax

__all__ = [
    "MASK_TYPES",
    "PAD",
    "SENTENCE",
    "WRONG",
    "masking_lab",
    "masking_weights",
    "position_labels",
    "sentence_scores",
    "update_masking_view",
]

#: The mask type that zeroes the future weights after the softmax: the wrong way, shown on purpose.
WRONG = "zero after softmax (wrong)"

#: The mask types the lab offers, in the order of its buttons.
MASK_TYPES: tuple[str, ...] = ("none", "causal", WRONG, "padding", "causal + padding")

#: The label of a padded position.
PAD = "<pad>"

_ALLOWED = "#1f77b4"
_WRONG_KEPT = "#d62728"
_MASKED = "#c7c7c7"
_MASKED_RGBA = (0.78, 0.78, 0.78, 1.0)
_CMAP = colormaps["Blues"]


def _check_scores(scores: ArrayLike) -> np.ndarray:
    s = as_float_array(scores, "scores")
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(
            f"scores must be a square (T, T) matrix of self-attention scores; got shape {s.shape}"
        )
    check_finite(s, "scores")
    return s


def masking_weights(
    scores: ArrayLike, mask_type: str = "causal", length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The mask of the chosen type and the attention weights it gives.

    Parameters
    ----------
    scores : array_like, shape (T, T)
        Self-attention scores (already scaled), row = query, column = key.
    mask_type : {"none", "causal", "zero after softmax (wrong)", "padding", "causal + padding"}
        Which keys each query may attend to. The padding masks hide the keys at positions
        ``>= length`` from every query (a key padding mask, as ``attnlib.padding_mask``).
        "zero after softmax (wrong)" has the causal mask but applies it the wrong way: softmax
        over *all* keys first, then the future weights set to 0.
    length : int, optional
        True length of the sentence, ``1 <= length <= T``; used, and required, only by the
        padding types. Ignored by the others.

    Returns
    -------
    mask : ndarray of bool, shape (T, T)
        True = this query may attend to this key.
    weights : ndarray, shape (T, T)
        Masked keys get exactly 0. For every type but the wrong one, the ``softmax`` of the
        scores with the masked ones excluded: every row sums to 1 (every query keeps at least
        key 0). For the wrong one, ``softmax(scores) * mask``: each row sums to less than 1 by
        the weight its future keys took, and depends on those keys' scores.
    """
    s = _check_scores(scores)
    T = s.shape[0]
    if mask_type not in MASK_TYPES:
        raise ValueError(f"mask_type must be one of {MASK_TYPES}; got {mask_type!r}")
    mask = np.ones((T, T), dtype=bool)
    if "causal" in mask_type or mask_type == WRONG:
        mask &= causal_mask(T)
    if "padding" in mask_type:
        if length is None:
            raise ValueError(f"mask_type={mask_type!r} needs the sentence length; got length=None")
        length = check_int(length, "length")
        if length > T:
            raise ValueError(f"length must be <= T={T} (the number of tokens); got length={length}")
        mask &= padding_mask([length], T)[0]
    if mask_type == WRONG:
        return mask, np.where(mask, softmax(s, axis=-1), 0.0)
    return mask, softmax(s, axis=-1, mask=mask)


def position_labels(tokens: Sequence[str], mask_type: str, length: int | None) -> tuple[str, ...]:
    """The label of each position: its token, or ``"<pad>"`` past ``length`` for padding types.

    Parameters
    ----------
    tokens : sequence of str, length T
    mask_type : str
        One of :data:`MASK_TYPES`; only the padding types pad.
    length : int or None
        True length of the sentence (ignored unless ``mask_type`` pads).

    Returns
    -------
    tuple of str, length T
    """
    if "padding" not in mask_type or length is None:
        return tuple(tokens)
    return tuple(tok if j < length else PAD for j, tok in enumerate(tokens))


def _make_view(figure: Figure, tokens: Sequence[str]) -> tuple[dict[str, Any], list[Artist]]:
    """Build the two panels once; return the artists an update changes.

    ``view["image"]`` is the weight matrix (a QuadMesh: its face colours, row by row, are the
    cells), ``view["values"]`` the numbers above the bars (:class:`TextLabels`).
    """
    T = len(tokens)
    ax_map = figure.add_axes((0.09, 0.053, 0.36, 0.704))
    ax_bar = figure.add_axes((0.55, 0.211, 0.43, 0.642))

    image = cell_mesh(ax_map, T)  # weights through the colormap, masked cells painted grey
    attention_axes(ax_map)
    row_box = Rectangle((-0.5, -0.5), T, 1, fill=False, edgecolor="crimson", linewidth=2.5)
    ax_map.add_patch(row_box)
    weight_colorbar(figure, ax_map, _CMAP)

    bars = ax_bar.bar(range(T), np.zeros(T), color=_ALLOWED, width=0.75)
    ghosts = ax_bar.bar(
        range(T), np.zeros(T), width=0.75, fill=False, hatch="///", edgecolor=_WRONG_KEPT, lw=1
    )
    for ghost in ghosts:
        ghost.set_visible(False)
    ax_bar.set_xlim(-0.6, T - 0.4)
    ax_bar.set_ylim(0, 1.12)
    ax_bar.set_ylabel("weight")
    ax_bar.set_title("the outlined row: weight on each key (x = masked)", fontsize=10)
    ax_bar.grid(axis="y", alpha=0.3)
    legend = ax_bar.legend(
        [Rectangle((0, 0), 1, 1, fill=False, hatch="///", edgecolor=_WRONG_KEPT)],
        ["weight the future keys took (still in the denominator)"],
        loc="upper left",
        fontsize=10,
        frameon=False,
    )
    values = TextLabels(ax_bar, T, fontsize=10)
    (crosses,) = ax_bar.plot(
        [], [], linestyle="none", marker="x", markersize=9, markeredgewidth=2, color="dimgray"
    )

    view = {
        "tokens": tuple(tokens),
        "labels": None,
        "ax_map": ax_map,
        "ax_bar": ax_bar,
        "legend": legend,
        "image": image,
        "row_box": row_box,
        "bars": list(bars),
        "ghosts": list(ghosts),
        "values": values,
        "crosses": crosses,
    }
    _set_labels(view, tuple(tokens))
    animated = [image, row_box, *bars, *ghosts, values.collection, crosses]
    return view, animated


def _set_labels(view: dict[str, Any], labels: tuple[str, ...]) -> None:
    """Name the positions on both panels (static artists: the lab caches a background per set)."""
    if labels == view["labels"]:
        return
    T = len(labels)
    token_ticks(view["ax_map"], labels)
    view["ax_bar"].set_xticks(
        range(T), labels, rotation=40, ha="right", rotation_mode="anchor", fontsize=10
    )
    view["labels"] = labels


def update_masking_view(
    view: dict[str, Any], *, scores: np.ndarray, query: int, mask_type: str, length: int
) -> dict[str, Any]:
    """Put the weights for these control values on the view's artists, in place.

    Parameters
    ----------
    view : dict
        What ``_make_view`` built.
    scores : ndarray, shape (T, T)
    query : int
        The chosen query token, ``0 <= query < T``.
    mask_type : str
        One of :data:`MASK_TYPES`.
    length : int
        The padding length; ignored unless ``mask_type`` contains "padding".

    Returns
    -------
    dict
        The numbers drawn: ``mask`` (T, T), ``weights`` (T, T), ``row`` (T,), ``row_sum``,
        ``future_share`` (T,) (the weight the future keys took in the wrong mode; 0 otherwise),
        ``labels`` (T,), ``query``, ``mask_type``, ``length`` (None when ignored), and the
        caption's two lines ``heading`` and ``detail``.
    """
    T = len(view["tokens"])
    query = check_int(query, "query", minimum=0)
    if query >= T:
        raise ValueError(f"query must be a token position in [0, {T - 1}]; got query={query}")
    padded = "padding" in mask_type
    wrong = mask_type == WRONG
    used_length = length if padded else None
    mask, weights = masking_weights(scores, mask_type, used_length)
    row = weights[query]
    labels = position_labels(view["tokens"], mask_type, used_length)
    _set_labels(view, labels)
    view["legend"].set_visible(wrong)
    # What the future took: the full softmax's weight on the masked keys (wrong mode only).
    taken = np.where(mask, 0.0, softmax(scores, axis=-1)) if wrong else np.zeros((T, T))

    rgba = _CMAP(weights)
    rgba[~mask] = _MASKED_RGBA
    set_cell_colours(view["image"], rgba)
    view["row_box"].set_y(query - 0.5)
    kept_colour = _WRONG_KEPT if wrong else _ALLOWED
    for j, (bar, ghost) in enumerate(zip(view["bars"], view["ghosts"])):
        bar.set_height(row[j])
        bar.set_color(kept_colour if mask[query, j] else _MASKED)
        ghost.set_height(taken[query, j])
        ghost.set_visible(bool(taken[query, j] > 0))
    view["values"].set(
        [f"{w:.2f}" if allowed else "" for w, allowed in zip(row, mask[query])],
        np.column_stack([np.arange(T), row + 0.02]),
    )
    masked_keys = np.flatnonzero(~mask[query])
    view["crosses"].set_data(masked_keys, np.full(masked_keys.size, 0.04))

    n_seen = int(mask[query].sum())
    row_sum = float(row.sum())
    heading = f"{labels[query]!r} attends to {n_seen} of {T} keys; row sum {row_sum:.4f}"
    if wrong:
        detail = (
            f"wrong: the future keys took {taken[query].sum():.4f} of the softmax before being"
            " zeroed; they are still in its denominator, so the future changes these weights"
        )
    elif padded and query >= used_length:
        detail = "a padded query: its output is discarded"
    elif padded:
        detail = f"keys {used_length} to {T - 1} are padding"
    elif mask_type == "causal":
        detail = "no key after the query"
    else:
        detail = "every key is allowed"
    return {
        "mask": mask,
        "weights": weights,
        "row": row,
        "row_sum": row_sum,
        "future_share": taken.sum(axis=-1),
        "labels": labels,
        "query": query,
        "mask_type": mask_type,
        "length": used_length,
        "heading": heading,
        "detail": detail,
    }


def _query_labels_follower(tokens: Sequence[str]) -> Callable[[dict], None]:
    """The masking lab's ``sync_controls``: the query slider names padded positions ``<pad>``."""

    def sync_query_labels(controls: dict) -> None:
        query, mask_type = controls["query"], controls["mask_type"].value
        labels = position_labels(tokens, mask_type, controls["length"].value)
        options = tuple((f"{i}: {label}", i) for i, label in enumerate(labels))
        if tuple(query.options) != options:
            keep = query.value
            with query.hold_sync():  # one message: the browser never sees the reset index 0
                query.options = options
                query.value = keep

    return sync_query_labels


def masking_lab(
    scores: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    query: int = 6,
    mask_type: str = "causal",
    length: int = 6,
    present: bool = False,
) -> Lab:
    """A live lab: pick a query token and a mask; the weight matrix and the query's row follow.

    Parameters
    ----------
    scores : array_like, shape (T, T), optional
        Scaled self-attention scores; default :func:`sentence_scores` (notebook 06's numbers).
    tokens : sequence of str, optional
        One label per position, length T; default :data:`SENTENCE`.
    query : int, default 6
        The query token shown first ("it").
    mask_type : str, default "causal"
        One of :data:`MASK_TYPES`.
    length : int, default 6
        The first padding length (used by the padding types; the slider is disabled otherwise).
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.lab.Lab
        An ipywidgets VBox: controls ``query``, ``mask_type``, ``length``; ``lab.state`` holds
        the numbers on show (see :func:`update_masking_view`), ``lab.caption`` their two lines.
    """
    s = sentence_scores() if scores is None else _check_scores(scores)
    labels = SENTENCE if tokens is None else tuple(str(t) for t in tokens)
    T = s.shape[0]
    if len(labels) != T:
        raise ValueError(f"tokens has {len(labels)} labels but scores shape {s.shape} needs {T}")
    query = check_int(query, "query", minimum=0)
    if query >= T:
        raise ValueError(f"query must be a token position in [0, {T - 1}]; got query={query}")
    if mask_type not in MASK_TYPES:
        raise ValueError(f"mask_type must be one of {MASK_TYPES}; got {mask_type!r}")
    length = check_int(length, "length")
    if length > T:
        raise ValueError(f"length must be <= T={T} (the number of tokens); got length={length}")

    shown = position_labels(labels, mask_type, length)
    controls = {
        "query": widgets.SelectionSlider(
            options=[(f"{i}: {label}", i) for i, label in enumerate(shown)],
            value=query,
            description="query token",
        ),
        "mask_type": widgets.ToggleButtons(
            options=list(MASK_TYPES), value=mask_type, description="mask"
        ),
        "length": widgets.IntSlider(
            value=length,
            min=1,
            max=T,
            description="sentence length",
            disabled="padding" not in mask_type,
        ),
    }

    def static_key(*, query: int, mask_type: str, length: int) -> tuple:
        return position_labels(labels, mask_type, length), mask_type == WRONG

    lab = Lab(
        controls,
        partial(_make_view, tokens=labels),
        partial(update_masking_view, scores=s),
        figsize=(10.0, 3.7),
        dpi=72,
        title="Masking lab: which keys may each query attend to?",
        caption=heading_and_detail,
        static_key=static_key,
        present=present,
        sync_controls=_query_labels_follower(labels),
    )

    def follow_mask_type(change: dict) -> None:
        controls["length"].disabled = "padding" not in change["new"]

    controls["mask_type"].observe(follow_mask_type, names="value")
    return lab
