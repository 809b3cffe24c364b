"""Where a lab's controls stand, as the browser names it, and every private ipywidgets access.

The engine reads three private parts of ipywidgets, all here: a selection's option labels and
values (``_options_labels``, ``_options_values``), whether a change came from the browser
(``_property_lock``), and a control made with a comm that goes nowhere (``comm=``). A release of
ipywidgets that changes them breaks this file's tests first (``tests/liveview/test_keys.py``);
``Lab(..., draw_ahead=False)`` needs only :func:`option_labels` and :func:`set_by_browser`.

A state key is the JSON list of every control's :func:`position`, in the lab's order, written the
same way by Python and by the browser (``JSON.stringify``): a selection's index and label, any
other control's value. Numbers that the two languages write differently (``1e-07``) never match,
which costs speed, not correctness: such a state is drawn by the kernel when the browser gets there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

__all__ = [
    "detached_copy",
    "option_labels",
    "position",
    "reachable",
    "set_by_browser",
    "state_key",
]


def option_labels(control: widgets.ValueWidget) -> tuple[str, ...] | None:
    """The option labels of a selection widget (slider, toggle buttons, dropdown), else None."""
    return getattr(control, "_options_labels", None)


def set_by_browser(change: dict) -> bool:
    """Whether a ``value`` change (an ipywidgets observer's ``change``) came from the browser:
    ipywidgets holds a property lock on a value while it applies the browser's message."""
    return "value" in getattr(change["owner"], "_property_lock", {})


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
    labels = option_labels(control)
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
    labels = option_labels(control)
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
