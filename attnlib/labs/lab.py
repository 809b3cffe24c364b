"""The Lab: labelled controls above a matplotlib figure that follows them at once.

A lab is two plain functions handed to :class:`Lab` (CONTRIBUTING.md, "How to add a lab", is the
recipe)::

    def make_view(fig):                 # build axes and artists ONCE
        ax = fig.add_subplot()
        ax.set_xlim(0, 1); ax.set_ylim(0, 1)          # fixed limits
        (line,) = ax.plot([], [])
        return {"line": line}, [line]                 # (view, animated artists)

    def update_view(view, *, slope):    # set the artists' data; return the numbers shown
        view["line"].set_data(X, slope * X)
        return {"slope": slope}

    Lab({"slope": widgets.FloatSlider(0.5, min=0, max=1, description="slope")},
        make_view, update_view, caption=lambda state: f"slope {state['slope']:.2f}")

The keys of ``controls`` are the keyword arguments of ``update_view``; every control needs a
``description``. On a change Lab calls ``update_view(view, **values)``, keeps what it returns in
``lab.state`` and draws a frame: only the animated artists are redrawn over a cached background
(:mod:`attnlib.labs.figure`), so keep axis limits fixed, or name the static picture by
``static_key=`` (one background per key). Text that changes with every move belongs in
``caption=`` (plain text shown above the picture), numbers in the picture in one
:class:`~attnlib.labs.text_labels.TextLabels`; a ``pcolormesh`` redraws ~15x faster than an
``imshow``. The controls' layout is :mod:`attnlib.labs.controls`'s, present mode
:mod:`attnlib.labs.present`'s.

What the browser shows has one writer: the lab's frame store (:mod:`attnlib.labs.frames`), which
shows a frame only when its key is the controls' current state; the frames one move away are drawn
ahead (:mod:`attnlib.labs.ahead`). Without the store's script the lab still works: the kernel then
sets the picture itself, one round trip per move.

A change that comes from the browser is drawn just after its handler returns (on the kernel's
loop), so that the browser learns at once that the kernel has the value and sends the next one
while this frame is drawn; changes arriving meanwhile are drawn once, with the latest values. A
change made by kernel code (a cell, a test) is drawn at once, so ``lab.state`` follows it before
the next line runs. ``sync_controls`` runs once per move, before the frame.

Thread safety: the figure's lock (:attr:`attnlib.labs.figure.LiveFigure.lock`) is held around
every change of the controls, the view and the canvas, so messages arriving on two threads
(JupyterLab 4.6 sends widget messages over a kernel subshell) are drawn one after the other.

An error is shown in the lab as one plain sentence (``lab.errors``), kept in ``lab.last_error``,
and cleared by the next good update; an error that is not a ValueError or TypeError (a bug, not
the student's input) adds its traceback, folded.

In a saved notebook, the lab's output carries a PNG (JPEG in present mode) of its state beside the
widget view, so GitHub, nbviewer and static HTML show a picture where no kernel runs.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import re
import traceback
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .ahead import Ahead, DrawingAhead, running_loop
from .controls import control_rows, fit_readouts, readout_text
from .figure import LiveFigure
from .frames import Frame, FrameStore
from .present import PRESENT_CSS, PRESENT_WIDTH_PX, raise_small_text, smallest_text_px
from .states import detached_copy, position, reachable, state_key

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
        Lab sets their layout (:mod:`attnlib.labs.controls`).
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
        Projector size (:mod:`attnlib.labs.present`).
    sync_controls : callable ``(controls) -> None``, optional
        Runs once per move, before the frame, for controls whose options follow other controls.
        A value it sets starts no update of its own. Use ``hold_sync()`` when it sets a control's
        options and value together. It also runs on detached copies of the controls to draw
        ahead where a move leads: make every follower follow here, not in an observer of yours.

    Attributes
    ----------
    controls, view, state, live (the LiveFigure), picture (ipywidgets.Image), caption
    (ipywidgets.HTML), readouts (slider name -> ipywidgets.Label), errors (ipywidgets.HTML),
    last_error, present, store (the FrameStore), ahead (the DrawingAhead).
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
        self._make_view, self._update_view = make_view, update_view
        self._caption, self._static_key, self._sync_controls = caption, static_key, sync_controls
        self.present = bool(present)
        self._figsize, self._dpi = figsize, PRESENT_WIDTH_PX / figsize[0] if present else dpi
        self.live = LiveFigure(figsize, self._dpi, "jpeg" if self.present else "png")
        self.view, animated = make_view(self.live.figure)
        self.live.animate(animated)
        self.state: Any = None
        self.last_error: BaseException | None = None
        self._title_text = re.sub(r"<[^>]+>", "", title or "")
        self._syncing = False
        self._sync_error: Exception | None = None
        self._pending = False  # a redraw is scheduled on the kernel's loop (see _on_change)
        self._shown: tuple[str, Frame] | None = None  # the current state's key and frame
        self._last_static: Any = object()  # the static key of the last frame (none yet)

        rows, self.readouts = control_rows(self.controls)
        width = self.live.canvas.get_width_height()[0]
        # Shrinks with a narrow notebook (keeping its aspect), never grows past its pixels.
        self.picture = widgets.Image(
            format=self.live.image_format,
            layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"),
        )
        self.caption = widgets.HTML(layout=widgets.Layout(margin="4px 0 0 0"))
        self.caption.add_class("attnlib-caption")
        self.caption.layout.display = None if caption else "none"
        self.errors = widgets.HTML()
        self.errors.add_class("attnlib-error")
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        for part in header:
            part.add_class("attnlib-title")
        if self.present:
            header.insert(0, widgets.HTML(PRESENT_CSS, layout=widgets.Layout(display="none")))
            self.add_class("attnlib-present")
        self.controls_box = widgets.VBox(
            rows, layout=widgets.Layout(width="100%", max_width=f"{max(width, 560)}px")
        )
        super().__init__(
            children=[*header, self.controls_box, self.caption, self.picture, self.errors]
        )
        self.add_class("attnlib-lab")  # for browser tests and page styles
        self.store = FrameStore(
            self.picture, self.caption, self.readouts, list(self.controls.values()), self._hello
        )
        self.ahead = DrawingAhead(self.store, self.live.lock)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    # -- what the controls say -------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def state_key(self) -> str:
        """The key of the controls' current state, as the browser writes it."""
        return state_key([position(control) for control in self.controls.values()])

    def smallest_text_px(self) -> float:
        """The font size of the smallest visible text in the picture, in pixels."""
        return smallest_text_px(self.live.figure)

    # -- drawing ---------------------------------------------------------------------------

    def update(self) -> None:
        """Run ``sync_controls``, apply the controls' values to the figure and show the frame."""
        with self.live.lock:
            try:
                self._sync()
                self._sync_error = None
            except Exception as err:
                self._sync_error = err
            self._draw()

    def _sync(self) -> None:
        """Run ``sync_controls``; the values it sets start no update of their own."""
        if self._sync_controls is not None:
            self._syncing = True
            try:
                self._sync_controls(self.controls)
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
            from_browser = "value" in getattr(change["owner"], "_property_lock", {})
            if loop is None or not from_browser:
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
            if not moved and not (self.store.greeted and self.ahead.holds(key)):
                self._show(key, self._frame(values, self.state, readouts))
        except Exception as err:  # shown to the user, kept for tests
            self._show_error(err)
        else:
            if self.last_error is not None:
                self.last_error = None
                self.errors.value = ""
        if self.store.greeted:  # draw ahead the frames of the new state
            self._draw_ahead()

    def _frame(self, values: Mapping[str, Any], state: Any, readouts: dict[str, str]) -> Frame:
        """Render the view (``update_view`` has set it to ``values``) as a frame."""
        static = self._static_key(**values) if self._static_key else None
        if self.present and static != self._last_static:  # static parts (tick labels) may be new
            raise_small_text(self.live.figure)
        self._last_static = static
        picture = self.live.render(static_key=static)
        text = self._caption(state) if self._caption else ""
        described = [f"{self.controls[n].description} {t}" for n, t in readouts.items()]
        alt = ". ".join(filter(None, [self._title_text, text.replace("\n", " "), *described]))
        return Frame(picture, html.escape(text).replace("\n", "<br>"), readouts, alt)

    def _show(self, key: str, frame: Frame) -> None:
        """The one place a frame is shown: through the browser's store once it has said hello,
        else by setting the widgets (a page without the store's script)."""
        self._shown = (key, frame)
        if self.store.greeted:
            self.ahead.send((key,), frame)
            return
        self.picture.value = frame.picture
        self.caption.value = frame.caption
        for name, text in frame.readouts.items():
            self.readouts[name].value = text

    def _show_error(self, err: Exception) -> None:
        self.last_error = err
        # its own full stop is left out: the sentence below gives one ("...a bool.. The")
        message = html.escape((str(err) or type(err).__name__).rstrip().rstrip("."))
        if not isinstance(err, ValueError | TypeError):  # a bug, not the student's input
            message = f"{html.escape(type(err).__name__)}: {message}"
            trace = html.escape("".join(traceback.format_exception(err)))
            message += f"<details><summary>traceback</summary><pre>{trace}</pre></details>"
        self.errors.value = (
            f'<div style="color:#b00020">The lab could not show this: {message}. The picture'
            " still shows the last state it could draw.</div>"
        )

    # -- drawing ahead ---------------------------------------------------------------------

    def _hello(self) -> None:
        """A browser's store started: send it the current frame, then draw ahead."""
        with self.live.lock:
            self.ahead.forget()
            self.update_followers()
            self._draw()

    def _draw_ahead(self) -> None:
        def draw(ahead: Ahead) -> Frame | None:
            try:
                state = self._update_view(self.view, **ahead.values)
                return self._frame(ahead.values, state, ahead.readouts)
            except Exception:  # a move there will show the error; nothing to draw ahead
                return None

        def cheap(ahead: Ahead) -> bool:
            static = self._static_key(**ahead.values) if self._static_key else None
            return self.live.has_background(static)

        def done() -> None:  # the view shows the current state again
            with contextlib.suppress(Exception):  # the current state's error is shown
                self._update_view(self.view, **self.values())

        self.ahead.start(self._states_ahead(), draw, cheap, done)

    def _states_ahead(self) -> Iterator[Ahead]:
        """The current state, then every state one move of a control away, nearest first.

        Read from one snapshot of the controls (detached copies), so that a control moved on
        another thread meanwhile cannot give a frame the key of another state.
        """
        snapshot = {n: detached_copy(control) for n, control in self.controls.items()}
        try:
            if self._sync_controls is not None:  # a move under way may not be synced yet
                self._sync_controls(snapshot)
            yield from self._states_around(snapshot)
        except Exception:  # the current state is refused: its error is shown
            return
        finally:
            for control in snapshot.values():
                control.close()

    def _states_around(self, snapshot: dict[str, widgets.ValueWidget]) -> Iterator[Ahead]:
        positions = [position(control) for control in snapshot.values()]
        readouts = {name: readout_text(snapshot[name]) for name in self.readouts}
        values = {name: control.value for name, control in snapshot.items()}
        yield Ahead((state_key(positions),), values, readouts)
        axes = []  # (name, its place in the key, its reachable moves, where it is now)
        for here, name in enumerate(snapshot):
            moves = reachable(snapshot[name]) or []
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
                            yield self._after_move(snapshot, name, value, state_key(moved))
                        except Exception:  # sync_controls refused the move: a move there will
                            continue  # show the error; nothing to draw ahead

    def _after_move(
        self, snapshot: dict[str, widgets.ValueWidget], name: str, value: Any, key: str
    ) -> Ahead:
        """The state ``key`` that moving ``name`` to ``value`` leads to, ``sync_controls`` run
        on detached copies of the snapshot (no message reaches the browser). The frame is keyed
        as the browser sees the state at once (``key``) and after the kernel's answer."""
        copies = {n: detached_copy(control) for n, control in snapshot.items()}
        try:
            copies[name].value = value
            if self._sync_controls is not None:
                self._sync_controls(copies)
            after = state_key([position(control) for control in copies.values()])
            values = {n: control.value for n, control in copies.items()}
            readouts = {n: readout_text(copies[n]) for n in self.readouts}
        finally:
            for control in copies.values():
                control.close()
        return Ahead(tuple(dict.fromkeys((key, after))), values, readouts)

    # -- outside the browser ---------------------------------------------------------------

    def render_naive(self) -> bytes:
        """Rebuild the figure from scratch and render it to PNG, as ``interact`` + inline does.

        The speed benchmark's baseline; the lab itself never calls it.
        """
        figure = Figure(figsize=self._figsize, dpi=self._dpi)
        FigureCanvasAgg(figure)
        view, _ = self._make_view(figure)
        self._update_view(view, **self.values())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    def current_frame(self) -> Frame:
        """The frame of the controls' current state; raises the error that state gives."""
        with self.live.lock:
            key = self.state_key()
            if self._pending or self._shown is None or self._shown[0] != key:
                self._sync()
                values = self.values()
                state = self._update_view(self.view, **values)
                readouts = {name: readout_text(self.controls[name]) for name in self.readouts}
                self._shown = (key, self._frame(values, state, readouts))
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
