"""The masking lab: choose a query token and a mask, and watch the attention weights follow.

Left, the (T, T) weight matrix of a sentence, with masked cells greyed out and the chosen query's
row outlined; right, that row as bars, one per key, with its weights written above them. The
controls are the query token, the mask type (none, causal, padding, causal + padding) and the
true length of the sentence for the padding masks (disabled, and ignored, for the other types).

The numbers come from :func:`masking_weights`, a plain function; :func:`update_masking_view`
puts them on the figure's artists in place. Both run without a browser, which is how the tests
drive the lab. The live figure is the shared machinery of :mod:`attnlib.widgets.live`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_finite, check_int
from ..masks import causal_mask, padding_mask
from ..softmax import softmax
from .live import Lab, slider_style

__all__ = [
    "MASK_TYPES",
    "SENTENCE",
    "masking_lab",
    "masking_weights",
    "sentence_scores",
    "update_masking_view",
]

#: The mask types the lab offers, in the order of its buttons.
MASK_TYPES: tuple[str, ...] = ("none", "causal", "padding", "causal + padding")

#: The sentence of seed 003, one token per word.
SENTENCE: tuple[str, ...] = (
    "The",
    "animal",
    "crossed",
    "the",
    "road",
    "because",
    "it",
    "was",
    "tired",
)

_ALLOWED = "#1f77b4"
_MASKED = "#c7c7c7"
_MASKED_RGBA = (0.78, 0.78, 0.78, 1.0)
_CMAP = colormaps["Blues"]


def sentence_scores(seed: int = 6, d_model: int = 8, d_k: int = 4) -> np.ndarray:
    """Scaled scores ``Q K^T / sqrt(d_k)`` of :data:`SENTENCE`, made as notebook 06 makes them.

    ``rng = np.random.default_rng(seed)``; ``X = rng.normal(size=(T, d_model))``; then
    ``W_Q`` and ``W_K`` (in that order, each ``rng.normal(size=(d_model, d_k)) / sqrt(d_model)``);
    ``Q = X W_Q``, ``K = X W_K``.

    Returns
    -------
    ndarray, shape (T, T)
        Row i holds query i's scores against every key; T = 9.
    """
    seed = check_int(seed, "seed", minimum=0)
    d_model = check_int(d_model, "d_model")
    d_k = check_int(d_k, "d_k")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(len(SENTENCE), d_model))
    W_Q = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    W_K = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    return (X @ W_Q) @ (X @ W_K).T / np.sqrt(d_k)


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
    mask_type : {"none", "causal", "padding", "causal + padding"}
        Which keys each query may attend to. The padding masks hide the keys at positions
        ``>= length`` from every query (a key padding mask, as ``attnlib.padding_mask``).
    length : int, optional
        True length of the sentence, ``1 <= length <= T``; used, and required, only by the
        padding types. Ignored by "none" and "causal".

    Returns
    -------
    mask : ndarray of bool, shape (T, T)
        True = this query may attend to this key.
    weights : ndarray, shape (T, T)
        ``softmax`` of the scores with the masked ones excluded: masked keys get exactly 0 and
        every row sums to 1 (every query keeps at least key 0).
    """
    s = _check_scores(scores)
    T = s.shape[0]
    if mask_type not in MASK_TYPES:
        raise ValueError(f"mask_type must be one of {MASK_TYPES}; got {mask_type!r}")
    mask = np.ones((T, T), dtype=bool)
    if "causal" in mask_type:
        mask &= causal_mask(T)
    if "padding" in mask_type:
        if length is None:
            raise ValueError(f"mask_type={mask_type!r} needs the sentence length; got length=None")
        length = check_int(length, "length")
        if length > T:
            raise ValueError(f"length must be <= T={T} (the number of tokens); got length={length}")
        mask &= padding_mask([length], T)[0]
    return mask, softmax(s, axis=-1, mask=mask)


def _make_view(figure: Figure, tokens: Sequence[str]) -> tuple[dict[str, Any], list[Artist]]:
    """Build the two panels once; return the artists an update changes."""
    T = len(tokens)
    ax_map = figure.add_axes((0.09, 0.08, 0.36, 0.66))
    ax_bar = figure.add_axes((0.55, 0.22, 0.43, 0.52))

    # One RGBA image: weights through the colormap, masked cells painted grey (one artist to draw).
    image = ax_map.imshow(np.zeros((T, T, 4)), aspect="auto", interpolation="nearest")
    ax_map.set_xticks(range(T), tokens, rotation=60, ha="left", rotation_mode="anchor", fontsize=9)
    ax_map.set_yticks(range(T), tokens, fontsize=9)
    ax_map.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax_map.set_ylabel("query (attending)")
    row_box = Rectangle((-0.5, -0.5), T, 1, fill=False, edgecolor="crimson", linewidth=2.5)
    ax_map.add_patch(row_box)
    figure.colorbar(ScalarMappable(Normalize(0, 1), _CMAP), ax=ax_map, fraction=0.05, pad=0.02)

    bars = ax_bar.bar(range(T), np.zeros(T), color=_ALLOWED, width=0.75)
    ax_bar.set_xlim(-0.6, T - 0.4)
    ax_bar.set_ylim(0, 1.12)
    ax_bar.set_xticks(range(T), tokens, rotation=40, ha="right", rotation_mode="anchor", fontsize=9)
    ax_bar.set_ylabel("weight")
    ax_bar.set_title("the outlined row: weight on each key (x = masked)", fontsize=10)
    ax_bar.grid(axis="y", alpha=0.3)
    values = [ax_bar.text(j, 0, "", ha="center", va="bottom", fontsize=8) for j in range(T)]
    (crosses,) = ax_bar.plot(
        [], [], linestyle="none", marker="x", markersize=9, markeredgewidth=2, color="dimgray"
    )

    heading = figure.text(0.5, 0.965, " ", ha="center", va="top", fontsize=11)
    detail = figure.text(0.5, 0.905, " ", ha="center", va="top", fontsize=10, color="dimgray")

    view = {
        "tokens": tuple(tokens),
        "image": image,
        "row_box": row_box,
        "bars": list(bars),
        "values": values,
        "crosses": crosses,
        "heading": heading,
        "detail": detail,
    }
    animated = [image, row_box, *bars, *values, crosses, heading, detail]
    return view, animated


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
        ``query``, ``mask_type``, ``length`` (None when ignored), ``heading`` and ``detail``.
    """
    tokens = view["tokens"]
    T = len(tokens)
    query = check_int(query, "query", minimum=0)
    if query >= T:
        raise ValueError(f"query must be a token position in [0, {T - 1}]; got query={query}")
    padded = "padding" in mask_type
    used_length = length if padded else None
    mask, weights = masking_weights(scores, mask_type, used_length)
    row = weights[query]

    rgba = _CMAP(weights)
    rgba[~mask] = _MASKED_RGBA
    view["image"].set_data(rgba)
    view["row_box"].set_y(query - 0.5)
    for j, (bar, text) in enumerate(zip(view["bars"], view["values"])):
        bar.set_height(row[j])
        bar.set_color(_ALLOWED if mask[query, j] else _MASKED)
        text.set_position((j, row[j] + 0.01))
        text.set_text(f"{row[j]:.2f}" if mask[query, j] else "")
    masked_keys = np.flatnonzero(~mask[query])
    view["crosses"].set_data(masked_keys, np.full(masked_keys.size, 0.04))

    n_seen = int(mask[query].sum())
    heading = f"{tokens[query]!r} attends to {n_seen} of {T} keys; row sum {row.sum():.4f}"
    if padded and query >= used_length:
        detail = "a padded query: its output is discarded"
    elif padded:
        detail = f"keys {used_length} to {T - 1} are padding"
    elif mask_type == "causal":
        detail = "no key after the query"
    else:
        detail = "every key is allowed"
    view["heading"].set_text(heading)
    view["detail"].set_text(detail)
    return {
        "mask": mask,
        "weights": weights,
        "row": row,
        "row_sum": float(row.sum()),
        "query": query,
        "mask_type": mask_type,
        "length": used_length,
        "heading": heading,
        "detail": detail,
    }


def masking_lab(
    scores: ArrayLike | None = None,
    tokens: Sequence[str] | None = None,
    query: int = 6,
    mask_type: str = "causal",
    length: int = 6,
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

    Returns
    -------
    attnlib.widgets.live.Lab
        An ipywidgets VBox: controls ``query``, ``mask_type``, ``length``; ``lab.state`` holds
        the numbers on show (see :func:`update_masking_view`).
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

    controls = {
        "query": widgets.SelectionSlider(
            options=[(f"{i}: {tok}", i) for i, tok in enumerate(labels)],
            value=query,
            description="query token",
            style=slider_style(),
            layout=widgets.Layout(width="340px"),
        ),
        "mask_type": widgets.ToggleButtons(
            options=list(MASK_TYPES),
            value=mask_type,
            description="mask",
            style={"description_width": "initial", "button_width": "135px"},
        ),
        "length": widgets.IntSlider(
            value=length,
            min=1,
            max=T,
            description="padding: sentence length",
            style=slider_style(),
            disabled="padding" not in mask_type,
            layout=widgets.Layout(width="340px"),
        ),
    }

    def update_view(view: dict[str, Any], **values: Any) -> dict[str, Any]:
        return update_masking_view(view, scores=s, **values)

    lab = Lab(
        controls,
        lambda fig: _make_view(fig, labels),
        update_view,
        figsize=(10.0, 4.3),
        dpi=72,
        title="Masking lab: which keys may each query attend to?",
    )

    def follow_mask_type(change: dict) -> None:
        controls["length"].disabled = "padding" not in change["new"]

    controls["mask_type"].observe(follow_mask_type, names="value")
    return lab
