"""The contract every lab of attnlib.labs meets, at notebook and at present size.

A lab added to ``attnlib.labs.__all__`` is checked here with nothing more to write: its text is
large enough and no text covers another, a partial redraw gives the pixels of a full one over
states its controls reach, a frame drawn ahead is the frame the lab draws when moved there, an
error is shown in the lab (not raised into the notebook), the lab fits a projector's screen in
present mode, and the lab bench has its card. With drawing ahead off (``ATTNLIB_DRAW_AHEAD=0``,
the fallback of :mod:`attnlib.liveview.showing`) the lab makes no frame store and every move sets
its picture, caption and readouts to the very frame the lab draws with drawing ahead on.

Drawing is what costs, so each lab at each size is driven once (:func:`contract_run`) and each
state's drawing serves every check: the frame its move drew is compared with a full redraw of
the same state, and that full redraw's texts are the ones measured for size and overlap.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest
from drawn_text import NOTEBOOK_MIN_TEXT_PX, text_faults
from lab_factories import LAB_NAMES, make_lab, record_frames

from attnlib.liveview.keys import reachable
from attnlib.liveview.present import (
    PRESENT_MIN_SHOWN_PX,
    PRESENT_MIN_TEXT_PX,
    PRESENT_SCREENS,
    PRESENT_WIDTH_PX,
    present_height_px,
)

SIZES = {"notebook": False, "present": True}
BENCH = Path(__file__).resolve().parents[2] / "notebooks" / "lab_bench.ipynb"
CELLS = nbformat.read(BENCH, as_version=4).cells
CARD = ("**Ask.**", "**Drag, in order.**", "*Predict", "**Notice.**", "**Likely question.**")


def lab_cell_index(name: str) -> int | None:
    """The index of the bench's cell that shows ``name(...present=True...)``."""
    for i, cell in enumerate(CELLS):
        if cell.cell_type == "code" and re.search(rf"^{name}\(.*present=True", cell.source, re.M):
            return i
    return None


class Seen(NamedTuple):
    """What one state of a lab showed: the move that led there and each measure of its frame."""

    move: tuple[str, object]
    error: BaseException | None
    smallest_text_px: float
    text_faults: list[str]
    partial: bytes | None  # the frame the move drew (None: the state raised)
    full: bytes  # the same state redrawn in full


class Arrival(NamedTuple):
    """A frame drawn ahead, and what the lab showed when moved to its state."""

    keys: tuple[str, ...]
    move: tuple[str, object]
    key_there: str
    frame_there: object
    drawn_ahead: object


class Run(NamedTuple):
    name: str
    lab: object
    seen: list[Seen]
    frames_ahead: int
    arrivals: list[Arrival]


@functools.cache
def contract_run(name: str, size: str) -> Run:
    """One pass over a new lab that every contract test reads: each sampled state drawn once
    (its frame, then a full redraw whose texts are measured), then every frame drawn ahead and
    a sample of them arrived at. Cached, so that the tests share it in any order."""
    lab = make_lab(name, present=SIZES[size])
    seen, checked = [], None
    for move in visit(lab, sampled_moves(lab)):
        if (lab.state_key(), lab.live.frames) == checked:
            continue  # the move changed nothing (the control was there): this frame was checked
        error, smallest = lab.last_error, lab.smallest_text_px()
        partial = lab.current_frame().picture if error is None else None
        redrawn: list[bytes] = []
        faults = text_faults(lab, draw=functools.partial(redraw_in_full, lab, redrawn))
        seen.append(Seen(move, error, smallest, faults, partial, redrawn[0]))
        checked = (lab.state_key(), lab.live.frames)
    sent = record_frames(lab)
    lab.store.greeted = False  # from here on the lab shows its frames itself, to compare
    here = json.loads(lab.state_key())

    def moved(keys: tuple[str, ...]) -> int:
        """The place of the control whose move a frame drawn ahead shows."""
        (place,) = [i for i, (a, b) in enumerate(zip(here, json.loads(keys[0]))) if a != b]
        return place

    # Arrived at: the first frame drawn ahead (the nearest move) and, for every control, its
    # frame drawn last (its farthest move, or one that needed a full draw: those come after all
    # the others), so that every control's frames are sampled, early and late ones.
    ahead = list(sent)[1:]
    last_of = {moved(keys): keys for keys in ahead}
    arrivals = []
    for keys in dict.fromkeys([*ahead[:1], *last_of.values()]):
        control_name, control = list(lab.controls.items())[moved(keys)]
        place = json.loads(keys[0])[moved(keys)]
        (value,) = [v for at, v in reachable(control) if at == place]
        for move in visit(lab, [(control_name, value)]):
            arrivals.append(Arrival(keys, move, lab.state_key(), lab.current_frame(), sent[keys]))
    return Run(name, lab, seen, len(sent), arrivals)


def redraw_in_full(lab, pictures: list[bytes]) -> None:
    """Redraw the lab's state in full, then give it back the backgrounds it had cached (a full
    redraw forgets them), so that the next move draws the partial frame it would have drawn."""
    cached = dict(lab.live._backgrounds)
    pictures.append(lab.live.render(full=True))
    lab.live._backgrounds.clear()
    lab.live._backgrounds.update(cached)


@pytest.fixture(params=[(n, s) for n in LAB_NAMES for s in SIZES], ids="-".join)
def run(request) -> Run:
    return contract_run(*request.param)


@pytest.fixture
def lab(run):
    return run.lab


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


def test_every_text_is_above_the_floor_and_none_covers_another(run) -> None:
    floor = PRESENT_MIN_TEXT_PX if run.lab.present else NOTEBOOK_MIN_TEXT_PX
    assert run.seen
    for seen in run.seen:
        assert seen.smallest_text_px >= floor - 1e-9, seen.move
        assert seen.text_faults == [], seen.move


def test_a_partial_redraw_gives_the_pixels_of_a_full_redraw(run) -> None:
    for seen in run.seen:
        assert seen.error is None, (*seen.move, seen.error)
        assert seen.full == seen.partial, "{}={!r}".format(*seen.move)


def test_a_frame_drawn_ahead_is_the_frame_drawn_on_arrival(run) -> None:
    assert run.frames_ahead > 1
    for arrival in run.arrivals:
        assert arrival.key_there == arrival.keys[-1], f"where moving {arrival.move[0]} led"
        assert arrival.frame_there == arrival.drawn_ahead, f"the frame of {arrival.keys}"


def test_without_drawing_ahead_every_move_shows_the_frame_drawn_with_it(run, monkeypatch) -> None:
    monkeypatch.setenv("ATTNLIB_DRAW_AHEAD", "0")
    lab = make_lab(run.name, present=run.lab.present)
    assert lab.store is None and lab.ahead is None
    moves = [seen.move for seen in run.seen]
    for move, seen in zip(visit(lab, moves), run.seen, strict=False):
        if seen.partial is None:  # that state is refused: the lab says so
            assert lab.last_error is not None, move
            continue
        frame = lab.current_frame()
        assert lab.picture.value == frame.picture == seen.partial, "{}={!r}".format(*move)
        assert lab.caption.value == frame.caption, move
        assert {n: r.value for n, r in lab.readouts.items()} == frame.readouts, move


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
def test_in_present_mode_the_lab_fits_a_projector_and_a_full_hd_screen(name: str) -> None:
    """Title, controls, caption and picture together, in the state the lab starts in (the
    bench's), added up from the figure's size and the heights the page gives each part
    (present.present_height_px; the browser test measures the real ones): on full HD the
    picture is shown 1:1; on a 1280 x 720 projector it may shrink to fit, but not below
    PRESENT_MIN_SHOWN_PX (where its text is as large on the wall as on full HD). A caption that
    wraps later shrinks the picture in the page (present.PRESENT_CSS)."""
    lab = contract_run(name, "present").lab  # a notebook-size lab scrolls with its notebook
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
