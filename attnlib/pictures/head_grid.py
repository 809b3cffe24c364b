"""Pictures of a trained model's attention: every layer and head of a sentence at a glance."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.image import AxesImage
from numpy.typing import ArrayLike

from .._validation import as_float_array

__all__ = ["head_grid", "head_mosaic"]


def head_mosaic(weights: ArrayLike) -> np.ndarray:
    """Tile the (T, T) maps of every layer and head into one array, one blank cell between maps.

    Parameters
    ----------
    weights : array_like, shape (n_layers, n_heads, T, T)

    Returns
    -------
    ndarray of float64, shape (n_layers * (T + 1) - 1, n_heads * (T + 1) - 1)
        Map (l, h) fills rows ``l*(T+1) .. l*(T+1)+T-1`` and the matching columns; the gaps
        hold NaN (drawn blank).
    """
    w = as_float_array(weights, "weights")
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (n_layers, n_heads, T, T); got shape {w.shape}")
    L, H, T, _ = w.shape
    mosaic = np.full((L * (T + 1) - 1, H * (T + 1) - 1), np.nan)
    for l, h in np.ndindex(L, H):
        mosaic[l * (T + 1) : l * (T + 1) + T, h * (T + 1) : h * (T + 1) + T] = w[l, h]
    return mosaic


def head_grid(
    weights: ArrayLike, ax: Axes | None = None, title: str | None = None, cmap: str = "Blues"
) -> AxesImage:
    """Draw every layer's and head's attention map as small multiples, in one image.

    Rows of maps are layers (0 at the top), columns are heads; inside each map, rows are queries
    and columns keys, as in :func:`attnlib.pictures.heatmap.attention_heatmap`. One image instead of
    n_layers * n_heads axes keeps it fast to draw.

    Parameters
    ----------
    weights : array_like, shape (n_layers, n_heads, T, T)
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes if None.
    title : str, optional
    cmap : str, default "Blues"
        Colours for weights 0 (light) to 1 (dark).

    Returns
    -------
    AxesImage
    """
    mosaic = head_mosaic(weights)
    L, H, T = np.shape(weights)[:3]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * H, 1.1 * L))
    image = ax.imshow(mosaic, cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
    centres = (T - 1) / 2 + (T + 1) * np.arange(max(L, H))
    ax.set_xticks(centres[:H], [f"head {h}" for h in range(H)], fontsize=8)
    ax.set_yticks(centres[:L], [f"layer {l}" for l in range(L)], fontsize=8)
    ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title)
    return image
