"""A matplotlib figure drawn by Agg and redrawn in place, fast, by one thread at a time.

The static parts of the figure (axes, ticks, labels, legends) are drawn once and cached as a
background bitmap, one per ``static_key``. Each frame restores that bitmap, draws only the
*animated* artists and encodes the result (:mod:`.encoders`). Keep axis limits fixed
while a lab runs, or name the static picture by a key.

Thread safety: JupyterLab 4.6 sends widget messages over a kernel subshell, which ipykernel 7
handles in a thread of its own, while cell code runs on the main thread. Both may reach one lab at
once; two threads drawing on one Agg canvas gave white, top-only and label-less frames. So the
figure has one re-entrant lock, :attr:`LiveFigure.lock`: :meth:`~LiveFigure.render` holds it, and a
:class:`.lab.Lab` holds it around everything that changes its artists or controls.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .encoders import PNG_COMPRESS_LEVEL, encode_jpeg, encode_png

__all__ = ["MAX_BACKGROUNDS", "LiveFigure", "render_from_scratch"]

#: How many static backgrounds a LiveFigure keeps (one per ``static_key``), oldest dropped first.
MAX_BACKGROUNDS = 32


class LiveFigure:
    """A matplotlib figure rendered by Agg, redrawn in place and encoded for the browser.

    Parameters
    ----------
    figsize : (float, float)
        Size in inches.
    dpi : float
        Pixels per inch; a frame is ``figsize * dpi`` pixels.
    image_format : {"png", "jpeg"}, default "png"
        How frames are encoded: PNG is exact and small for notebook-sized figures; JPEG encodes
        large (present-mode) frames about 4x faster.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        Build your axes and artists on it once.
    canvas : FigureCanvasAgg
    lock : threading.RLock
        Held while drawing; hold it yourself while you change the artists.
    frames : int
        How many frames have been rendered (tests use it to see that a move drew a frame).
    """

    def __init__(
        self, figsize: tuple[float, float] = (9.0, 3.0), dpi: float = 80, image_format: str = "png"
    ) -> None:
        if image_format not in ("png", "jpeg"):
            raise ValueError(f"image_format must be 'png' or 'jpeg'; got {image_format!r}")
        self.image_format = image_format
        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self.lock = threading.RLock()
        self._animated: list[Artist] = []
        self._backgrounds: dict[Hashable, Any] = {}
        self.frames = 0

    def animate(self, artists: Iterable[Artist]) -> None:
        """Mark ``artists`` as the ones updates change: they are left out of the background."""
        for artist in artists:
            if not isinstance(artist, Artist):
                raise TypeError(
                    f"animated artists must be matplotlib Artists; got {type(artist).__name__}"
                )
            artist.set_animated(True)
            self._animated.append(artist)
        self._backgrounds.clear()

    def render(self, full: bool = False, static_key: Hashable = None) -> bytes:
        """Redraw and return the frame, encoded in ``image_format``.

        Parameters
        ----------
        full : bool, default False
            Redraw everything and forget every cached background. Needed only when a static part
            (axis limits, tick labels, a legend) changed in a way ``static_key`` does not name;
            otherwise only animated artists are redrawn.
        static_key : hashable, optional
            Names the current state of the static parts. The first frame with a new key is drawn
            in full and its background cached under the key (up to ``MAX_BACKGROUNDS``); later
            frames with that key restore it. The caller must have set the static parts to match
            the key before calling.
        """
        with self.lock:
            self.frames += 1
            return self._render(full, static_key)

    def _render(self, full: bool, static_key: Hashable) -> bytes:
        if full:
            self._backgrounds.clear()
        background = self._backgrounds.get(static_key)
        if background is None:
            self.canvas.draw()  # draws everything except the animated artists
            background = self.canvas.copy_from_bbox(self.figure.bbox)
            if len(self._backgrounds) >= MAX_BACKGROUNDS:
                del self._backgrounds[next(iter(self._backgrounds))]
            self._backgrounds[static_key] = background
        else:
            self.canvas.restore_region(background)
        for artist in self._animated:
            if artist.get_visible():
                self.figure.draw_artist(artist)
        return self.encode()

    def has_background(self, static_key: Hashable = None) -> bool:
        """Is a background cached for ``static_key`` (so the next refresh is a partial one)?"""
        return static_key in self._backgrounds

    def encode(self) -> bytes:
        """The current canvas as bytes in ``image_format``."""
        with self.lock:
            if self.image_format == "jpeg":
                return encode_jpeg(np.asarray(self.canvas.buffer_rgba()))
            return self.png()

    def png(self) -> bytes:
        """The current canvas as PNG bytes (RGB, zlib level ``PNG_COMPRESS_LEVEL``)."""
        with self.lock:
            return encode_png(np.asarray(self.canvas.buffer_rgba()), PNG_COMPRESS_LEVEL)


def render_from_scratch(
    make_view: Callable, update_view: Callable, values: dict, figsize: tuple, dpi: float
) -> bytes:
    """A new figure, its view made and set to ``values``, saved as a PNG (tight bounding box)."""
    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    view, _ = make_view(figure)
    update_view(view, **values)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()
