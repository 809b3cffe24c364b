"""Every stored figure's smallest text is readable at a laptop's width.

At 1366 x 768 with JupyterLab's file browser open, a notebook's output area is about 934 px
wide; JupyterLab shows a wider image scaled down to fit it. A text drawn at ``s`` points in a
figure of ``dpi`` dots per inch is ``s * dpi / 72`` px in the stored PNG, and so is seen at

    s * dpi / 72 * min(1, 934 / PNG width)   px,

which must be at least 9 px for every text of every figure.

A PNG does not say how large its texts are, so the test draws each figure again: it runs the
notebook's paired script (in ``notebooks/``, as ``tools/run_notebooks.py`` runs the notebook)
with the Agg backend, and at every ``plt.show()`` it draws the open figures, records the font
size of every visible text they draw (tick labels, titles, legends, annotations, colourbars)
and closes them, as the inline backend does. The n-th figure shown is the n-th PNG stored in
the notebook, whose width is read from its header; the test first checks that the counts agree
and that the stored width is the width this figure has when saved with a tight bounding box
(what the inline backend stores), so that a stale output cannot pass for a new figure.

Live labs draw through their own canvas, not ``plt.show()``, and have their own text checks
(``tests/drawn_text.py``); the picture a lab stores beside its widget is left to those.
"""

from __future__ import annotations

import base64
import os
import runpy
import struct
import warnings
from pathlib import Path
from unittest import mock

import matplotlib.pyplot as plt  # Agg: tests/conftest.py chooses it before any test imports
import nbformat
import numpy as np
import pytest
from matplotlib.text import Text

ROOT = Path(__file__).resolve().parents[1]
#: The width of JupyterLab's output area at 1366 x 768 with the file browser open, in px.
OUTPUT_AREA_PX = 934
#: The smallest text a stored figure may show at that width, in px.
MIN_TEXT_PX = 9.0
#: The inline backend saves with ``bbox_inches="tight"`` and this padding, in inches.
TIGHT_PAD_INCHES = 0.1
WIDGET = "application/vnd.jupyter.widget-view+json"


def notebooks_with_figures() -> list[Path]:
    return [
        path for path in sorted((ROOT / "notebooks").glob("*.ipynb")) if stored_png_widths(path)
    ]


def stored_png_widths(path: Path) -> list[int]:
    """The pixel width of every PNG stored in the notebook's outputs, in order."""
    widths = []
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            png = data.get("image/png")
            if png and WIDGET not in data:  # a lab's picture for viewers without a kernel
                header = base64.b64decode(png[:64])  # the IHDR chunk: width at bytes 16-20
                widths.append(struct.unpack(">I", header[16:20])[0])
    return widths


def texts_drawn(figure) -> list[Text]:
    """Every visible, non-empty text a full draw of ``figure`` draws."""
    texts: list[Text] = []
    draw = Text.draw

    def recording_draw(text: Text, renderer) -> None:
        if text.get_visible() and text.get_text().strip():
            texts.append(text)
        draw(text, renderer)

    with mock.patch.object(Text, "draw", recording_draw):
        figure.canvas.draw()
    return texts


def shown_figures(script: Path) -> list[tuple[float, float, str]]:
    """(tight width in px, smallest text in px, that text) of each figure the script shows."""
    shown = []

    def record_show(*args, **kwargs) -> None:
        for number in plt.get_fignums():
            figure = plt.figure(number)
            smallest = min(texts_drawn(figure), key=lambda text: text.get_fontsize())
            bbox = figure.get_tightbbox(figure.canvas.get_renderer())
            width = (bbox.width + 2 * TIGHT_PAD_INCHES) * figure.dpi
            shown.append((width, smallest.get_fontsize() * figure.dpi / 72, smallest.get_text()))
        plt.close("all")

    cwd = os.getcwd()
    os.chdir(script.parents[1])
    try:  # the script's print options, rc settings and warning filters stay with it
        with (
            mock.patch.object(plt, "show", record_show),
            np.printoptions(**np.get_printoptions()),
            plt.rc_context(),
            warnings.catch_warnings(),
        ):
            runpy.run_path(str(script), run_name="__main__")
    finally:
        os.chdir(cwd)
        plt.close("all")
    return shown


@pytest.mark.parametrize("path", notebooks_with_figures(), ids=lambda path: path.stem)
def test_every_figure_text_is_readable_at_laptop_width(path: Path) -> None:
    script = path.parent / "scripts" / f"{path.stem}.py"
    stored = stored_png_widths(path)
    drawn = shown_figures(script)
    assert len(drawn) == len(stored), (
        f"{path.name}: the script shows {len(drawn)} figures, the notebook stores {len(stored)}"
    )
    too_small = []
    for n, (png_width, (width, text_px, text)) in enumerate(zip(stored, drawn), start=1):
        assert abs(png_width - width) <= 3, (
            f"{path.name}, figure {n}: stored {png_width} px wide, drawn {width:.0f} px;"
            " run tools/run_notebooks.py"
        )
        seen = text_px * min(1.0, OUTPUT_AREA_PX / png_width)
        if seen < MIN_TEXT_PX:
            too_small.append(
                f"figure {n} ({png_width} px wide): its smallest text {text!r} is {text_px:.1f} px,"
                f" seen at {seen:.1f} px"
            )
    assert not too_small, f"{path.name}, in a {OUTPUT_AREA_PX} px output area: " + "; ".join(
        too_small
    )
