"""A matrix drawn as a mesh of cells coloured one by one: the labs' weight and score matrices.

Cell ``(i, j)`` is the unit square centred on ``(j, i)``, row 0 at the top, as a matrix is
written. The colours come from :func:`set_cell_colours` (RGBA per cell, say a colormap's colours
with masked cells painted grey), not from a colormap of the mesh: a lab recolours the cells on
every move, and a ``pcolormesh`` redraws ~15x faster than a nearest-neighbour ``imshow``, which
resamples the image on every frame.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.collections import QuadMesh
from matplotlib.colorbar import Colorbar
from matplotlib.colors import Colormap, Normalize
from matplotlib.figure import Figure

__all__ = ["cell_mesh", "set_cell_colours", "weight_colorbar"]


def cell_mesh(ax: Axes, n_rows: int, n_cols: int | None = None) -> QuadMesh:
    """A mesh of ``n_rows x n_cols`` (default square) cells on ``ax``, to be coloured by
    :func:`set_cell_colours`; the axis limits frame the cells, row 0 at the top.

    Returns
    -------
    QuadMesh
        The mesh; its face colours, row by row, are the cells.
    """
    n_cols = n_rows if n_cols is None else n_cols
    mesh = ax.pcolormesh(
        np.arange(n_cols + 1) - 0.5,
        np.arange(n_rows + 1) - 0.5,
        np.zeros((n_rows, n_cols)),
        edgecolors="none",
        antialiased=False,
        snap=True,
    )
    mesh.set_array(None)  # colours come from set_facecolor, not a colormap
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)  # row 0 at the top, as in a matrix
    return mesh


def set_cell_colours(mesh: QuadMesh, rgba: np.ndarray) -> None:
    """Colour the mesh's cells: ``rgba`` of shape (n_rows, n_cols, 4), or (n_cells, 4)."""
    mesh.set_facecolor(np.reshape(rgba, (-1, 4)))


def weight_colorbar(
    figure: Figure, ax: Axes, cmap: Colormap, fraction: float = 0.05, pad: float = 0.02
) -> Colorbar:
    """The colour scale of weights, 0 to 1 through ``cmap``, beside ``ax``."""
    return figure.colorbar(ScalarMappable(Normalize(0, 1), cmap), ax=ax, fraction=fraction, pad=pad)
