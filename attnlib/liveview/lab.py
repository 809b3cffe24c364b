"""The Lab: labelled controls above a matplotlib figure that follows them at once.

A lab is two plain functions handed to :class:`Lab` (CONTRIBUTING.md, "How to add a lab")::

    def make_view(fig):                 # build axes and artists ONCE, with fixed limits
        ax = fig.add_subplot(); ax.set_xlim(0, 1); ax.set_ylim(0, 1)
        (line,) = ax.plot([], [])
        return {"line": line}, [line]   # (view, animated artists)

    def update_view(view, *, slope):    # set the artists' data; return the numbers shown
        view["line"].set_data(X, slope * X)
        return {"slope": slope}

    Lab({"slope": widgets.FloatSlider(0.5, min=0, max=1, description="slope")},
        make_view, update_view, caption=lambda state: f"slope {state['slope']:.2f}")

On a change Lab calls ``update_view(view, **values)``, keeps what it returns in ``lab.state`` (the
lab's state: the numbers it shows) and draws a frame: only the animated artists over a cached
background (:mod:`.figure`; name the static picture by ``static_key=`` when it
changes). Changing text goes in ``caption=``, numbers in the picture in one
:class:`.text_labels.TextLabels`. Where the frame goes is
:mod:`.showing`'s: the widgets, or the browser's store with drawing ahead.

A change from the browser is drawn just after its handler returns (on the kernel's loop), so the
browser sends the next one meanwhile; changes arriving meanwhile are drawn once. A change made by
kernel code is drawn at once. The figure's lock is held around every change of the controls, the
view and the canvas (JupyterLab 4.6 sends widget messages over a kernel subshell thread). An
error is shown as one plain sentence (``lab.errors``, ``lab.last_error``); one that is not a
ValueError or TypeError adds its traceback, folded. A saved notebook's lab output carries a
picture of its state beside the widget view, for renderers without a kernel.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from .ahead import running_loop
from .controls import check_controls, control_rows, fit_readouts, readout_text
from .figure import LiveFigure, render_from_scratch
from .frames import Frame
from .keys import position, set_by_browser, state_key
from .layout import error_html, lab_widgets
from .present import PRESENT_WIDTH_PX, raise_small_text, smallest_text_px
from .showing import DrawingAheadShowing, InWidgets, Showing, draw_ahead_default

__all__ = ["Lab", "heading_and_detail"]


def heading_and_detail(state: Mapping[str, Any]) -> str:
    """A lab's caption of two lines, for a state that names them ``heading`` and ``detail``."""
    return f"{state['heading']}\n{state['detail']}"


class Lab(widgets.VBox):
    """A live lab: labelled rows of controls above a picture that follows them, and its errors.

    Parameters
    ----------
    controls : mapping of str to ipywidgets ValueWidget
        Each key is a keyword argument of ``update_view``; each widget needs a ``description``.
        Lab sets their layout (:mod:`.controls`).
    make_view : callable ``(figure) -> (view, animated_artists)``
        Builds the axes and artists once; ``view`` is anything ``update_view`` needs (a dict of
        artists, say); ``animated_artists`` are the artists updates change.
    update_view : callable ``(view, **values) -> state``
        Sets the artists' data from the control values and returns the numbers it showed.
    figsize : (float, float), default (9, 3)
    dpi : float, default 80
    title : str, optional
        A line of HTML above the controls.
    caption : callable ``(state) -> str``, optional
        Plain text (newlines allowed) shown above the picture, in ``lab.caption``.
    static_key : callable ``(**values) -> hashable``, optional
        Names the static picture for these control values, when ``update_view`` changes static
        parts (tick labels, say); one background is cached per key.
    present : bool, default False
        Projector size (:mod:`.present`).
    sync_controls : callable ``(controls) -> None``, optional
        Runs once per move, before the frame, for controls whose options follow other controls
        (a value it sets starts no update; ``hold_sync()`` around options and value). It also
        runs on detached copies of the controls to draw ahead: make every follower follow here.
    draw_ahead : bool, optional
        Draw the frames one move away ahead (:mod:`.showing`); default: on, unless the
        environment variable ``ATTNLIB_DRAW_AHEAD`` is ``0``.

    Attributes
    ----------
    controls, view, state, live (the LiveFigure), picture, caption, readouts (slider name ->
    Label), errors, last_error, present, showing; store and ahead (None without drawing ahead).
    """

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
        draw_ahead: bool | None = None,
    ) -> None:
        draw_ahead = draw_ahead_default() if draw_ahead is None else draw_ahead
        for name, flag in (("present", present), ("draw_ahead", draw_ahead)):
            if not isinstance(flag, bool | np.bool_):
                raise TypeError(f"{name} must be True or False; got {flag!r}")
        check_controls(controls)
        functions = {"caption": caption, "static_key": static_key, "sync_controls": sync_controls}
        for name, function in functions.items():
            if function is not None and not callable(function):
                raise TypeError(f"{name} must be a function or None; got {type(function).__name__}")
        self.controls = dict(controls)
        self._make_view, self._update_view = make_view, update_view
        self._caption, self._static_key, self.sync_controls = caption, static_key, sync_controls
        self.present = bool(present)
        self._figsize, self._dpi = figsize, PRESENT_WIDTH_PX / figsize[0] if present else dpi
        self.live = LiveFigure(figsize, self._dpi, "jpeg" if self.present else "png")
        self.view, animated = make_view(self.live.figure)
        self.live.animate(animated)
        self.state: Any = None
        self.last_error: BaseException | None = None
        self.title_text = re.sub(r"<[^>]+>", "", title or "")
        self._syncing = False
        self._sync_error: Exception | None = None
        self._pending = False  # a redraw is scheduled on the kernel's loop (see _on_change)
        self._shown: tuple[str, Frame] | None = None  # the current state's key and frame
        self._last_static: Any = object()  # the static key of the last frame (none yet)

        rows, self.readouts = control_rows(self.controls)
        width = self.live.canvas.get_width_height()[0]
        header, self.picture, self.caption, self.errors = lab_widgets(
            self.live.image_format, width, title, caption is not None, self.present
        )
        if self.present:
            self.add_class("attnlib-present")
        self.controls_box = widgets.VBox(
            rows, layout=widgets.Layout(width="100%", max_width=f"{max(width, 560)}px")
        )
        super().__init__(
            children=[*header, self.controls_box, self.caption, self.picture, self.errors]
        )
        self.add_class("attnlib-lab")  # for browser tests and page styles
        self.showing: Showing = DrawingAheadShowing(self) if draw_ahead else InWidgets(self)
        self.store = getattr(self.showing, "store", None)
        self.ahead = getattr(self.showing, "ahead", None)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def state_key(self) -> str:
        """The key of the controls' current state, as the browser writes it."""
        return state_key([position(control) for control in self.controls.values()])

    def smallest_text_px(self) -> float:
        """The font size of the smallest visible text in the picture, in pixels."""
        return smallest_text_px(self.live.figure)

    def update(self) -> None:
        """Run ``sync_controls``, apply the controls' values to the figure and show the frame."""
        with self.live.lock:
            self.update_followers()
            self._draw()

    def _sync(self) -> None:
        """Run ``sync_controls``; the values it sets start no update of their own."""
        if self.sync_controls is not None:
            self._syncing = True
            try:
                self.sync_controls(self.controls)
            finally:
                self._syncing = False

    def _on_change(self, change: dict) -> None:
        """A control moved: sync its followers at once, then draw now or, for a move from the
        browser, right after the kernel reports idle (so the browser sends the next move)."""
        with self.live.lock:
            if self._syncing:  # a value set by sync_controls: the move under way draws it
                return
            self.update_followers()
            loop = running_loop()
            if loop is None or not set_by_browser(change):
                self._draw()
            elif not self._pending:
                self._pending = True
                loop.call_soon(self._draw_pending)

    def update_followers(self) -> None:
        """Run ``sync_controls`` now; an error it raises is shown by the frame that follows."""
        try:
            self._sync()
            self._sync_error = None
        except Exception as err:
            self._sync_error = err

    def _draw_pending(self) -> None:
        with self.live.lock:
            if self._pending:  # not drawn meanwhile by a direct update()
                self._draw()

    def _draw(self) -> None:
        """Draw the current state (unless the browser holds its frame) and show it."""
        self._pending = False
        try:
            if self._sync_error is not None:
                raise self._sync_error
            fit_readouts(self.controls, self.readouts)
            key, values = self.state_key(), self.values()
            readouts = {name: readout_text(self.controls[name]) for name in self.readouts}
            self.state = self._update_view(self.view, **values)
            moved = self.state_key() != key or self.values() != values
            # moved on another thread meanwhile: its own change, waiting for the lock, draws it
            if not moved and not self.showing.holds(key):
                self._show(key, self._frame(values, self.state, readouts))
        except Exception as err:  # shown to the user, kept for tests
            self.last_error, self.errors.value = err, error_html(err)
        else:
            if self.last_error is not None:
                self.last_error = None
                self.errors.value = ""
        self.showing.moved()  # drawing ahead starts from the new state

    def _frame(self, values: Mapping[str, Any], state: Any, readouts: dict[str, str]) -> Frame:
        """Render the view (``update_view`` has set it to ``values``) as a frame."""
        static = self.static_key_of(values)
        if self.present and static != self._last_static:  # static parts (tick labels) may be new
            raise_small_text(self.live.figure)
        self._last_static = static
        picture = self.live.render(static_key=static)
        text = self._caption(state) if self._caption else ""
        described = [f"{self.controls[n].description} {t}" for n, t in readouts.items()]
        alt = ". ".join(filter(None, [self.title_text, text.replace("\n", " "), *described]))
        return Frame(picture, html.escape(text).replace("\n", "<br>"), readouts, alt)

    def _show(self, key: str, frame: Frame) -> None:
        """The one place a frame is shown (:mod:`.showing`)."""
        self._shown = (key, frame)
        self.showing.show(key, frame)

    def apply(self, values: Mapping[str, Any]) -> Any:
        """Set the view to ``values`` (``update_view``) and return the state it shows."""
        return self._update_view(self.view, **values)

    def frame_for(self, values: Mapping[str, Any], readouts: dict[str, str]) -> Frame:
        """The frame of the control values ``values`` (with these readout texts); the view is
        left on ``values``. Raises the error that state gives."""
        return self._frame(values, self.apply(values), readouts)

    def has_background(self, values: Mapping[str, Any]) -> bool:
        """Whether the static parts of the picture for ``values`` are cached (a cheap frame)."""
        return self.live.has_background(self.static_key_of(values))

    def static_key_of(self, values: Mapping[str, Any]) -> Hashable:
        """The name of the static picture for the control values ``values`` (None: one)."""
        return self._static_key(**values) if self._static_key else None

    def render_naive(self) -> bytes:
        """The current state drawn from scratch, as ``interact`` + inline does (the speed
        benchmark's baseline; the lab never calls it): :func:`.figure.render_from_scratch`."""
        args = (self._make_view, self._update_view, self.values(), self._figsize, self._dpi)
        return render_from_scratch(*args)

    def current_frame(self) -> Frame:
        """The frame of the controls' current state; raises the error that state gives."""
        with self.live.lock:
            key = self.state_key()
            if self._pending or self._shown is None or self._shown[0] != key:
                self._sync()
                readouts = {name: readout_text(self.controls[name]) for name in self.readouts}
                self._shown = (key, self.frame_for(self.values(), readouts))
            return self._shown[1]

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view, plus a picture of the current state for renderers without a kernel."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return bundle
        picture = self.current_frame().picture
        bundle[f"image/{self.live.image_format}"] = base64.b64encode(picture).decode("ascii")
        bundle["text/plain"] = (
            "A live lab, shown as a still picture of its state when the cell ran. To move its"
            " controls, run the cell (again, after reloading the page)."
        )
        return bundle
