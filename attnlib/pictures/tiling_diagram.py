"""The schedule of tiled attention as a picture: which tile computes each score, in what order."""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes

from ..tiling import TileStep

__all__ = ["tile_order", "tile_order_diagram"]


def tile_order(steps: Iterable[TileStep], T_q: int, T_k: int) -> np.ndarray:
    """The number (from 1) of the tile that computes each score; 0 where no tile does.

    Parameters
    ----------
    steps : iterable of TileStep
        From :func:`attnlib.tiling.tiled_attention_steps` on inputs without a batch.
    T_q, T_k : int
        Number of queries and of keys.

    Returns
    -------
    ndarray of int, shape (T_q, T_k)
    """
    order = np.zeros((T_q, T_k), dtype=int)
    for step in steps:
        if not isinstance(step, TileStep):
            raise TypeError(f"steps must hold TileStep records; got {type(step).__name__}")
        if step.rows.stop > T_q or step.cols.stop > T_k:
            raise ValueError(
                f"a tile covers rows {step.rows.start}-{step.rows.stop - 1} and columns"
                f" {step.cols.start}-{step.cols.stop - 1}, outside T_q={T_q}, T_k={T_k}"
            )
        order[step.rows, step.cols] = step.index + 1
    return order


def tile_order_diagram(
    steps: Iterable[TileStep],
    T_q: int,
    T_k: int,
    mask: np.ndarray | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> list[Artist]:
    """Draw the (T_q, T_k) score matrix cut into tiles, each labelled with its place in the order.

    Tiles that no step computes are grey and labelled "skipped"; with ``mask``, the pairs it
    forbids inside the computed tiles are shaded grey.

    Parameters
    ----------
    steps : iterable of TileStep
        From :func:`attnlib.tiling.tiled_attention_steps` on inputs without a batch.
    T_q, T_k : int
    mask : ndarray of bool, shape (T_q, T_k), optional
        True = may attend (e.g. :func:`attnlib.causal_mask`).
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes if None.
    title : str, optional

    Returns
    -------
    list of Artist
        The tile image, the mask shading (if any), the grid lines and the labels.
    """
    steps = list(steps)
    order = tile_order(steps, T_q, T_k)
    if mask is not None and np.shape(mask) != (T_q, T_k):
        raise ValueError(f"mask must have shape (T_q, T_k) = {(T_q, T_k)}; got {np.shape(mask)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5 * T_q / T_k))
    n = max(int(order.max()), 1)
    artists: list[Artist] = [
        ax.imshow(np.ma.masked_equal(order, 0), cmap="viridis", vmin=1, vmax=1.4 * n, alpha=0.85)
    ]
    ax.set_facecolor("0.85")
    if mask is not None:
        shade = np.ma.masked_where(np.asarray(mask, dtype=bool), np.ones((T_q, T_k)))
        artists.append(ax.imshow(shade, cmap="Greys", vmin=0, vmax=4, alpha=0.6))
    row_edges = sorted({s.rows.start for s in steps} - {0})
    col_edges = sorted({s.cols.start for s in steps} - {0})
    artists += [ax.axhline(e - 0.5, color="white", lw=2) for e in row_edges]
    artists += [ax.axvline(e - 0.5, color="white", lw=2) for e in col_edges]
    rows = [0, *row_edges, T_q]
    cols = [0, *col_edges, T_k]
    for r0, r1 in zip(rows, rows[1:]):
        for c0, c1 in zip(cols, cols[1:]):
            number = int(order[r0:r1, c0:c1].max())
            artists.append(
                ax.text(
                    (c0 + c1 - 1) / 2,
                    (r0 + r1 - 1) / 2,
                    str(number) if number else "skipped",
                    ha="center",
                    va="center",
                    fontsize=13 if number else 10,
                    color="white" if number else "0.3",
                )
            )
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title, fontsize=11)
    return artists
