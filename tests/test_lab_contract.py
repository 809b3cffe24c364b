"""The contract every lab of attnlib.labs meets, at notebook and at present size.

A lab added to ``attnlib.labs.__all__`` is checked here with nothing more to write: its text is
large enough and no text covers another, a partial redraw gives the pixels of a full one over
states its controls reach, a frame drawn ahead is the frame the lab draws when moved there, an
error is shown in the lab (not raised into the notebook), the lab fits a projector's screen in
present mode, and the lab bench has its card.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from drawn_text import NOTEBOOK_MIN_TEXT_PX, text_faults
from lab_factories import LAB_NAMES, make_lab, record_frames

from attnlib.labs.present import (
    PRESENT_MIN_SHOWN_PX,
    PRESENT_MIN_TEXT_PX,
    PRESENT_SCREENS,
    PRESENT_WIDTH_PX,
    present_height_px,
)
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


def test_in_present_mode_the_lab_fits_a_projector_and_a_full_hd_screen(lab) -> None:
    """Title, controls, caption and picture together, in the state the lab starts in (the
    bench's), added up from the figure's size and the heights the page gives each part
    (present.present_height_px; the browser test measures the real ones): on full HD the
    picture is shown 1:1; on a 1280 x 720 projector it may shrink to fit, but not below
    PRESENT_MIN_SHOWN_PX (where its text is as large on the wall as on full HD). A caption that
    wraps later shrinks the picture in the page (present.PRESENT_CSS)."""
    if not lab.present:
        pytest.skip("a notebook-size lab scrolls with its notebook; the screens are present mode's")
    figsize = lab.live.figure.get_size_inches()
    title = any("attnlib-title" in child._dom_classes for child in lab.children)
    for screen in PRESENT_SCREENS:
        height = present_height_px(figsize, lab.controls.values(), lab.caption.value, title, screen)
        where = f"{screen[0]} x {screen[1]}: {height}"
        assert height["shown_width"] >= PRESENT_MIN_SHOWN_PX, where
        if height["picture_width"] == PRESENT_WIDTH_PX:  # a screen wide enough for 1:1
            assert height["total"] <= screen[1], where


@pytest.mark.parametrize("name", LAB_NAMES)
def test_the_lab_bench_shows_the_lab_at_present_size_under_its_card(name: str) -> None:
    i = lab_cell_index(name)
    assert i is not None, f"{name}(present=True) is missing from the lab bench"
    missing = [part for part in CARD if part not in CELLS[i - 1].source]
    assert not missing, f"the card above {name} lacks {missing}"
