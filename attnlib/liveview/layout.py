"""The widgets a lab is made of, below its controls: picture, caption, errors and title."""

from __future__ import annotations

import html
import traceback
from typing import NamedTuple

import ipywidgets as widgets

from .present import PRESENT_CSS

__all__ = ["LabWidgets", "error_html", "lab_widgets"]


class LabWidgets(NamedTuple):
    """A lab's widgets besides its controls (``header`` goes above the controls)."""

    header: list[widgets.Widget]
    picture: widgets.Image
    caption: widgets.HTML
    errors: widgets.HTML


def lab_widgets(
    image_format: str, width_px: int, title: str | None, has_caption: bool, present: bool
) -> LabWidgets:
    """The picture (``width_px`` wide, shrinking with a narrow page, never growing past its
    pixels), the caption (hidden without one), the errors and the header (title, present CSS)."""
    picture = widgets.Image(
        format=image_format,
        layout=widgets.Layout(width=f"{width_px}px", max_width="100%", height="auto"),
    )
    caption = widgets.HTML(layout=widgets.Layout(margin="4px 0 0 0"))
    caption.add_class("attnlib-caption")
    caption.layout.display = None if has_caption else "none"
    errors = widgets.HTML()
    errors.add_class("attnlib-error")
    header = [widgets.HTML(f"<b>{title}</b>")] if title else []
    for part in header:
        part.add_class("attnlib-title")
    if present:
        header.insert(0, widgets.HTML(PRESENT_CSS, layout=widgets.Layout(display="none")))
    return LabWidgets(header, picture, caption, errors)


def error_html(err: BaseException) -> str:
    """An error as the lab shows it: one plain sentence; a bug's (not a ValueError or
    TypeError, which the student's input gives) with its traceback, folded."""
    # its own full stop is left out: the sentence below gives one ("...a bool.. The")
    message = html.escape((str(err) or type(err).__name__).rstrip().rstrip("."))
    if not isinstance(err, ValueError | TypeError):
        message = f"{html.escape(type(err).__name__)}: {message}"
        trace = html.escape("".join(traceback.format_exception(err)))
        message += f"<details><summary>traceback</summary><pre>{trace}</pre></details>"
    return (
        f'<div style="color:#b00020">The lab could not show this: {message}. The picture'
        " still shows the last state it could draw.</div>"
    )
