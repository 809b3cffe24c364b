"""The machinery every live lab shares: a figure drawn once and updated in place, fast.

A lab is a row of controls above a matplotlib figure that follows them at once. The figure is a
plain :class:`matplotlib.figure.Figure` drawn by Agg into an :class:`ipywidgets.Image`, so a lab
does not care which pyplot backend the notebook uses: the rest of the notebook stays
``%matplotlib inline``, and nothing depends on ipympl.

Speed comes from partial redraws ("blitting"). The static parts of the figure (axes, ticks, labels,
legends) are drawn once and cached as a background bitmap. Each update restores that bitmap, draws
only the *animated* artists (the ones the update changes), and encodes the result as a PNG
(:func:`encode_png`, no row filter, zlib level 1) that goes to the browser. Keep axis limits
fixed while a lab runs: the background is only redrawn when you call ``refresh(full=True)`` (or
when ``static_key`` changes, below).

How to write a lab
------------------
Write two plain functions and hand them to :class:`Lab`::

    from attnlib.widgets.live import Lab

    def make_view(fig):
        # build axes and artists ONCE; return (view, animated_artists)
        ax = fig.add_subplot()
        ax.set_xlim(0, 1); ax.set_ylim(0, 1)          # fixed limits
        (line,) = ax.plot([], [])
        label = ax.set_title(" ")
        return {"line": line, "label": label}, [line, label]

    def update_view(view, *, slope, shifted):
        # set_data / set_height / set_text on the view's artists; return the numbers shown
        y = slope * X + (0.1 if shifted else 0.0)
        view["line"].set_data(X, y)
        view["label"].set_text(f"slope {slope:.2f}")
        return {"slope": slope, "y": y}

    def example_lab(slope=0.5):
        controls = {
            "slope": widgets.FloatSlider(value=slope, min=0, max=1, description="slope"),
            "shifted": widgets.Checkbox(value=False, description="shift up"),
        }
        return Lab(controls, make_view, update_view, figsize=(5, 3), title="An example lab")

The keys of ``controls`` are the keyword arguments of ``update_view``. Every control must have a
``description`` (Lab checks). ``Lab`` observes each control's ``value``; on a change it calls
``update_view(view, **values)``, stores what it returns in ``lab.state``, and refreshes the
picture. An exception inside the update is shown to the user in the lab's ``errors`` Output (and
kept in ``lab.last_error``), never swallowed; the next successful update clears it.

Layout. ``Lab`` lays its controls out as one labelled row each, so that they read cleanly from a
narrow notebook (~900 px window) to a full-HD projector: every description gets the same width (in
``ch``, so it scales with the font), the widget takes the rest of the row, and a slider's value is
shown in a readout column of its own (``lab.readouts``; the slider's built-in readout is switched
off because long labels such as ``"5: because"`` spilled into the next control). Toggle buttons
size to their text and wrap, if they must, inside their own row. Lab owns these layout settings of
the controls it is given (``description_width``, ``width``, ``flex``, ``readout``), so don't
bother setting them.

Text that changes with every update (a heading, a sentence of numbers) is cheaper and sharper in
the browser than in the picture: matplotlib renders every glyph of an animated text on every frame.
Pass ``caption=`` (a function of the state that ``update_view`` returns, giving plain text) and Lab
shows it in ``lab.caption``, an HTML line above the picture. Numbers that must sit in the picture
(one above each bar, say) are ~10x cheaper as one :class:`TextLabels` than as many ``Text``
artists; an ``imshow`` is resampled on every frame, a ``pcolormesh`` of the same cells is not
(~15x cheaper to redraw).

When a static part must follow a control (tick labels that name padded tokens ``<pad>``, say),
pass ``static_key=`` (a function of the control values) and let ``update_view`` set that static
part: Lab caches one background per key, so each distinct static picture is drawn in full once
and every later visit is a fast partial redraw again.

Tests drive a lab without a browser: set ``lab.controls["slope"].value = 0.9`` and read
``lab.state``, the artists in ``lab.view`` or ``lab.frames``. ``lab.render_naive()`` rebuilds the
figure from scratch and renders it to PNG the way ``interact`` with the inline backend does, for
the speed benchmark (``benchmarks/lab_update_speed.py``, which discovers every ``*_lab`` in
``attnlib.widgets.__all__``).

Presenting. Every ``*_lab`` takes ``present=False``; ``present=True`` hands ``Lab(present=True)``
a projector-sized lab: the same figure (same layout, in inches) rendered at
``PRESENT_WIDTH_PX`` pixels wide, every text in it raised to at least ``PRESENT_MIN_TEXT_PX``
(14 pt on a 96 px-per-inch screen such as a 1920x1080 projector image, shown at 100%), frames as
JPEG (at this size PNG encoding alone would take most of the 16 ms; JPEG takes a quarter), and
controls, readouts and caption at ``PRESENT_FONT_PX`` with large slider handles (one CSS class,
``attnlib-present``, styled by a ``<style>`` inside the lab). Write a lab's figure for the notebook
size; present mode needs nothing more from it.

Felt latency. Once a browser shows a lab, the kernel draws ahead, between moves, every frame one
move away (each value of each slider, toggle and checkbox, the other controls where they are) and
the browser keeps them: a move to such a state shows its picture, caption and readouts at once,
with no round trip (:mod:`attnlib.widgets.predrawn`). Measured in headless chromium on the 2-core
machine (``benchmarks/lab_latency_in_browser.py``, 2026-12-01, gradient lab), from a key press or a
drag to the new picture, JupyterLab and voila, notebook and present size: keys 4-9 ms median (90th
percentile 7-51 ms), drags 6-20 ms (17-58 ms), against 35-95 ms medians before. Drawing ahead takes
0.1-2 s of kernel time per lab after it appears, and again for the frames a move makes new (4 after
a step of the gradient lab, 150 after a change of its d_k), a frame (~10 ms) at a time, so a move
from the browser waits for at most one frame (or for one full redraw, ~0.2 s at worst, which comes
last). A move to a state not drawn ahead (before its frame arrives) goes the way described next.

A move that goes to the kernel: the browser coalesces a drag by itself: ipywidgets' message
throttle keeps one change of a control in flight and holds back newer values until the kernel
reports "idle" for it, then sends only the latest. The kernel says "idle" when its handler of the
change returns. So a change that comes *from the browser* (the control's ``_property_lock`` holds
the value, and the kernel's asyncio loop is running) is drawn just after that handler returns
(``loop.call_soon``): the browser learns at once that the kernel has taken the value and sends the
next one while this frame is drawn and travels, instead of one full round trip later. Measured in
headless chromium (``benchmarks/lab_latency_in_browser.py``, 2026-11-30, a busy shared 2-core
machine): present-size drags under voila went from 112-158 ms median to 56-106 ms (same-window
comparisons with the old code); notebook-size drags and everything in JupyterLab changed less than
the run-to-run noise. Several changes arriving before the scheduled redraw are drawn once, with the
latest values. A change made by kernel code (a cell, a test, plain Python) redraws at once, so
``lab.state`` and the picture follow it before the next line runs. (The earlier attempt deferred
every change, kernel-made ones too; under voila its redraws stopped after the first one. This one
is checked in chromium with JupyterLab and voila by ``tests/test_labs_in_browser.py`` and the
latency benchmark.)

Where that round trip's time goes (2026-12-01, quiet 2-core machine, before drawing ahead: the
benchmark's breakdown, plus ``strace`` of the Jupyter server and of chromium's network process).
The kernel's update takes 11-19 ms. The server relays each message within a millisecond of the
kernel sending it. Then the picture's message waits in chromium before the page gets it: ~9 ms for
present-size frames under voila, mostly 22-41 ms at notebook size and in JupyterLab. Chromium reads
a websocket 1000 bytes at a time until the throughput it measures passes 1.2 MB/s
(``net/websockets/websocket_basic_stream.cc``), and in that mode messages sat unread for ~30-40 ms
on this machine. Present-size frames (~73 kB of JPEG, ~1.5 MB/s while dragging) keep voila in the
131 kB-read mode; in JupyterLab, whose frames come slower, even they do not. Smaller frames did not
help (a JPEG at notebook size, a quarter-height PNG: same latency); uncompressed 750 kB frames did
(voila, notebook size: drags 87 -> 44 ms median) but would send 15 MB/s over a real network, so the
labs don't. Ruled out as causes: TCP (with or without ``TCP_NODELAY`` on the server's sockets, the
same), the page's JavaScript (it handles each message within 0.5 ms of chromium delivering it), the
test driver's DevTools connection (a bare headless chromium, no DevTools, measured the same) and
CPU for chromium (its network and renderer processes run at nice -15: the same).

In a saved notebook, the lab's output carries a PNG of its state when it was displayed beside the
widget view, so GitHub, nbviewer, static HTML and an untrusted JupyterLab show the picture where
no kernel runs; a live frontend shows the widget.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import html
import io
import struct
import traceback
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D
from numpy.typing import ArrayLike

from .predrawn import (
    MAX_PREDRAWN,
    Ahead,
    PredrawnFrames,
    detached_copy,
    position,
    reachable,
    state_key,
)

__all__ = ["Lab", "LiveFigure", "TextLabels", "encode_jpeg", "encode_png", "slider_style"]

#: zlib level for the PNG frames: 1 encodes ~3x faster than the default 6 for ~10% more bytes.
PNG_COMPRESS_LEVEL = 1

#: How many static backgrounds a LiveFigure keeps (one per ``static_key``), oldest dropped first.
MAX_BACKGROUNDS = 32

#: Present mode: the picture's width in pixels (shown 1:1 on a 1920 px wide screen, with margins).
PRESENT_WIDTH_PX = 1440

#: Present mode: the smallest text in the picture, in pixels: 14 pt at 96 pixels per inch.
PRESENT_MIN_TEXT_PX = 14 * 96 / 72

#: Present mode: font size of the controls, readouts and caption, in CSS pixels (14 pt ~ 18.7).
PRESENT_FONT_PX = 20

#: JPEG quality of present-mode frames.
JPEG_QUALITY = 90

#: The CSS of present mode: larger text, taller rows and bigger slider handles inside the lab.
PRESENT_CSS = f"""<style>
.attnlib-present {{
  --jp-widgets-font-size: {PRESENT_FONT_PX}px;
  --jp-ui-font-size1: {PRESENT_FONT_PX}px;
  --jp-widgets-inline-height: 44px;
  --jp-widgets-slider-handle-size: 30px;
  --jp-widgets-slider-track-thickness: 8px;
  font-size: {PRESENT_FONT_PX}px;
}}
.attnlib-present .widget-label, .attnlib-present .widget-html-content,
.attnlib-present .widget-toggle-button, .attnlib-present input,
.attnlib-present .attnlib-readout {{ font-size: {PRESENT_FONT_PX}px; }}
.attnlib-present .widget-toggle-button {{ height: 40px; padding: 0 14px; }}
.attnlib-present input[type="checkbox"] {{ width: 26px; height: 26px; }}
.attnlib-present .widget-slider .noUi-handle {{ border-radius: 50%; }}
.attnlib-present .attnlib-caption {{ font-size: {PRESENT_FONT_PX + 2}px; line-height: 1.35; }}
</style>"""

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(rgba: np.ndarray, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """Encode an RGBA pixel buffer as an RGB PNG: no row filter, zlib at ``compress_level``.

    Written out (numpy + zlib) because PIL's encoder spends most of its time choosing a row filter
    per row, which buys little for flat figure colours: this takes about half the time for a
    few percent more bytes.

    Parameters
    ----------
    rgba : ndarray of uint8, shape (H, W, 4)
        Pixels, top row first (what ``FigureCanvasAgg.buffer_rgba()`` holds). Alpha is dropped.
    compress_level : int, default ``PNG_COMPRESS_LEVEL``
        zlib level, 0 (store) to 9.

    Returns
    -------
    bytes
        A complete PNG file (8-bit RGB, no interlacing).
    """
    pixels = np.asarray(rgba)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 4:
        raise ValueError(
            f"rgba must be a (H, W, 4) uint8 array; got dtype {pixels.dtype}, shape {pixels.shape}"
        )
    height, width = pixels.shape[:2]
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # column 0: filter type 0 (None)
    rows[:, 1:].reshape(height, width, 3)[...] = pixels[:, :, :3]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB
    return b"".join(
        (
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows, compress_level)),
            _png_chunk(b"IEND", b""),
        )
    )


def encode_jpeg(rgba: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """Encode an RGBA pixel buffer as a baseline JPEG (for present mode's large frames).

    Parameters
    ----------
    rgba : ndarray of uint8, shape (H, W, 4)
        Pixels, top row first. Alpha is dropped.
    quality : int, default ``JPEG_QUALITY``
        1 to 95.

    Returns
    -------
    bytes
        A JPEG file.
    """
    from PIL import Image  # matplotlib's own dependency

    pixels = np.ascontiguousarray(rgba)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 4:
        raise ValueError(
            f"rgba must be a (H, W, 4) uint8 array; got dtype {pixels.dtype}, shape {pixels.shape}"
        )
    height, width = pixels.shape[:2]
    image = Image.frombuffer("RGBA", (width, height), pixels, "raw", "RGBA", 0, 1).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="jpeg", quality=quality)
    return buffer.getvalue()


def slider_style(width: str = "initial") -> dict[str, str]:
    """The ``style`` argument that keeps a control's whole description readable.

    Inside a :class:`Lab` it is not needed (Lab gives every description one common width); it
    stays for controls used on their own.
    """
    return {"description_width": width}


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


class LiveFigure:
    """A matplotlib figure rendered by Agg into an ``ipywidgets.Image`` and redrawn in place.

    Parameters
    ----------
    figsize : (float, float)
        Size in inches.
    dpi : float
        Pixels per inch; the image is ``figsize * dpi`` pixels.
    image_format : {"png", "jpeg"}, default "png"
        How frames are encoded for the browser: PNG is exact and small for notebook-sized
        figures; JPEG encodes large (present-mode) frames about 4x faster.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        Build your axes and artists on it once.
    image : ipywidgets.Image
        The widget that shows the latest frame (PNG bytes).
    frames : int
        How many frames have been rendered (tests use it to see that an update reached the
        picture).
    """

    def __init__(
        self, figsize: tuple[float, float] = (9.0, 3.0), dpi: float = 80, image_format: str = "png"
    ) -> None:
        if image_format not in ("png", "jpeg"):
            raise ValueError(f"image_format must be 'png' or 'jpeg'; got {image_format!r}")
        self.image_format = image_format
        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        width, height = self.canvas.get_width_height()
        # Shrinks with a narrow notebook (keeping its aspect), never grows past its pixels.
        self.image = widgets.Image(
            format=image_format,
            layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"),
        )
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

    def refresh(self, full: bool = False, static_key: Hashable = None) -> None:
        """Redraw and push a new frame to ``image`` (the parameters are :meth:`render`'s)."""
        self.image.value = self.render(full, static_key)
        self.frames += 1

    def render(self, full: bool = False, static_key: Hashable = None) -> bytes:
        """Redraw and return the frame, encoded in ``image_format``, without showing it.

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
        if self.image_format == "jpeg":
            return encode_jpeg(np.asarray(self.canvas.buffer_rgba()))
        return self.png()

    def png(self) -> bytes:
        """The current canvas as PNG bytes (RGB, zlib level ``PNG_COMPRESS_LEVEL``)."""
        return encode_png(np.asarray(self.canvas.buffer_rgba()), PNG_COMPRESS_LEVEL)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running this code (the kernel's, in a widget handler), or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _format(value: Any, spec: str | None) -> str:
    try:
        return format(value, spec or "")
    except (TypeError, ValueError):  # a d3 format Python does not know: show the plain value
        return str(value)


def _readout_text(control: widgets.ValueWidget) -> str:
    """What a slider's own readout would show for its current value."""
    # From the index, not ``control.label``: ipywidgets 8.1 leaves ``label`` empty when the
    # slider is created with a falsy ``value=`` (0, say).
    labels = getattr(control, "_options_labels", None)
    if isinstance(control, widgets.SelectionSlider):
        return "" if control.index is None else str(labels[control.index])
    if isinstance(control, widgets.SelectionRangeSlider):
        return " – ".join(str(labels[i]) for i in control.index)
    spec = getattr(control, "readout_format", None)
    if isinstance(control.value, tuple):
        return " – ".join(_format(v, spec) for v in control.value)
    return _format(control.value, spec)


def _readout_width(control: widgets.ValueWidget) -> int:
    """Characters the readout needs for the widest value the control can take."""
    if isinstance(control, widgets.SelectionSlider | widgets.SelectionRangeSlider):
        texts = [str(label) for label in control._options_labels]
        if isinstance(control, widgets.SelectionRangeSlider):
            texts = [f"{t} – {t}" for t in texts]
    else:
        spec = getattr(control, "readout_format", None)
        ends = [_format(getattr(control, end, control.value), spec) for end in ("min", "max")]
        texts = ends if not isinstance(control.value, tuple) else [f"{e} – {e}" for e in ends]
    return max([len(_readout_text(control)), *map(len, texts)])


class Lab(widgets.VBox):
    """A live lab: labelled rows of controls above a :class:`LiveFigure`, and an error Output.

    Parameters
    ----------
    controls : mapping of str to ipywidgets ValueWidget
        Each key is a keyword argument of ``update_view``; each widget needs a ``description``.
        Lab sets their layout (see the module docstring).
    make_view : callable ``(figure) -> (view, animated_artists)``
        Builds the axes and artists once; ``view`` is anything ``update_view`` needs (a dict of
        artists, say); ``animated_artists`` are the artists updates change.
    update_view : callable ``(view, **values) -> state``
        Sets the artists' data from the control values (``set_data``, ``set_height``,
        ``set_text``) and returns the numbers it showed (kept as ``lab.state``).
    figsize : (float, float), default (9, 3)
    dpi : float, default 80
    title : str, optional
        A line of HTML above the controls.
    caption : callable ``(state) -> str``, optional
        Plain text (newlines allowed) shown above the picture after every update, in
        ``lab.caption``; for readouts that change with every move.
    static_key : callable ``(**values) -> hashable``, optional
        Names the static picture for these control values, when ``update_view`` changes static
        parts (tick labels, say); one background is cached per key.
    present : bool, default False
        Projector size (see the module docstring): the picture ``PRESENT_WIDTH_PX`` wide with
        text of at least ``PRESENT_MIN_TEXT_PX``, JPEG frames, large controls.
    sync_controls : callable ``(controls) -> None``, optional
        Runs before every update, for controls whose options follow other controls (the K/V
        heads that divide the query heads, say). A value it changes does not start an update of
        its own: the update under way draws it, so one move makes one frame. Use ``hold_sync()``
        when it sets a control's options and value together. It also runs on detached copies of
        the controls, to draw ahead the state a move leads to: make every control that follows
        another follow it here, not in an observer of your own.

    Attributes
    ----------
    controls, view, state, live (the LiveFigure), errors (an ipywidgets.Output), last_error,
    readouts (slider name -> the ipywidgets.Label showing its value), caption (ipywidgets.HTML),
    present, predrawn (the :class:`~attnlib.widgets.predrawn.PredrawnFrames` widget), sent (the
    keys of the frames sent to it, oldest first).
    """

    #: Width of the readout column beside a slider, beyond its widest value, in ``ch``.
    READOUT_PADDING_CH = 1

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        make_view: Callable[[Figure], tuple[Any, Iterable[Artist]]],
        update_view: Callable[..., Any],
        *,
        figsize: tuple[float, float] = (9.0, 3.0),
        dpi: float = 80,
        title: str | None = None,
        caption: Callable[[Any], str] | None = None,
        static_key: Callable[..., Hashable] | None = None,
        present: bool = False,
        sync_controls: Callable[[Mapping[str, widgets.ValueWidget]], None] | None = None,
    ) -> None:
        if not isinstance(present, bool | np.bool_):
            raise TypeError(f"present must be True or False; got {present!r}")
        for name, control in controls.items():
            if not isinstance(control, widgets.ValueWidget):
                raise TypeError(
                    f"control {name!r} must be an ipywidgets value widget; got"
                    f" {type(control).__name__}"
                )
            if not getattr(control, "description", ""):
                raise ValueError(f"control {name!r} has no description; give it one")
        functions = (("caption", caption), ("static_key", static_key))
        for name, function in (*functions, ("sync_controls", sync_controls)):
            if function is not None and not callable(function):
                raise TypeError(f"{name} must be a function or None; got {type(function).__name__}")
        self.controls = dict(controls)
        self._make_view = make_view
        self._update_view = update_view
        self._caption = caption
        self._static_key = static_key
        self._sync_controls = sync_controls
        self._syncing = False
        self._pending = False  # a redraw is scheduled on the kernel's loop (see _on_change)
        self.sent: dict[str, None] = {}  # keys of the frames drawn ahead and sent, oldest first
        self._picture_key: str | None = None  # the state key of the frame in live.image
        self._predraw_queue: Iterator[Ahead] = iter(())
        self._predraw_later: list[Ahead] | None = None
        self._predraw_handle: asyncio.Handle | None = None
        self.present = bool(present)
        if self.present:
            dpi = PRESENT_WIDTH_PX / figsize[0]
        self._figsize = figsize
        self._dpi = dpi
        self.live = LiveFigure(
            figsize=figsize, dpi=dpi, image_format="jpeg" if self.present else "png"
        )
        self.view, animated = make_view(self.live.figure)
        self.live.animate(animated)
        self.errors = widgets.Output()
        self.last_error: BaseException | None = None
        self.state: Any = None
        self._last_key: Any = object()  # the static key of the last frame (none yet)
        self.readouts: dict[str, widgets.Label] = {}
        self.caption = widgets.HTML(layout=widgets.Layout(margin="4px 0 0 0"))
        self.caption.add_class("attnlib-caption")
        self.caption.layout.display = None if caption else "none"
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        if self.present:
            header.insert(0, widgets.HTML(PRESENT_CSS, layout=widgets.Layout(display="none")))
            self.add_class("attnlib-present")
        width = self.live.canvas.get_width_height()[0]
        self.controls_box = widgets.VBox(
            self._control_rows(),
            layout=widgets.Layout(width="100%", max_width=f"{max(width, 560)}px"),
        )
        super().__init__(
            children=[*header, self.controls_box, self.caption, self.live.image, self.errors]
        )
        self.add_class("attnlib-lab")  # for browser tests and page styles
        self.predrawn = PredrawnFrames(
            self.live.image,
            self.caption,
            self.readouts,
            list(self.controls.values()),
            self._on_browser_message,
        )
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def smallest_text_px(self) -> float:
        """The font size of the smallest visible text in the picture, in pixels."""
        sizes = [size for size, _ in self._texts()]
        return min(sizes, default=float("inf")) * self.live.figure.dpi / 72

    def _texts(self) -> list[tuple[float, Callable[[float], None]]]:
        """(size in points, setter) of every visible, non-empty text in the figure."""
        found: list[tuple[float, Callable[[float], None]]] = []
        for artist in self.live.figure.findobj(lambda a: isinstance(a, Text | PathCollection)):
            labels = getattr(artist, "attnlib_text_labels", None)
            if labels is not None:
                found.append((labels.fontsize, labels.set_fontsize))
            elif isinstance(artist, Text) and artist.get_visible() and artist.get_text().strip():
                found.append((artist.get_fontsize(), artist.set_fontsize))
        return found

    def _raise_small_text(self) -> None:
        """Present mode: every text at least ``PRESENT_MIN_TEXT_PX`` pixels."""
        for ax in self.live.figure.axes:  # makes the tick labels a draw would make
            ax.get_xticklabels(which="both")
            ax.get_yticklabels(which="both")
        floor = PRESENT_MIN_TEXT_PX * 72 / self.live.figure.dpi
        for size, set_size in self._texts():
            if size < floor:
                set_size(floor)

    def _control_rows(self) -> list[widgets.HBox]:
        """One row per control: description | widget (takes the rest) | readout of a slider."""
        # A checkbox writes its description to the right of its box: it needs no label column.
        labelled = [c for c in self.controls.values() if not isinstance(c, widgets.Checkbox)]
        label_ch = max((len(c.description) for c in labelled), default=0) + 1
        # One readout width for the whole lab, so that every slider track ends at the same place.
        sliders = [
            c for c in self.controls.values() if isinstance(getattr(c, "readout", None), bool)
        ]
        self._readout_ch = max((_readout_width(c) for c in sliders), default=0)
        rows = []
        for name, control in self.controls.items():
            style = getattr(control, "style", None)
            if style is not None and hasattr(style, "description_width"):
                style.description_width = f"{label_ch}ch"
            if style is not None and hasattr(style, "button_width") and not style.button_width:
                style.button_width = "auto"  # each toggle button as wide as its text
            if isinstance(control, widgets.Checkbox):
                control.indent = True  # the box lines up with the other widgets
            control.layout.width = "auto"
            control.layout.flex = "1 1 auto"
            control.layout.min_width = "0"
            if isinstance(control, widgets.ToggleButtons):
                # ipywidgets 8 draws ToggleButtons as a block: its label, then a block of buttons
                # on the next line. As an inline hbox the label keeps its width on the left and
                # the buttons wrap, if they must, inside their own column of the row.
                control.add_class("widget-inline-hbox")
            parts: list[widgets.Widget] = [control]
            if isinstance(getattr(control, "readout", None), bool):
                control.readout = False
                readout = widgets.Label(
                    _readout_text(control),
                    style={"font_family": "monospace"},
                    layout=widgets.Layout(
                        width=f"{self._readout_ch + self.READOUT_PADDING_CH}ch",
                        flex="0 0 auto",
                        overflow="hidden",
                        margin="0 0 0 6px",
                    ),
                )
                readout.add_class("attnlib-readout")
                self.readouts[name] = readout
                parts.append(readout)
            row = widgets.HBox(
                parts, layout=widgets.Layout(width="100%", align_items="center", margin="1px 0")
            )
            row.add_class("attnlib-control-row")
            rows.append(row)
        return rows

    def _show_readouts(self) -> None:
        for name, readout in self.readouts.items():
            control = self.controls[name]
            text = _readout_text(control)
            if readout.value != text:
                readout.value = text
            widest = max(_readout_width(control), len(text))
            if widest > self._readout_ch:  # options changed (a lab may change them): widen all
                self._readout_ch = widest
                for other in self.readouts.values():
                    other.layout.width = f"{widest + self.READOUT_PADDING_CH}ch"

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Apply the controls' values to the figure; show any error in ``errors``."""
        self._update(redraw_sent=True)

    def _update(self, redraw_sent: bool) -> None:
        """``update``; with ``redraw_sent=False`` no frame is drawn if the browser has it."""
        if self._syncing:  # a value set by sync_controls: the update under way draws it
            return
        self._pending = False  # a scheduled redraw has nothing left to do
        try:
            self._sync()
            self._show_readouts()
            values = self.values()
            self.state = self._update_view(self.view, **values)
            key = self._state_key()
            if redraw_sent or key not in self.sent:
                self.live.refresh(static_key=self._static_parts(values))
                self._picture_key = key
            self.caption.value = self._caption_html(self.state)
        except Exception as err:  # shown to the user, kept for tests
            self.last_error = err
            self.errors.outputs = ()
            self.errors.append_stderr(
                "The lab could not update:\n" + "".join(traceback.format_exception(err))
            )
        else:
            if self.last_error is not None:
                self.last_error = None
                self.errors.outputs = ()
        if self.sent:  # a browser has frames drawn ahead: draw those of the new state
            self._start_predraw()

    def _static_parts(self, values: Mapping[str, Any]) -> Hashable:
        """The static key of ``values``, their static parts ready to draw (``update_view`` has
        set the view to them; present mode raises any new small text)."""
        key = self._static_key_of(values)
        if self.present and key != self._last_key:  # static parts (tick labels) may be new
            self._raise_small_text()
        self._last_key = key
        return key

    def _static_key_of(self, values: Mapping[str, Any]) -> Hashable:
        return self._static_key(**values) if self._static_key else None

    def _caption_html(self, state: Any) -> str:
        if self._caption is None:
            return ""
        return html.escape(self._caption(state)).replace("\n", "<br>")

    def _state_key(self) -> str:
        return state_key([position(control) for control in self.controls.values()])

    def _on_browser_message(self, content: dict) -> None:
        """A browser said "hello" (draw ahead for it) or "want" (it lacks this state's frame)."""
        if content.get("type") == "hello":
            self.sent.clear()
            self._start_predraw()
        elif content.get("type") == "want":
            key = content.get("key")
            self.sent.pop(key, None)
            if key == self._state_key() and key != self._picture_key:
                self.update()

    def _ahead(self) -> Iterator[Ahead]:
        """The current state, then every state one move of a control away, nearest first."""
        positions = [position(control) for control in self.controls.values()]
        readouts = {name: label.value for name, label in self.readouts.items()}
        yield Ahead((state_key(positions),), self.values(), readouts)
        names = list(self.controls)
        axes = []  # (name, its place in the key, its reachable moves, where it is now)
        for here, name in enumerate(names):
            moves = reachable(self.controls[name]) or []
            places = [place for place, _ in moves]
            if positions[here] in places:
                axes.append((name, here, moves, places.index(positions[here])))
        for distance in range(1, max((len(axis[2]) for axis in axes), default=0)):
            for name, here, moves, now in axes:
                for step in (now + distance, now - distance):
                    if 0 <= step < len(moves):
                        place, value = moves[step]
                        moved = [*positions[:here], place, *positions[here + 1 :]]
                        try:
                            ahead = self._after_move(name, value, state_key(moved))
                        except Exception:  # sync_controls refused the move: a move there will
                            continue  # show the error; nothing to draw ahead
                        yield ahead

    def _after_move(self, name: str, value: Any, key: str) -> Ahead:
        """The state ``key`` that moving ``name`` to ``value`` leads to, ``sync_controls`` run.

        ``sync_controls`` runs on detached copies of the controls (no message reaches the
        browser). The frame is keyed both as the browser sees the state at once (``key``) and
        after the kernel's answer has reached it (options renamed, a follower moved).
        """
        copies = {n: detached_copy(control) for n, control in self.controls.items()}
        try:
            copies[name].value = value
            if self._sync_controls is not None:
                self._sync_controls(copies)
            after = state_key([position(control) for control in copies.values()])
            values = {n: control.value for n, control in copies.items()}
            readouts = {n: _readout_text(copies[n]) for n in self.readouts}
        finally:
            for control in copies.values():
                control.close()
        return Ahead(tuple(dict.fromkeys((key, after))), values, readouts)

    def _start_predraw(self) -> None:
        """(Re)start drawing ahead from the current state.

        On the kernel's loop one frame is drawn per turn of the loop, so a move from the browser
        waits for at most one frame. Drawing goes on during a drag, ahead of it: with a 0.2 s
        pause after each move instead (to leave the drag the CPU), drags in a lab's first
        seconds took 60-67 ms median, against 9-17 ms without. Without a running loop (plain
        Python, tests) every frame is drawn at once.
        """
        if self._predraw_handle is not None:
            self._predraw_handle.cancel()
            self._predraw_handle = None
        self._predraw_queue = self._ahead()
        self._predraw_later = []
        loop = _running_loop()
        if loop is None:
            while self._predraw_next():
                pass
        else:
            self._predraw_handle = loop.call_soon(self._predraw_step, loop)

    def _predraw_step(self, loop: asyncio.AbstractEventLoop) -> None:
        self._predraw_handle = loop.call_soon(self._predraw_step, loop)
        if not self._predraw_next():
            self._predraw_handle.cancel()
            self._predraw_handle = None

    def _predraw_next(self) -> bool:
        """Draw and send the next frame the browser lacks; False when there is none left.

        A frame whose static parts are not cached yet costs a full draw (~10-20x a partial one,
        up to ~0.2 s that a move from the browser would wait for): those come last.
        """
        current = self._state_key()
        for ahead in self._predraw_queue:
            if all(key in self.sent for key in ahead.keys):
                continue
            static = self._static_key_of(ahead.values)
            if not self.live.has_background(static) and self._predraw_later is not None:
                self._predraw_later.append(ahead)
                continue
            if ahead.keys == (current,) and current == self._picture_key:
                picture, caption = self.live.image.value, self.caption.value
            else:
                try:
                    state = self._update_view(self.view, **ahead.values)
                    picture = self.live.render(static_key=self._static_parts(ahead.values))
                    caption = self._caption_html(state)
                except Exception:  # a move there will show the error; nothing to draw ahead
                    continue
            self.predrawn.send_frame(ahead.keys, picture, caption, ahead.readouts)
            for key in ahead.keys:
                self.sent[key] = None
            while len(self.sent) > MAX_PREDRAWN:
                del self.sent[next(iter(self.sent))]
            return True
        if self._predraw_later:  # now the frames that need a full draw
            self._predraw_queue, self._predraw_later = iter(self._predraw_later), None
            return self._predraw_next()
        self._update_view(self.view, **self.values())  # the view shows the current state again
        return False

    def _sync(self) -> None:
        """Run ``sync_controls``; the values it sets start no update of their own."""
        if self._sync_controls is not None:
            self._syncing = True
            try:
                self._sync_controls(self.controls)
            finally:
                self._syncing = False

    def _on_change(self, change: dict) -> None:
        """Redraw now, or, for a move in the browser, right after the kernel reports idle.

        A move in the browser moves the controls that follow it (``sync_controls``) at once,
        before the kernel reports idle, so that the browser has them before it sends another
        move: drawing ahead may keep the kernel's loop busy for a while after that report.
        """
        loop = _running_loop()
        from_browser = "value" in getattr(change["owner"], "_property_lock", {})
        if loop is None or not from_browser:
            self.update()
        elif not self._syncing:
            with contextlib.suppress(Exception):  # the update below shows the error
                self._sync()
            if not self._pending:
                self._pending = True
                loop.call_soon(self._draw_pending)

    def _draw_pending(self) -> None:
        if self._pending:  # not drawn meanwhile by a direct update()
            self._update(redraw_sent=False)

    def render_naive(self) -> bytes:
        """Rebuild the figure from scratch and render it to PNG, as ``interact`` + inline does.

        Used by the speed benchmark as the baseline; the lab itself never calls it.
        """
        figure = Figure(figsize=self._figsize, dpi=self._dpi)
        FigureCanvasAgg(figure)
        view, _ = self._make_view(figure)
        self._update_view(view, **self.values())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view, plus a PNG of the current picture for renderers without a kernel."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return bundle
        if self._pending or self._picture_key != self._state_key():
            self.update()
        mime = f"image/{self.live.image_format}"
        bundle[mime] = base64.b64encode(self.live.image.value).decode("ascii")
        bundle["text/plain"] = (
            "A live lab (run the notebook with a kernel to move its controls); the picture shows"
            " its default state."
        )
        return bundle
