"""The contract every lab of attnlib.labs meets, at notebook and at present size.

A lab added to ``attnlib.labs.__all__`` is checked here with nothing more to write: its text is
large enough and no text covers another, a partial redraw gives the pixels of a full one over
states its controls reach, a frame drawn ahead is the frame the lab draws when moved there, an
error is shown in the lab (not raised into the notebook), and the lab bench has its card.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from drawn_text import NOTEBOOK_MIN_TEXT_PX, text_faults
from lab_factories import LAB_NAMES, make_lab, record_frames

from attnlib.labs.present import PRESENT_MIN_TEXT_PX
from attnlib.labs.states import reachable

SIZES = {"notebook": False, "present": True}
BENCH = Path(__file__).resolve().parents[1] / "notebooks" / "lab_bench.ipynb"
CELLS = nbformat.read(BENCH, as_version=4).cells
CARD = ("**Ask.**", "**Drag, in order.**", "*Predict", "**Notice.**", "**Likely question.**")


def lab_cell_index(name: str) -> int | None:
    """The index of the bench's cell that shows ``name(...present=True...)``."""
    for i, cell in enumerate(CELLS):
        if cell.cell_type == "code" and re.search(rf"^{name}\(.*present=True", cell.source, re.M):
            return i
    return None


@pytest.fixture(scope="module", params=[(n, s) for n in LAB_NAMES for s in SIZES], ids="-".join)
def lab(request):
    name, size = request.param
    return make_lab(name, present=SIZES[size])


def sampled_moves(lab) -> list[tuple[str, object]]:
    """For each control whose values can be listed: its first, middle and last value."""
    moves = []
    for name, control in lab.controls.items():
        values = [value for _, value in reachable(control) or []]
        moves += [
            (name, values[i]) for i in sorted({0, len(values) // 2, len(values) - 1}) if values
        ]
    return moves


def visit(lab, moves):
    """Move each control in turn, then put every control back where it was."""
    start = lab.values()
    for name, value in moves:
        lab.controls[name].value = value
        yield name, value
    for name, value in start.items():
        lab.controls[name].value = value


def test_every_text_is_above_the_floor_and_none_covers_another(lab) -> None:
    floor = PRESENT_MIN_TEXT_PX if lab.present else NOTEBOOK_MIN_TEXT_PX
    for name, value in visit(lab, sampled_moves(lab)):
        assert lab.smallest_text_px() >= floor - 1e-9, (name, value)
        assert text_faults(lab) == [], (name, value)


def test_a_partial_redraw_gives_the_pixels_of_a_full_redraw(lab) -> None:
    for name, value in visit(lab, sampled_moves(lab)):
        assert lab.last_error is None, (name, value, lab.last_error)
        partial = lab.current_frame().picture
        assert lab.live.render(full=True) == partial, f"{name}={value!r}"


def test_a_frame_drawn_ahead_is_the_frame_drawn_on_arrival(lab) -> None:
    sent = record_frames(lab)
    assert len(sent) > 1
    lab.store.greeted = False  # from here on the lab shows its frames itself, to compare
    here = json.loads(lab.state_key())
    for keys in list(sent)[1::5][:6]:  # a sample over every control drawn ahead
        (moved,) = [i for i, (a, b) in enumerate(zip(here, json.loads(keys[0]))) if a != b]
        name, control = list(lab.controls.items())[moved]
        (value,) = [v for place, v in reachable(control) if place == json.loads(keys[0])[moved]]
        for _ in visit(lab, [(name, value)]):
            assert lab.state_key() == keys[-1], f"where moving {name} led"
            assert lab.current_frame() == sent[keys], f"the frame of {keys}"


def test_an_error_is_shown_in_the_lab_as_one_sentence_not_raised(lab, monkeypatch) -> None:
    def refuse(view, **values):
        raise ValueError("this state is refused")

    monkeypatch.setattr(lab, "_update_view", refuse)
    name, value = sampled_moves(lab)[-1]
    before = lab.controls[name].value
    lab.controls[name].value = value if value != before else sampled_moves(lab)[0][1]
    assert isinstance(lab.last_error, ValueError)
    assert "this state is refused" in lab.errors.value and "Traceback" not in lab.errors.value
    monkeypatch.undo()
    lab.controls[name].value = before
    assert lab.last_error is None and lab.errors.value == ""


@pytest.mark.parametrize("name", LAB_NAMES)
def test_the_lab_bench_shows_the_lab_at_present_size_under_its_card(name: str) -> None:
    i = lab_cell_index(name)
    assert i is not None, f"{name}(present=True) is missing from the lab bench"
    missing = [part for part in CARD if part not in CELLS[i - 1].source]
    assert not missing, f"the card above {name} lacks {missing}"
