"""Short text labels drawn fast: one collection of glyph outlines instead of many Text artists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D
from numpy.typing import ArrayLike

__all__ = ["TextLabels"]


class TextLabels:
    """Short text labels (numbers above bars, say) drawn fast: one collection of glyph outlines.

    matplotlib 3.11 lays out every ``Text`` with libraqm on every draw (~0.5-1.5 ms per label on
    the 2-core machine); a lab that writes nine numbers per frame spends most of its frame on
    them. Here each distinct string becomes a glyph-outline path once (cached), and all labels
    are one :class:`~matplotlib.collections.PathCollection` drawn in a single call.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Positions are in its data coordinates.
    n : int
        Number of labels.
    fontsize : float, default 8
        In points.
    color : color, default "black"
    ha : {"center", "left", "right"}, default "center"
        Horizontal alignment of each label at its position (the baseline sits on the position).

    Attributes
    ----------
    collection : PathCollection
        The artist to draw: pass it to the lab as animated.
    texts : list of str
        The labels shown (read them in tests).
    """

    def __init__(
        self, ax: Axes, n: int, fontsize: float = 8, color: Any = "black", ha: str = "center"
    ) -> None:
        if ha not in ("center", "left", "right"):
            raise ValueError(f"ha must be 'center', 'left' or 'right'; got {ha!r}")
        self._font = FontProperties(size=fontsize)
        self._ha = ha
        self._ax = ax
        self._paths: dict[str, Path] = {}
        self.texts = [""] * n
        points_to_pixels = ax.figure.dpi / 72.0
        self.collection = PathCollection(
            [self._path("")] * n,
            offsets=np.zeros((n, 2)),
            offset_transform=ax.transData,
            transform=Affine2D().scale(points_to_pixels),
            facecolors=color,
            edgecolors="none",
        )
        self.collection.attnlib_text_labels = self  # lets Lab find it (present mode's text floor)
        ax.add_collection(self.collection, autolim=False)

    @property
    def fontsize(self) -> float:
        """The labels' font size in points."""
        return self._font.get_size_in_points()

    def set_fontsize(self, fontsize: float) -> None:
        """Redraw every label at ``fontsize`` points."""
        self._font = FontProperties(size=fontsize)
        self._paths.clear()
        self.collection.set_paths([self._path(t) for t in self.texts])

    def _path(self, text: str) -> Path:
        path = self._paths.get(text)
        if path is None:
            raw = TextPath((0, 0), text, prop=self._font) if text else Path(np.zeros((1, 2)))
            width = raw.get_extents().width if text else 0.0
            shift = {"center": -width / 2, "left": 0.0, "right": -width}[self._ha]
            path = raw.transformed(Affine2D().translate(shift, 0))
            self._paths[text] = path
        return path

    def set(self, texts: Iterable[str], positions: ArrayLike) -> None:
        """Show ``texts[i]`` at ``positions[i]`` (data coordinates, shape (n, 2))."""
        self.texts = [str(t) for t in texts]
        self.collection.set_paths([self._path(t) for t in self.texts])
        self.collection.set_offsets(np.asarray(positions, dtype=float))
