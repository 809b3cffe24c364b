"""Every figure a notebook shows has text readable at a laptop's width, checked as it is drawn.

At 1366 x 768 with JupyterLab's file browser open, a notebook's output area is about 934 px
wide; JupyterLab shows a wider image scaled down to fit it. A text drawn at ``s`` points in a
PNG saved at ``dpi`` dots per inch is ``s * dpi / 72`` px in the PNG, and so is seen at

    s * dpi / 72 * min(1, 934 / PNG width)   px,

which must be at least 9 px for every text of every figure.

A PNG does not say how large its texts are, so the measure is taken while the figure is drawn:
:func:`install` wraps IPython's ``print_figure`` (what the inline backend calls to turn a shown
figure into its PNG), records the size of every visible text that draw draws (tick labels,
titles, legends, annotations, colourbars) and the width of the PNG it makes, and

* refuses a figure whose smallest text would be seen below 9 px (a ``ValueError``: the cell
  shows it as an error, so nbval's run and ``tools/run_notebooks.py``'s both fail on it);
* puts the measure in the PNG's output metadata (key :data:`RECORD`: ``png_width``,
  ``smallest_px``, ``smallest_text``), so that tests/project/test_figure_text.py checks every stored
  figure without drawing it again (nbval does not compare metadata).

Every kernel the test suite and ``tools/run_notebooks.py`` start runs it first
(``tools/kernel_startup.py``, named by ``PYTHONSTARTUP``). Live labs draw through their own
canvas, not the inline backend, and have their own text checks (``tests/support/drawn_text.py``).
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

#: The width of JupyterLab's output area at 1366 x 768 with the file browser open, in px.
OUTPUT_AREA_PX = 934
#: The smallest text a shown figure may show at that width, in px.
MIN_TEXT_PX = 9.0
#: The kernels' ``PYTHONSTARTUP`` file, which installs the check.
KERNEL_STARTUP = Path(__file__).with_name("kernel_startup.py")
#: The key of the measure in a stored PNG's output metadata (under ``"image/png"``).
RECORD = "attnlib_figure_text"


def png_width(png: bytes) -> int:
    """The pixel width in a PNG's header (the IHDR chunk: bytes 16-20)."""
    return struct.unpack(">I", png[16:20])[0]


def seen_px(text_px: float, width: int) -> float:
    """How large a text of ``text_px`` px in a PNG ``width`` px wide is seen at laptop width."""
    return text_px * min(1.0, OUTPUT_AREA_PX / width)


def measured(print_figure):
    """``print_figure`` (IPython's), returning ``(data, metadata)`` with the measure for a PNG,
    and refusing a figure whose smallest text is seen below :data:`MIN_TEXT_PX`."""

    def print_measured(fig, fmt="png", bbox_inches="tight", base64=False, **kwargs) -> Any:
        if fmt != "png":
            return print_figure(fig, fmt, bbox_inches, base64, **kwargs)
        from unittest import mock

        from matplotlib.text import Text

        texts: list[tuple[float, str]] = []
        draw = Text.draw

        def recording_draw(text: Text, renderer) -> None:
            if text.get_visible() and text.get_text().strip():
                texts.append((renderer.points_to_pixels(text.get_fontsize()), text.get_text()))
            draw(text, renderer)

        with mock.patch.object(Text, "draw", recording_draw):
            png = print_figure(fig, fmt, bbox_inches, False, **kwargs)
        if png is None:  # an empty figure shows nothing
            return None
        width = png_width(png)
        smallest_px, smallest_text = min(texts, default=(None, None))
        if smallest_px is not None and seen_px(smallest_px, width) < MIN_TEXT_PX:
            raise ValueError(
                f"this figure's smallest text {smallest_text!r} is {smallest_px:.1f} px in a PNG"
                f" {width} px wide: seen at {seen_px(smallest_px, width):.1f} px in a"
                f" {OUTPUT_AREA_PX} px output area, below {MIN_TEXT_PX:g} px; make it larger"
            )
        record = {"png_width": width, "smallest_px": smallest_px, "smallest_text": smallest_text}
        return _encoded(png, base64), {RECORD: record}

    return print_measured


def _encoded(png: bytes, base64_: bool) -> bytes | str:
    return base64.b64encode(png).decode("ascii") if base64_ else png


def install() -> None:
    """Measure every figure this kernel shows from now on.

    The inline backend registers ``IPython.core.pylabtools.print_figure`` as the PNG printer of
    figures when pyplot is first imported; replacing that function before then is enough.
    """
    from IPython.core import pylabtools

    if not getattr(pylabtools.print_figure, "measures_text", False):
        pylabtools.print_figure = measured(pylabtools.print_figure)
        pylabtools.print_figure.measures_text = True
