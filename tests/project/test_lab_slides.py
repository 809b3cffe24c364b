"""notebooks/lab_slides.ipynb: the labs as a reveal.js deck, each lab card as its speaker notes."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

import attnlib.labs

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
DECK = nbformat.read(NOTEBOOKS / "lab_slides.ipynb", as_version=4)
BENCH = nbformat.read(NOTEBOOKS / "lab_bench.ipynb", as_version=4).cells
LABS = [name for name in attnlib.labs.__all__ if name.endswith("_lab")]


def slide_type(cell) -> str:
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def lab_cell(cells, name: str) -> int:
    found = [
        i
        for i, cell in enumerate(cells)
        if cell.cell_type == "code" and re.search(rf"^{name}\(", cell.source, re.M)
    ]
    assert len(found) == 1, f"{name} appears {len(found)} times"
    return found[0]


def test_the_deck_asks_voila_for_the_reveal_template() -> None:
    assert DECK.metadata.get("voila", {}).get("template") == "reveal"


@pytest.mark.parametrize("name", LABS)
def test_every_lab_opens_a_slide_of_its_own(name: str) -> None:
    i = lab_cell(DECK.cells, name)
    assert slide_type(DECK.cells[i]) == "-", "the lab shares the slide of its question"
    assert slide_type(DECK.cells[i - 1]) == "slide", "the lab's question does not open a slide"


@pytest.mark.parametrize("name", LABS)
def test_every_lab_slide_has_the_bench_card_as_speaker_notes(name: str) -> None:
    i = lab_cell(DECK.cells, name)
    notes = DECK.cells[i + 1]
    assert slide_type(notes) == "notes"
    assert notes.source == BENCH[lab_cell(BENCH, name) - 1].source, (
        "the notes differ from the lab bench's card: copy the card over"
    )
