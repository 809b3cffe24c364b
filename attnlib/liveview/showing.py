"""Where a lab's frame goes: the one seam between drawing a frame and showing it.

A :class:`.Lab` hands every frame it draws to one object with three methods
(:class:`Showing`), of one of two kinds:

* :class:`InWidgets` sets the lab's picture, caption and readout widgets itself: every move is one
  round trip to the kernel. Nothing but ipywidgets' own messages is involved.
* :class:`DrawingAheadShowing` (the default) adds the browser's frame store
  (:mod:`.frames`, a script of its own) and drawing ahead
  (:mod:`.ahead`): once the store says hello, frames go through it, and the
  frames one move away are drawn between moves, so a move shows its picture at once. Until the
  store says hello (a page that blocks its script), it shows frames as :class:`InWidgets` does.

``Lab(..., draw_ahead=False)``, or ``ATTNLIB_DRAW_AHEAD=0`` in the kernel's environment, chooses
:class:`InWidgets`: the fallback for a release of ipywidgets, JupyterLab or voila that breaks the
store's script. The lab contract test runs every lab both ways.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Protocol

from .ahead import Ahead, DrawingAhead, states_ahead
from .frames import Frame, FrameStore

if TYPE_CHECKING:
    from .lab import Lab

__all__ = [
    "DRAW_AHEAD_VARIABLE",
    "DrawingAheadShowing",
    "InWidgets",
    "Showing",
    "draw_ahead_default",
]

#: The environment variable that turns drawing ahead off for every lab a kernel makes ("0").
DRAW_AHEAD_VARIABLE = "ATTNLIB_DRAW_AHEAD"


def draw_ahead_default() -> bool:
    """``ATTNLIB_DRAW_AHEAD`` read: on unless it is "0" (unset or "1": on)."""
    setting = os.environ.get(DRAW_AHEAD_VARIABLE, "1").strip()
    if setting not in ("0", "1"):
        raise ValueError(f"{DRAW_AHEAD_VARIABLE} must be 0 or 1 (or unset); got {setting!r}")
    return setting == "1"


class Showing(Protocol):
    """What a lab needs of the way its frames are shown."""

    def show(self, key: str, frame: Frame) -> None:
        """Show ``frame``, the frame of the state ``key``."""

    def holds(self, key: str) -> bool:
        """Whether the browser already holds the frame of ``key`` (then the lab draws none)."""

    def moved(self) -> None:
        """Called after every move the lab has drawn (or not, when the browser held it)."""


class InWidgets:
    """Show a frame by setting the lab's picture, caption and readouts: one round trip a move."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def show(self, key: str, frame: Frame) -> None:
        self.lab.picture.value = frame.picture
        self.lab.caption.value = frame.caption
        for name, text in frame.readouts.items():
            self.lab.readouts[name].value = text

    def holds(self, key: str) -> bool:
        return False

    def moved(self) -> None:
        pass


class DrawingAheadShowing:
    """Show frames through the browser's frame store, and draw ahead, once the store says hello.

    Attributes
    ----------
    store : FrameStore
    ahead : DrawingAhead
    """

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.direct = InWidgets(lab)
        controls = list(lab.controls.values())
        self.store = FrameStore(lab.picture, lab.caption, lab.readouts, controls, self._hello)
        self.ahead = DrawingAhead(self.store, lab.live.lock)

    def show(self, key: str, frame: Frame) -> None:
        if self.store.greeted:
            self.ahead.send((key,), frame)
        else:
            self.direct.show(key, frame)

    def holds(self, key: str) -> bool:
        return self.store.greeted and self.ahead.holds(key)

    def moved(self) -> None:
        if self.store.greeted:
            lab = self.lab
            states = states_ahead(lab.controls, lab.sync_controls, lab.readouts)
            self.ahead.start(states, self._draw, self._cheap, self._done)

    def _hello(self) -> None:
        """A browser's store started: send it the current frame, then draw ahead."""
        with self.lab.live.lock:
            self.ahead.forget()
            self.lab.update()

    def _draw(self, ahead: Ahead) -> Frame | None:
        try:
            return self.lab.frame_for(ahead.values, ahead.readouts)
        except Exception:  # a move there will show the error; nothing to draw ahead
            return None

    def _cheap(self, ahead: Ahead) -> bool:
        return self.lab.has_background(ahead.values)

    def _done(self) -> None:  # the view shows the current state again
        with contextlib.suppress(Exception):  # the current state's error is shown
            self.lab.apply(self.lab.values())
