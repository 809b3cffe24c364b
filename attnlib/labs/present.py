"""Present mode: a lab at projector size, its text at least 14 pt on a 96 px-per-inch screen.

``Lab(present=True)`` (every ``*_lab(present=True)``) draws the same figure (same layout, in
inches) ``PRESENT_WIDTH_PX`` pixels wide, raises every text in it to at least
``PRESENT_MIN_TEXT_PX`` (:func:`raise_small_text`), sends frames as JPEG (at this size PNG encoding
alone would take most of the 16 ms; JPEG takes a quarter), and shows controls, readouts and caption
at ``PRESENT_FONT_PX`` with large slider handles (one CSS class, ``attnlib-present``, styled by
:data:`PRESENT_CSS`). Write a lab's figure for the notebook size; present mode needs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = [
    "PRESENT_CSS",
    "PRESENT_FONT_PX",
    "PRESENT_MIN_TEXT_PX",
    "PRESENT_WIDTH_PX",
    "raise_small_text",
    "smallest_text_px",
]

#: Present mode: the picture's width in pixels (shown 1:1 on a 1920 px wide screen, with margins).
PRESENT_WIDTH_PX = 1440

#: Present mode: the smallest text in the picture, in pixels: 14 pt at 96 pixels per inch.
PRESENT_MIN_TEXT_PX = 14 * 96 / 72

#: Present mode: font size of the controls, readouts and caption, in CSS pixels (14 pt ~ 18.7).
PRESENT_FONT_PX = 20

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
