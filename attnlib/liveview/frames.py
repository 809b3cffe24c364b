"""The browser's store of a lab's frames, and the one writer of what the lab shows there.

Every frame a lab's kernel draws (the current state's and every frame drawn ahead,
:mod:`.ahead`) reaches the browser the same way: as a message to this store, keyed by
the state it shows (:func:`.keys.state_key`), with its picture, caption, readouts and
the picture's alt text. In the browser (``frames.js``) the store shows a frame, by setting the
lab's picture, caption and readout widgets, only when its key is the key of the controls' current
state: when the frame arrives and the controls are there, or when the controls reach a state whose
frame it holds. A frame of any other state is kept, never shown, so a frame that has fallen behind
a drag cannot be shown. Nothing else sets those widgets while the store is there.

The store never drops a frame on its own: the kernel tells it which keys to drop (its record of
what the browser holds, :class:`.ahead.DrawingAhead`, is therefore exact), and a
browser whose store has just started (a page opened or reloaded) says "hello" so that the kernel
forgets its record and sends everything again, the current frame first.

Without the store's script (a page that blocks it, say) a lab still works: until a store says
"hello" the kernel sets the picture, caption and readouts itself, one round trip per move. This
costs one ``if`` in :meth:`attnlib.liveview.lab.Lab`'s drawing.

The protocol (custom widget messages):

* browser -> kernel ``{"type": "hello"}``.
* kernel -> browser ``{"type": "frame", "keys", "caption", "readouts", "alt", "drop"}`` with the
  picture's bytes as the one buffer; ``caption`` is HTML, ``readouts`` maps slider names to texts,
  ``drop`` lists keys to forget first. A move that makes the lab change another control
  (``sync_controls``) leads to a state the browser first sees without that change: its frame comes
  under both keys, before and after.

The store also dresses the lab for assistive technology and slides: the picture's ``alt`` text
follows each frame shown, each slider handle is named by its control's description, and arrow,
space and page keys pressed on a control do not reach the page (a reveal.js deck would turn the
slide).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import anywidget
import ipywidgets as widgets
import traitlets

__all__ = ["Frame", "FrameStore"]


class Frame(NamedTuple):
    """What the lab shows for one state: picture bytes, caption HTML, readout texts, alt text."""

    picture: bytes
    caption: str
    readouts: dict[str, str]
    alt: str


class FrameStore(anywidget.AnyWidget):
    """The browser's store of a lab's frames (see the module docstring). It has no view.

    Parameters
    ----------
    picture : ipywidgets.Image
    caption : ipywidgets.HTML
    readouts : mapping of str to ipywidgets.Label
        The slider readouts, by control name.
    controls : sequence of ipywidgets.ValueWidget
        The lab's controls, in the order of the state key.
    on_hello : callable ``() -> None``
        Called when a browser's store starts.

    Attributes
    ----------
    greeted : bool
        A browser's store has said "hello": from then on only it sets what the lab shows.
    """

    _esm = Path(__file__).with_name("frames.js")
    picture = traitlets.Unicode().tag(sync=True)
    caption = traitlets.Unicode().tag(sync=True)
    readouts = traitlets.Dict(value_trait=traitlets.Unicode()).tag(sync=True)
    controls = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(
        self,
        picture: widgets.Image,
        caption: widgets.HTML,
        readouts: Mapping[str, widgets.Label],
        controls: Sequence[widgets.ValueWidget],
        on_hello: Callable[[], None],
    ) -> None:
        super().__init__(
            picture=picture.model_id,
            caption=caption.model_id,
            readouts={name: label.model_id for name, label in readouts.items()},
            controls=[control.model_id for control in controls],
        )
        self.greeted = False
        self._on_hello = on_hello
        self.on_msg(lambda _widget, content, _buffers: self.receive(content))

    def receive(self, content: dict) -> None:
        """Handle a message from the browser (what the widget's comm calls)."""
        if content.get("type") == "hello":
            self.greeted = True
            self._on_hello()

    def send_frame(self, keys: Sequence[str], frame: Frame, drop: Sequence[str] = ()) -> None:
        """Send ``frame`` under every key of ``keys``, after dropping the keys ``drop``."""
        message = {
            "type": "frame",
            "keys": list(keys),
            "caption": frame.caption,
            "readouts": dict(frame.readouts),
            "alt": frame.alt,
            "drop": list(drop),
        }
        self.send(message, buffers=[frame.picture])
