"""The picture of which query heads share which key/value heads (MHA, GQA, MQA).

With ``n_heads`` query heads and ``n_kv_heads`` key/value heads (``n_kv_heads`` divides
``n_heads``), query head ``i`` reads KV head ``i // (n_heads // n_kv_heads)``: consecutive groups
of ``n_heads // n_kv_heads`` query heads share one K and one V. ``n_kv_heads == n_heads`` is
ordinary multi-head attention (MHA), ``n_kv_heads == 1`` is multi-query attention (MQA), anything
in between grouped-query attention (GQA). The map itself, :func:`attnlib.heads.kv_head_index`,
is mathematics and lives with the heads.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_rgba
from matplotlib.text import Text

from .._validation import check_int
from ..heads import attention_kind, kv_head_index
from .colours import GROUP_COLOURS

__all__ = ["group_colors", "plot_head_sharing", "sharing_layout"]

#: One colour per K/V head group: the colour-blind-safe sequence of :mod:`attnlib.pictures.colours`.
_PALETTE = np.array([to_rgba(c) for c in GROUP_COLOURS])


def sharing_layout(n_heads: int, n_kv_heads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where to draw the heads: query heads on the line y = 1, KV heads on y = 0, x in (0, 1).

    Each KV head sits under the middle of the query heads it serves.

    Returns
    -------
    query_xy : ndarray, shape (n_heads, 2)
    kv_xy : ndarray, shape (n_kv_heads, 2)
    links : ndarray, shape (n_heads, 2, 2)
        One segment per query head, from the query head to its KV head.
    """
    index = kv_head_index(n_heads, n_kv_heads)
    query_xy = np.column_stack([(np.arange(n_heads) + 0.5) / n_heads, np.ones(n_heads)])
    kv_xy = np.column_stack([(np.arange(n_kv_heads) + 0.5) / n_kv_heads, np.zeros(n_kv_heads)])
    links = np.stack([query_xy, kv_xy[index]], axis=1)
    return query_xy, kv_xy, links


def group_colors(n_kv_heads: int) -> np.ndarray:
    """One RGBA colour per KV head, shape (n_kv_heads, 4); neighbours always differ."""
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads")
    return _PALETTE[np.arange(n_kv_heads) % len(_PALETTE)]


def plot_head_sharing(
    n_heads: int,
    n_kv_heads: int,
    ax: Axes | None = None,
    title: str | None = None,
    numbers: bool | None = None,
) -> dict[str, PathCollection | LineCollection | list[Text]]:
    """Draw which query heads share which K/V heads.

    Query heads are circles on top, KV heads squares below, and a line joins each query head to
    the KV head it reads; each KV head and its query heads share a colour.

    Parameters
    ----------
    n_heads : int
        Number of query heads.
    n_kv_heads : int
        Number of key/value heads; must divide ``n_heads``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes if None.
    title : str, optional
        Default: ``"n_heads = 8, n_kv_heads = 2 (GQA)"`` for those numbers.
    numbers : bool, optional
        Write each head's index on it; default only when ``n_heads <= 16``.

    Returns
    -------
    dict
        ``"queries"`` and ``"kv_heads"`` (PathCollections), ``"links"`` (LineCollection),
        ``"texts"`` (list of Text: the head numbers and the two row labels).
    """
    query_xy, kv_xy, links = sharing_layout(n_heads, n_kv_heads)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 2))
    colors = group_colors(n_kv_heads)
    index = kv_head_index(n_heads, n_kv_heads)
    size = 220 if n_heads <= 16 else 60
    link_art = LineCollection(links, colors=colors[index], linewidths=1.5, zorder=1)
    ax.add_collection(link_art)
    queries = ax.scatter(*query_xy.T, s=size, c=colors[index], edgecolors="black", zorder=2)
    kv_heads = ax.scatter(
        *kv_xy.T, s=size * 1.3, c=colors, marker="s", edgecolors="black", zorder=2
    )
    texts = []
    if numbers if numbers is not None else n_heads <= 16:
        for i, (x, y) in enumerate(query_xy):
            texts.append(ax.text(x, y, str(i), ha="center", va="center", fontsize=8, zorder=3))
        for j, (x, y) in enumerate(kv_xy):
            texts.append(ax.text(x, y, str(j), ha="center", va="center", fontsize=8, zorder=3))
    texts.append(ax.text(-0.02, 1, "query heads", ha="right", va="center", fontsize=9))
    texts.append(ax.text(-0.02, 0, "K/V heads", ha="right", va="center", fontsize=9))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.35, 1.35)
    ax.set_axis_off()
    if title is None:
        kind = attention_kind(n_heads, n_kv_heads)
        title = f"n_heads = {n_heads}, n_kv_heads = {n_kv_heads} ({kind})"
    ax.set_title(title, fontsize=10)
    return {"queries": queries, "kv_heads": kv_heads, "links": link_art, "texts": texts}
