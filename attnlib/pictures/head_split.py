"""The picture of splitting a matrix into heads, and of the reshape that scrambles the tokens.

A ``(T, d_model)`` matrix whose entries count up, ``0 .. T*d_model - 1``, is drawn as a grid of
numbered cells, each coloured by the head that owns its column (head ``i`` owns columns
``i*d_head .. (i+1)*d_head - 1``). Beside it, the ``n_heads`` blocks of ``(T, d_head)`` that
``reshape(T, n_heads, d_head).transpose(1, 0, 2)`` makes: every block holds one colour, its
head's columns, one row per token. Below them, optionally, the blocks that a reshape straight to
``(n_heads, T, d_head)`` makes: they run on in reading order, so a block mixes colours (heads) and
rows (tokens). Merging is the same picture read from right to left.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from .._validation import check_int
from .colours import group_colour

__all__ = ["head_split_blocks", "plot_head_split"]

_GAP = 0.6  # between two head blocks, in cells
_PANEL_GAP = 3.0  # between the matrix and its heads, in cells


def head_split_blocks(T: int, n_heads: int, d_head: int) -> dict[str, np.ndarray]:
    """The arrays the picture draws, for ``x = arange(T * n_heads * d_head).reshape(T, -1)``.

    Returns
    -------
    dict
        ``"matrix"``: ``x``, shape (T, d_model); ``"split"``: ``x`` split into heads, shape
        (n_heads, T, d_head); ``"reshape only"``: ``x.reshape(n_heads, T, d_head)``, the same
        shape without the transpose.
    """
    T, n_heads, d_head = (
        check_int(v, name) for v, name in ((T, "T"), (n_heads, "n_heads"), (d_head, "d_head"))
    )
    x = np.arange(T * n_heads * d_head).reshape(T, n_heads * d_head)
    return {
        "matrix": x,
        "split": x.reshape(T, n_heads, d_head).transpose(1, 0, 2),
        "reshape only": x.reshape(n_heads, T, d_head),
    }


def plot_head_split(
    T: int, n_heads: int, d_head: int, ax: Axes | None = None, wrong_reshape: bool = True
) -> dict[str, PatchCollection | list[Text]]:
    """Draw a counting ``(T, d_model)`` matrix, its heads, and (optionally) the wrong reshape.

    Parameters
    ----------
    T, n_heads, d_head : int
        Tokens, heads and head width; ``d_model = n_heads * d_head``. Keep ``T * d_model``
        small (a few dozen cells): every cell carries its number.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes if None.
    wrong_reshape : bool, default True
        Also draw the blocks of ``reshape(n_heads, T, d_head)`` without the transpose, below the
        heads.

    Returns
    -------
    dict
        ``"cells"`` (PatchCollection, one square per drawn entry, coloured by the head that owns
        the entry's column), ``"numbers"`` (list of Text: each cell's entry, centred in it) and
        ``"labels"`` (list of Text: the titles, head names and token names).
    """
    blocks = head_split_blocks(T, n_heads, d_head)
    x = blocks["matrix"]
    d_model = n_heads * d_head
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(9.3, 1.6 + 0.5 * T * (2 if wrong_reshape else 1)))
    owner = (np.arange(x.size) % d_model) // d_head  # head owning entry v, by its column
    squares, colours, numbers, labels = [], [], [], []

    def grid(values: np.ndarray, left: float, top: float) -> None:
        for (t, j), value in np.ndenumerate(values):
            squares.append(Rectangle((left + j, top + t), 1, 1))
            colours.append(to_rgba(group_colour(int(owner[value])), 0.45))
            numbers.append(
                ax.text(
                    left + j + 0.5, top + t + 0.5, str(value), ha="center", va="center", fontsize=9
                )
            )

    def heads(stack: np.ndarray, top: float, title: str, quoted: bool) -> None:
        left = d_model + _PANEL_GAP
        for i, block in enumerate(stack):
            grid(block, left, top)
            name = f"'head {i}'" if quoted else f"head {i}"
            labels.append(
                ax.text(left + d_head / 2, top - 0.15, name, ha="center", va="bottom", fontsize=9)
            )
            left += d_head + _GAP
        middle = d_model + _PANEL_GAP + (n_heads * d_head + (n_heads - 1) * _GAP) / 2
        labels.append(ax.text(middle, top - 1.0, title, ha="center", va="bottom", fontsize=10))

    grid(x, 0.0, 0.0)
    labels.append(
        ax.text(d_model / 2, -1.0, "Q, shape (T, d_model)", ha="center", va="bottom", fontsize=10)
    )
    for t in range(T):
        labels.append(ax.text(-0.2, t + 0.5, f"token {t}", ha="right", va="center", fontsize=9))
    heads(
        blocks["split"],
        0.0,
        "split: Q.reshape(T, n_heads, d_head).transpose(1, 0, 2)",
        quoted=False,
    )
    ax.annotate(
        "",
        (d_model + _PANEL_GAP - 0.3, T / 2),
        (d_model + 0.3, T / 2),
        arrowprops={"arrowstyle": "->", "lw": 1.5},
    )
    bottom = T
    if wrong_reshape:
        bottom = 2 * T + 2.2
        heads(
            blocks["reshape only"],
            T + 2.2,
            "Q.reshape(n_heads, T, d_head), no transpose: tokens mixed",
            quoted=True,
        )
    cells = PatchCollection(squares, facecolors=colours, edgecolors="white", linewidths=1.5)
    ax.add_collection(cells)
    right = d_model + _PANEL_GAP + n_heads * d_head + (n_heads - 1) * _GAP
    ax.set_xlim(-3.2, right + 0.2)
    ax.set_ylim(bottom + 0.2, -1.8)  # row 0 at the top, as a matrix is written
    ax.set_aspect("equal")
    ax.set_axis_off()
    return {"cells": cells, "numbers": numbers, "labels": labels}
