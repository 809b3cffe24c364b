"""Every stored figure's smallest text is readable at a laptop's width.

At 1366 x 768 with JupyterLab's file browser open, a notebook's output area is about 934 px
wide; JupyterLab shows a wider image scaled down to fit it. A text drawn at ``s`` points in a
PNG of ``dpi`` dots per inch is ``s * dpi / 72`` px in the PNG, and so is seen at

    s * dpi / 72 * min(1, 934 / PNG width)   px,

which must be at least 9 px for every text of every figure.

A PNG does not say how large its texts are, so they are measured where the figure is drawn:
every kernel that stores outputs (``tools/run_notebooks.py``) or re-executes a notebook (nbval)
first runs :mod:`tools.figure_text`, which records every text the inline backend's draw of a
shown figure draws, refuses a figure whose smallest text is too small (the cell fails: nbval's run
of the notebook fails on it), and stores the measure in the PNG's output metadata. Here each
stored PNG must carry that measure, taken from this very PNG (the width it recorded is the
stored PNG's width, so an output stored by a kernel without the check, or edited, fails), and its
smallest text must be seen at 9 px or more. The last tests show that the measure refuses a figure
with 7 px text and that nbval's kernels run it.

Live labs draw through their own canvas, not the inline backend, and have their own text checks
(``tests/support/drawn_text.py``); the picture a lab stores beside its widget is left to those.
"""

from __future__ import annotations

import base64
import os
import re
import runpy
from pathlib import Path

import matplotlib.pyplot as plt  # Agg: tests/conftest.py chooses it before any test imports
import nbformat
import pytest
from IPython.core import pylabtools
from IPython.core.pylabtools import print_figure

from tools.figure_text import (
    KERNEL_STARTUP,
    MIN_TEXT_PX,
    OUTPUT_AREA_PX,
    RECORD,
    measured,
    png_width,
    seen_px,
)

ROOT = Path(__file__).resolve().parents[2]
WIDGET = "application/vnd.jupyter.widget-view+json"


def stored_figures(path: Path) -> list[tuple[int, dict | None]]:
    """(width of the PNG, its figure-text record or None) of every figure stored in the
    notebook, in order; a lab's picture for viewers without a kernel is not a shown figure."""
    figures = []
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            png = data.get("image/png")
            if png and WIDGET not in data:
                record = output.get("metadata", {}).get("image/png", {}).get(RECORD)
                figures.append((png_width(base64.b64decode(png[:64])), record))
    return figures


NOTEBOOKS = [path for path in sorted((ROOT / "notebooks").glob("*.ipynb")) if stored_figures(path)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_figure_text_is_readable_at_laptop_width(path: Path) -> None:
    too_small = []
    for n, (width, record) in enumerate(stored_figures(path), start=1):
        assert record is not None, (
            f"{path.name}, figure {n}: no text measure stored; run tools/run_notebooks.py"
        )
        assert record["png_width"] == width, (
            f"{path.name}, figure {n}: measured {record['png_width']} px wide, stored {width} px;"
            " run tools/run_notebooks.py"
        )
        if record["smallest_px"] is None:  # a figure without text
            continue
        seen = seen_px(record["smallest_px"], width)
        if seen < MIN_TEXT_PX:
            too_small.append(
                f"figure {n} ({width} px wide): its smallest text {record['smallest_text']!r} is"
                f" {record['smallest_px']:.1f} px, seen at {seen:.1f} px"
            )
    assert not too_small, f"{path.name}, in a {OUTPUT_AREA_PX} px output area: " + "; ".join(
        too_small
    )


def figure_with_title(points: float, width_inches: float = 4.0):
    """A figure ``width_inches`` wide at 100 dpi whose title is ``points`` points."""
    fig, ax = plt.subplots(figsize=(width_inches, 3), dpi=100)
    ax.set_title("the title", fontsize=points)
    ax.tick_params(labelsize=12)
    return fig


def test_the_measure_refuses_a_figure_with_7_px_text() -> None:
    fig = figure_with_title(7 * 72 / 100)  # 7 px at 100 dpi, in a PNG narrower than 934 px
    try:
        with pytest.raises(ValueError, match=r"'the title' is 7\.0 px .* seen at 7\.0 px"):
            measured(print_figure)(fig, "png", base64=True)
    finally:
        plt.close(fig)


def test_the_measure_scales_a_text_in_a_png_wider_than_the_output_area() -> None:
    fig = figure_with_title(10 * 72 / 100, width_inches=14)  # 10 px in a PNG over 1000 px wide
    try:
        with pytest.raises(ValueError, match=r"'the title' is 10\.0 px in a PNG") as refused:
            measured(print_figure)(fig, "png")
    finally:
        plt.close(fig)
    width = int(re.search(r"PNG (\d+) px wide", str(refused.value)).group(1))
    assert width > OUTPUT_AREA_PX
    assert f"seen at {10 * OUTPUT_AREA_PX / width:.1f} px" in str(refused.value)


def test_the_measure_of_a_readable_figure_is_stored_with_its_png() -> None:
    fig = figure_with_title(9 * 72 / 100)
    try:
        png, metadata = measured(print_figure)(fig, "png", base64=True)
        assert png == print_figure(fig, "png", base64=True)  # the PNG made without the measure
    finally:
        plt.close(fig)
    record = metadata[RECORD]
    assert record["png_width"] == png_width(base64.b64decode(png))
    assert (record["smallest_text"], round(record["smallest_px"], 6)) == ("the title", 9.0)


def test_the_kernels_the_suite_starts_install_the_measure(monkeypatch) -> None:
    # tools/pytest_startup.py names the file; nbval's kernels inherit this environment and
    # IPython runs it, with its folder on sys.path, in the notebook's namespace
    assert os.environ.get("PYTHONSTARTUP") == str(KERNEL_STARTUP)
    monkeypatch.setattr(pylabtools, "print_figure", pylabtools.print_figure)  # undone after
    monkeypatch.syspath_prepend(str(KERNEL_STARTUP.parent))
    namespace = runpy.run_path(str(KERNEL_STARTUP))
    assert getattr(pylabtools.print_figure, "measures_text", False)
    assert [name for name in namespace if not name.startswith("__")] == []
