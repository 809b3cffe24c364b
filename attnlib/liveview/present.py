"""Present mode: a lab at projector size, its text at least 14 pt on a 96 px-per-inch screen.

``Lab(present=True)`` (every ``*_lab(present=True)``) draws the same figure (same layout, in
inches) ``PRESENT_WIDTH_PX`` pixels wide, raises every text in it to at least
``PRESENT_MIN_TEXT_PX`` (:func:`raise_small_text`), sends frames as JPEG (at this size PNG encoding
alone would take most of the 16 ms; JPEG takes a quarter), and shows controls, readouts and caption
at ``PRESENT_FONT_PX`` with large slider handles (one CSS class, ``attnlib-present``, styled by
:data:`PRESENT_CSS`). Write a lab's figure for the notebook size; present mode needs nothing more.

A lab in present mode fits each of :data:`PRESENT_SCREENS` (a 1280 x 720 projector, full HD): its
title, controls, caption and picture together are at most the screen's height.
:func:`present_height_px` computes that height from the figure's size and the heights the page
gives the controls and text (:data:`ROW_HEIGHT_PX` and the constants beside it, measured in
chromium under voila), so that a test checks the budget without a browser. Where a lab would still
be taller (a caption that wraps in a narrow window, an error shown below), the picture shrinks to
fit the screen, keeping its aspect (:data:`PRESENT_CSS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from html import unescape

import ipywidgets as widgets
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.text import Text
from matplotlib.textpath import TextToPath

__all__ = [
    "PRESENT_CSS",
    "PRESENT_FONT_PX",
    "PRESENT_MIN_SHOWN_PX",
    "PRESENT_MIN_TEXT_PX",
    "PRESENT_SCREENS",
    "PRESENT_WIDTH_PX",
    "ROW_HEIGHT_PX",
    "caption_width_px",
    "present_height_px",
    "raise_small_text",
    "smallest_text_px",
]

#: Present mode: the picture's width in pixels (shown 1:1 on a 1920 px wide screen, with margins).
PRESENT_WIDTH_PX = 1440

#: Present mode: the smallest text in the picture, in pixels: 14 pt at 96 pixels per inch.
PRESENT_MIN_TEXT_PX = 14 * 96 / 72

#: Present mode: the narrowest the picture is shown where it must shrink to fit a screen's height:
#: on a 1280 px wide screen its smallest text is then 12.5 px, as large a share of the screen (and
#: of the wall a projector fills) as 14 pt on a 1920 px screen.
PRESENT_MIN_SHOWN_PX = PRESENT_WIDTH_PX * 1280 / 1920

#: Present mode: font size of the controls, readouts and caption, in CSS pixels (14 pt ~ 18.7).
PRESENT_FONT_PX = 20

#: The screens a lab in present mode fits, (width, height) in CSS pixels: a common projector and
#: full HD.
PRESENT_SCREENS: tuple[tuple[int, int], ...] = ((1280, 720), (1920, 1080))

# The heights the page gives a present-mode lab, in CSS pixels, measured in chromium under voila's
# lab template (the lab bench) at both screens; tests/labs/test_lab_contract.py adds them up and the
# browser test measures the real ones.

#: The height of a control's row, by the control's class (the row's 1 px margins above and below
#: not included): a slider with a number (IntSlider) is taller than one with labels.
ROW_HEIGHT_PX: dict[type, int] = {
    widgets.SelectionSlider: 44,
    widgets.ToggleButtons: 44,
    widgets.IntSlider: 48,
    widgets.FloatSlider: 48,
    widgets.Checkbox: 48,
    widgets.Combobox: 49,
}
#: A row of a control whose class is not in ROW_HEIGHT_PX, and the margins around each row.
OTHER_ROW_PX, ROW_MARGIN_PX = 49, 2
#: The title's line and one line of the caption: PRESENT_FONT_PX at 1.3 lines (ipywidgets gives
#: an HTML widget's text the row's 44 px line height; present mode's CSS sets 1.3).
TITLE_PX, CAPTION_LINE_PX = 26, 26
#: The margins between a lab's parts, in all.
LAB_MARGINS_PX = 16
#: How much narrower than the screen the lab is (voila's page padding and scroll bar).
PAGE_MARGIN_PX = 30
#: The caption's font, for the width of its lines: chromium's sans-serif on Debian (the estimate
#: of a line's width was the measured width to the pixel).
CAPTION_FONT = FontProperties(family="DejaVu Sans", size=PRESENT_FONT_PX)

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
.attnlib-present {{ max-height: 100vh; }}
.attnlib-present > * {{ flex-shrink: 0; }}
.attnlib-present > .widget-image {{
  flex-shrink: 1; min-height: 0; object-fit: contain; object-position: left top;
}}
.attnlib-present .attnlib-caption .widget-html-content,
.attnlib-present .attnlib-title .widget-html-content {{ line-height: 1.3; }}
</style>"""


def _texts(figure: Figure) -> list[tuple[float, Callable[[float], None]]]:
    """(size in points, setter) of every visible, non-empty text in the figure."""
    found: list[tuple[float, Callable[[float], None]]] = []
    for artist in figure.findobj(lambda a: isinstance(a, Text | PathCollection)):
        labels = getattr(artist, "attnlib_text_labels", None)
        if labels is not None:
            found.append((labels.fontsize, labels.set_fontsize))
        elif isinstance(artist, Text) and artist.get_visible() and artist.get_text().strip():
            found.append((artist.get_fontsize(), artist.set_fontsize))
    return found


def smallest_text_px(figure: Figure) -> float:
    """The font size of the smallest visible text in ``figure``, in pixels."""
    sizes = [size for size, _ in _texts(figure)]
    return min(sizes, default=float("inf")) * figure.dpi / 72


def raise_small_text(figure: Figure, floor_px: float = PRESENT_MIN_TEXT_PX) -> None:
    """Raise every text of ``figure`` (tick labels a draw would make included) to ``floor_px``."""
    for ax in figure.axes:  # makes the tick labels a draw would make
        ax.get_xticklabels(which="both")
        ax.get_yticklabels(which="both")
    floor = floor_px * 72 / figure.dpi
    for size, set_size in _texts(figure):
        if size < floor:
            set_size(floor)


def caption_width_px(line: str) -> float:
    """The width of one line of caption text in present mode, in CSS pixels (estimated)."""
    width, _, _ = TextToPath().get_text_width_height_descent(line, CAPTION_FONT, ismath=False)
    return width


def present_height_px(
    figsize: Sequence[float],
    controls: Iterable[widgets.Widget],
    caption_html: str,
    title: bool,
    screen: tuple[int, int],
) -> dict[str, float]:
    """How tall a present-mode lab is on ``screen``, part by part, in CSS pixels.

    Parameters
    ----------
    figsize : (float, float)
        The lab's figure size in inches; the picture is shown ``PRESENT_WIDTH_PX`` wide, or the
        page's width where the screen is narrower, keeping its aspect.
    controls : iterable of ipywidgets widgets
        One row each (:data:`ROW_HEIGHT_PX`).
    caption_html : str
        The caption as shown (lines separated by ``<br>``); a line wider than the page wraps.
    title : bool
        Whether the lab has a title line.
    screen : (int, int)
        Width and height in CSS pixels.

    Returns
    -------
    dict
        ``title``, ``controls``, ``caption``, ``margins`` and ``picture`` (the picture's natural
        height), ``total`` (their sum), ``picture_width`` (shown width) and ``shown_width`` (the
        width once the picture has shrunk, if it must, so that the lab fits the screen's height).
    """
    page = screen[0] - PAGE_MARGIN_PX
    width = min(PRESENT_WIDTH_PX, page)
    rows = [ROW_HEIGHT_PX.get(type(c), OTHER_ROW_PX) + ROW_MARGIN_PX for c in controls]
    lines = [unescape(line) for line in caption_html.split("<br>") if caption_html]
    caption_lines = sum(max(1, math.ceil(caption_width_px(line) / page)) for line in lines)
    parts = {
        "title": TITLE_PX if title else 0,
        "controls": sum(rows),
        "caption": caption_lines * CAPTION_LINE_PX,
        "margins": LAB_MARGINS_PX,
        "picture": width * figsize[1] / figsize[0],
    }
    total = sum(parts.values())
    room = screen[1] - (total - parts["picture"])
    shown = width * min(1.0, room / parts["picture"])
    return {**parts, "total": total, "picture_width": width, "shown_width": shown}
