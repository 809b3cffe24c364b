"""A lab's controls laid out as labelled rows, each slider with a readout column of its own.

Lab lays its controls out so that they read cleanly from a narrow notebook (~900 px window) to a
full-HD projector: every description gets the same width (in ``ch``, so it scales with the font),
the widget takes the rest of the row, and a slider's value is shown in a readout column of its own
(the slider's built-in readout is switched off: long labels such as ``"5: because"`` spilled into
the next control). Toggle buttons size to their text and wrap, if they must, inside their own row.
The layout settings of the controls (``description_width``, ``width``, ``flex``, ``readout``) are
set here, so a lab does not set them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from .keys import option_labels

__all__ = [
    "READOUT_PADDING_CH",
    "control_rows",
    "fit_readouts",
    "has_readout",
    "readout_text",
    "readout_width",
    "slider_style",
]

#: Width of the readout column beside a slider, beyond its widest value, in ``ch``.
READOUT_PADDING_CH = 1


def slider_style(width: str = "initial") -> dict[str, str]:
    """The ``style`` argument that keeps a control's whole description readable.

    Inside a :class:`Lab` it is not needed (Lab gives every description one common width); it
    stays for controls used on their own.
    """
    return {"description_width": width}


def _format(value: Any, spec: str | None) -> str:
    try:
        return format(value, spec or "")
    except (TypeError, ValueError):  # a d3 format Python does not know: show the plain value
        return str(value)


def readout_text(control: widgets.ValueWidget) -> str:
    """What a slider's own readout would show for its current value."""
    # From the index, not ``control.label``: ipywidgets 8.1 leaves ``label`` empty when the
    # slider is created with a falsy ``value=`` (0, say).
    labels = option_labels(control)
    if isinstance(control, widgets.SelectionSlider):
        return "" if control.index is None else str(labels[control.index])
    if isinstance(control, widgets.SelectionRangeSlider):
        return " – ".join(str(labels[i]) for i in control.index)
    spec = getattr(control, "readout_format", None)
    if isinstance(control.value, tuple):
        return " – ".join(_format(v, spec) for v in control.value)
    return _format(control.value, spec)


def readout_width(control: widgets.ValueWidget) -> int:
    """Characters the readout needs for the widest value the control can take."""
    if isinstance(control, widgets.SelectionSlider | widgets.SelectionRangeSlider):
        texts = [str(label) for label in option_labels(control)]
        if isinstance(control, widgets.SelectionRangeSlider):
            texts = [f"{t} – {t}" for t in texts]
    else:
        spec = getattr(control, "readout_format", None)
        ends = [_format(getattr(control, end, control.value), spec) for end in ("min", "max")]
        texts = ends if not isinstance(control.value, tuple) else [f"{e} – {e}" for e in ends]
    return max([len(readout_text(control)), *map(len, texts)])


def has_readout(control: widgets.ValueWidget) -> bool:
    """Is ``control`` a slider (it has a built-in readout, which Lab replaces)?"""
    return isinstance(getattr(control, "readout", None), bool)


def control_rows(
    controls: Mapping[str, widgets.ValueWidget],
) -> tuple[list[widgets.HBox], dict[str, widgets.Label]]:
    """One row per control: description | widget (takes the rest) | readout of a slider.

    Returns
    -------
    rows : list of ipywidgets.HBox
        In the order of ``controls``.
    readouts : dict of str to ipywidgets.Label
        The readout of each slider, by control name (a kernel without a browser module writes
        them; see :mod:`.frames`).
    """
    # A checkbox writes its description to the right of its box: it needs no label column.
    labelled = [c for c in controls.values() if not isinstance(c, widgets.Checkbox)]
    label_ch = max((len(c.description) for c in labelled), default=0) + 1
    readouts: dict[str, widgets.Label] = {}
    rows = []
    for name, control in controls.items():
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
            # ipywidgets 8 draws ToggleButtons as a block: its label, then a block of buttons on
            # the next line. As an inline hbox the label keeps its width on the left and the
            # buttons wrap, if they must, inside their own column of the row.
            control.add_class("widget-inline-hbox")
        parts: list[widgets.Widget] = [control]
        if has_readout(control):
            control.readout = False
            readout = widgets.Label(
                readout_text(control),
                style={"font_family": "monospace"},
                layout=widgets.Layout(flex="0 0 auto", overflow="hidden", margin="0 0 0 6px"),
            )
            readout.add_class("attnlib-readout")
            readouts[name] = readout
            parts.append(readout)
        row = widgets.HBox(
            parts, layout=widgets.Layout(width="100%", align_items="center", margin="1px 0")
        )
        row.add_class("attnlib-control-row")
        rows.append(row)
    fit_readouts(controls, readouts)
    return rows, readouts


def fit_readouts(
    controls: Mapping[str, widgets.ValueWidget], readouts: Mapping[str, widgets.Label]
) -> None:
    """Give every readout the width of the widest value any slider can show (options may have
    changed), so that every slider track ends at the same place."""
    widest = max((readout_width(controls[name]) for name in readouts), default=0)
    width = f"{widest + READOUT_PADDING_CH}ch"
    for readout in readouts.values():
        if readout.layout.width != width:
            readout.layout.width = width


def check_controls(controls: Mapping[str, Any]) -> None:
    """Raise a clear error unless every control is an ipywidgets value widget with a
    description."""
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise TypeError(
                f"control {name!r} must be an ipywidgets value widget; got {type(control).__name__}"
            )
        if not getattr(control, "description", ""):
            raise ValueError(f"control {name!r} has no description; give it one")
