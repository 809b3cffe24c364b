"""A labelled heatmap of an attention weight (or score) matrix, and the dressing of its axes
(queries down the side, keys along the top) that the labs' matrices share."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.image import AxesImage
from matplotlib.text import Text
from numpy.typing import ArrayLike

from .._validation import as_float_array

__all__ = ["attention_axes", "attention_heatmap", "token_ticks"]


def attention_axes(ax: Axes) -> None:
    """Name the axes of a (query, key) matrix: queries down the side, keys along the top."""
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.xaxis.set_label_position("top")


def token_ticks(
    ax: Axes, labels: Sequence[str], rotation: float = 60, fontsize: float = 10
) -> None:
    """One tick per token on both axes of a square matrix, the top ones turned by ``rotation``."""
    ticks = range(len(labels))
    ax.set_xticks(
        ticks, labels, rotation=rotation, ha="left", rotation_mode="anchor", fontsize=fontsize
    )
    ax.set_yticks(ticks, labels, fontsize=fontsize)


def attention_heatmap(
    weights: ArrayLike,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = True,
    fmt: str = "{:.2f}",
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = "Blues",
) -> tuple[AxesImage, list[Text]]:
    """Draw a (T_q, T_k) matrix with queries as rows and keys as columns.

    Parameters
    ----------
    weights : array_like, shape (T_q, T_k)
        Attention weights (or scores: then pass ``vmin=None, vmax=None``).
    query_labels, key_labels : sequence of str, optional
        Tick labels for rows (length T_q) and columns (length T_k).
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes if None.
    title : str, optional
    annotate : bool, default True
        Write each value in its cell with ``fmt``.
    vmin, vmax : float or None
        Colour limits; the default 0..1 suits weights.
    cmap : str, default "Blues"

    Returns
    -------
    image : AxesImage
        The heatmap (update it with ``image.set_data``).
    texts : list of Text
        The cell annotations, row by row (empty if ``annotate`` is False).
    """
    w = as_float_array(weights, "weights")
    if w.ndim != 2:
        raise ValueError(f"weights must be a 2-D (T_q, T_k) matrix; got shape {w.shape}")
    for name, labels, n in (
        ("query_labels", query_labels, w.shape[0]),
        ("key_labels", key_labels, w.shape[1]),
    ):
        if labels is not None and len(labels) != n:
            raise ValueError(
                f"{name} has {len(labels)} labels but weights shape {w.shape} needs {n}"
            )
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.7 * w.shape[1], 0.8 + 0.6 * w.shape[0]))
    image = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(w.shape[1]), key_labels if key_labels is not None else range(w.shape[1]))
    ax.set_yticks(
        range(w.shape[0]), query_labels if query_labels is not None else range(w.shape[0])
    )
    attention_axes(ax)
    if title:
        ax.set_title(title, pad=28)
    texts = []
    if annotate:
        lo, hi = image.get_clim()
        mid = (lo + hi) / 2
        for i, j in np.ndindex(w.shape):
            texts.append(
                ax.text(
                    j,
                    i,
                    fmt.format(w[i, j]),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if w[i, j] > mid else "black",
                )
            )
    return image, texts
