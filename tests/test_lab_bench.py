"""notebooks/lab_bench.ipynb: every lab of the collection, at projector size, with its lab card."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

import attnlib.widgets

BENCH = Path(__file__).resolve().parents[1] / "notebooks" / "lab_bench.ipynb"
LABS = [name for name in attnlib.widgets.__all__ if name.endswith("_lab")]
CELLS = nbformat.read(BENCH, as_version=4).cells
CARD = ("**Ask.**", "**Drag, in order.**", "*Predict", "**Notice.**", "**Likely question.**")


def lab_cell_index(name: str) -> int | None:
    for i, cell in enumerate(CELLS):
        if cell.cell_type == "code" and re.search(rf"^{name}\(.*present=True", cell.source, re.M):
            return i
    return None


@pytest.mark.parametrize("name", LABS)
def test_every_lab_of_the_collection_is_on_the_bench_at_presenting_size(name: str) -> None:
    assert lab_cell_index(name) is not None, f"{name}(present=True) is missing from {BENCH.name}"


@pytest.mark.parametrize("name", LABS)
def test_every_lab_on_the_bench_has_a_lab_card_just_above_it(name: str) -> None:
    i = lab_cell_index(name)
    assert i is not None and CELLS[i - 1].cell_type == "markdown"
    missing = [part for part in CARD if part not in CELLS[i - 1].source]
    assert not missing, f"the card above {name} lacks {missing}"
