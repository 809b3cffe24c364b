"""Frames drawn ahead of time, so that a move in the browser shows its picture at once.

Every move of a lab's control costs a round trip: the browser sends the new value, the kernel
draws, the picture travels back. On a 2-core laptop that is 60-90 ms at notebook size, and most
of it is spent waiting inside the browser for the picture's message (see "Felt latency" in
:mod:`attnlib.widgets.live`). A faster kernel cannot remove it; fewer round trips can.

So, once a browser shows a lab, its kernel draws, between moves, the frames one move away from the
current state: every value of every slider, toggle and checkbox, nearest first, the other controls
held where they are (and moved as ``sync_controls`` moves them). It sends each frame to the browser
with its caption and readouts under a *state key*, and :class:`PredrawnFrames` (this module's
widget, ``predrawn.js`` in the browser) keeps them. When the controls reach a state it has, the
browser shows that frame at once, picture, caption and readouts together; the kernel still gets the
new value (``lab.state`` follows as before) but does not draw a frame the browser already has. A
state the browser does not have is drawn by the kernel as before.

The protocol, for whoever changes it (custom widget messages):

* browser -> kernel ``{"type": "hello"}``: a browser holds this lab's model and no frames yet
  (a page opened or reloaded); the kernel forgets what it sent and draws ahead again.
* kernel -> browser ``{"type": "frame", "keys", "caption", "readouts"}`` with the picture's
  bytes as the one buffer. ``caption`` is the caption's HTML, ``readouts`` maps slider names to
  texts. A move that makes the lab change another control (``sync_controls``: options renamed,
  a follower moved) leads to a state the browser first sees without that change: its frame
  comes under both keys, before and after.
* browser -> kernel ``{"type": "want", "key"}``: the controls reached a state the browser has no
  frame for. The kernel forgets that it sent one (the browser may have dropped it, or another
  page may have said "hello") and draws it if it is the current state.

A state key is the JSON list of every control's :func:`position`, in the lab's order, written
the same way by Python and by the browser (``JSON.stringify``): a selection's index and label,
any other control's value. Numbers that the two languages write differently (``1e-07``) never
match, which costs speed, not correctness: such a state is drawn by the kernel.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import anywidget
import ipywidgets as widgets
import traitlets

__all__ = [
    "MAX_PREDRAWN",
    "Ahead",
    "PredrawnFrames",
    "detached_copy",
    "position",
    "reachable",
    "state_key",
]

#: How many state keys a browser keeps frames under, per lab (oldest dropped first; a frame kept
#: under two keys counts twice); a notebook-size frame is ~30 kB, a present-size one ~75 kB.
MAX_PREDRAWN = 600


def position(control: widgets.ValueWidget) -> Any:
    """Where a control stands, as the browser sees it: ``[index, label]`` or the value.

    Parameters
    ----------
    control : ipywidgets.ValueWidget

    Returns
    -------
    list or value
        For a selection widget (slider, toggle buttons, dropdown) its index and that option's
        label (a range selection: both lists); for any other control its value (a tuple as a
        list, a whole float as an int, as JSON in the browser writes them).
    """
    labels = getattr(control, "_options_labels", None)
    if labels is not None:
        index = control.index
        if isinstance(index, tuple):
            return [list(index), [labels[i] for i in index]]
        return [index, None if index is None else labels[index]]
    return _as_json(control.value)


def _as_json(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_as_json(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def state_key(positions: Sequence[Any]) -> str:
    """The key of a lab state: its controls' positions as ``JSON.stringify`` writes them."""
    return json.dumps(list(positions), separators=(",", ":"), ensure_ascii=False)


def reachable(control: widgets.ValueWidget) -> list[tuple[Any, Any]] | None:
    """Every state one move of ``control`` can reach, as ``(position, value)`` pairs in order.

    Parameters
    ----------
    control : ipywidgets.ValueWidget

    Returns
    -------
    list of (position, value), or None
        Both states of a checkbox or toggle; every option of a single selection; every value of
        an integer slider. None for a control whose values cannot be listed (text, float or
        range sliders): nothing is drawn ahead along it.
    """
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return [(False, False), (True, True)]
    labels = getattr(control, "_options_labels", None)
    if labels is not None:
        if isinstance(control.index, tuple):
            return None
        return [
            ([i, label], value)
            for i, (label, value) in enumerate(zip(labels, control._options_values))
        ]
    if isinstance(control, widgets.IntSlider):
        return [(v, v) for v in range(control.min, control.max + 1, control.step)]
    return None


class Ahead(NamedTuple):
    """A state to draw ahead: its keys, its control values and the readouts it shows."""

    keys: tuple[str, ...]
    values: dict[str, Any]
    readouts: dict[str, str]


class _Detached:
    """A comm that goes nowhere, for a control copied to try a move on (no browser sees it)."""

    kernel = None  # ipywidgets sends nothing through a comm without a kernel

    def __init__(self) -> None:
        self.comm_id = uuid.uuid4().hex

    def on_msg(self, callback: Callable) -> None:
        pass

    def close(self) -> None:
        pass


def detached_copy(control: widgets.ValueWidget) -> widgets.ValueWidget:
    """A copy of ``control`` (options, bounds, value) that sends nothing to the browser.

    Parameters
    ----------
    control : ipywidgets.ValueWidget

    Returns
    -------
    ipywidgets.ValueWidget
        Of the same class; ``close()`` it when done.
    """
    names = ("options", "min", "max", "step", "ensure_option")
    kwargs = {name: getattr(control, name) for name in names if control.has_trait(name)}
    if control.has_trait("index"):
        kwargs["index"] = control.index
    else:
        kwargs["value"] = control.value
    return type(control)(**kwargs, comm=_Detached())


class PredrawnFrames(anywidget.AnyWidget):
    """The browser's store of a lab's frames drawn ahead (see the module docstring).

    It has no view of its own: in the browser it shows a stored frame through the lab's own
    picture, caption and readout widgets, named here by their model ids.

    Parameters
    ----------
    picture : ipywidgets.Image
    caption : ipywidgets.HTML
    readouts : mapping of str to ipywidgets.Label
        The slider readouts, by control name.
    controls : sequence of ipywidgets.ValueWidget
        The lab's controls, in the order of the state key.
    on_message : callable ``(content) -> None``
        Called with each message from the browser ("hello", "want").
    """

    _esm = Path(__file__).with_name("predrawn.js")
    picture = traitlets.Unicode().tag(sync=True)
    caption = traitlets.Unicode().tag(sync=True)
    readouts = traitlets.Dict(value_trait=traitlets.Unicode()).tag(sync=True)
    controls = traitlets.List(traitlets.Unicode()).tag(sync=True)
    capacity = traitlets.Int(MAX_PREDRAWN).tag(sync=True)

    def __init__(
        self,
        picture: widgets.Image,
        caption: widgets.HTML,
        readouts: Mapping[str, widgets.Label],
        controls: Sequence[widgets.ValueWidget],
        on_message: Callable[[dict], None],
    ) -> None:
        super().__init__(
            picture=picture.model_id,
            caption=caption.model_id,
            readouts={name: label.model_id for name, label in readouts.items()},
            controls=[control.model_id for control in controls],
        )
        self.on_msg(lambda _widget, content, _buffers: on_message(content))

    def send_frame(
        self, keys: Sequence[str], picture: bytes, caption: str, readouts: Mapping[str, str]
    ) -> None:
        """Send one frame, under one or more state keys: the picture's bytes, the caption's HTML
        and the readouts' texts."""
        message = {"type": "frame", "keys": list(keys), "caption": caption}
        self.send({**message, "readouts": dict(readouts)}, buffers=[picture])
