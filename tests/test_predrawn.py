"""Frames drawn ahead (attnlib.widgets.predrawn): what a lab sends a browser that said "hello".

The browser half (predrawn.js) is checked in chromium by tests/test_labs_in_browser.py: there a
move to a state drawn ahead shows its picture with no picture from the kernel.
"""

from __future__ import annotations

import asyncio
import json

import ipywidgets as widgets
import numpy as np
import pytest

from attnlib.softmax import softmax
from attnlib.widgets import (
    gqa_lab,
    gradient_lab,
    masking_lab,
    saturation_lab,
    tiling_lab,
    trained_attention_lab,
)
from attnlib.widgets.gradients import D_K_OPTIONS, LAB_STEPS
from attnlib.widgets.live import Lab
from attnlib.widgets.predrawn import detached_copy, position, reachable, state_key


class StandInModel:
    """The trained-model lab's model, replaced: tokens split on spaces, seeded weights."""

    def attention(self, sentence: str) -> tuple[list[str], np.ndarray]:
        tokens = ["[CLS]", *sentence.lower().split(), "[SEP]"]
        T = len(tokens)
        rng = np.random.default_rng(len(sentence))
        return tokens, softmax(rng.normal(size=(2, 3, T, T)), axis=-1)


LABS = {
    "gradient_lab": lambda: gradient_lab(d_k=16, scaled=False, step=5),
    "gqa_lab": gqa_lab,
    "masking_lab": masking_lab,
    "saturation_lab": saturation_lab,
    "tiling_lab": tiling_lab,
    "trained_attention_lab": lambda: trained_attention_lab(StandInModel(), "it was late"),
}


def say_hello(lab: Lab) -> dict[tuple[str, ...], tuple[bytes, str, dict]]:
    """What the lab sends a browser that says "hello", by keys (no loop runs: sent at once)."""
    sent = {}

    def record(keys, picture, caption, readouts):
        sent[tuple(keys)] = (picture, caption, dict(readouts))

    lab.predrawn.send_frame = record
    lab.predrawn._handle_custom_msg({"type": "hello"}, [])
    return sent


@pytest.fixture(scope="module")
def greeted() -> dict[str, tuple[Lab, dict]]:
    """Each lab at its first state and what it sent on "hello" (drawing ~20-160 frames costs
    0.2-1.9 s of CPU per lab, so once per module)."""
    return {}


def greeted_lab(greeted: dict, name: str) -> tuple[Lab, dict]:
    if name not in greeted:
        lab = LABS[name]()
        greeted[name] = lab, say_hello(lab)
    return greeted[name]


def test_the_labs_here_are_every_lab_of_the_collection() -> None:
    import attnlib.widgets

    assert sorted(LABS) == sorted(n for n in attnlib.widgets.__all__ if n.endswith("_lab"))


# --- state keys ---------------------------------------------------------------------------------


def test_a_selection_stands_at_its_index_and_label() -> None:
    slider = widgets.SelectionSlider(options=[("a", 10), ("b", 20)], value=20)
    assert position(slider) == [1, "b"]


def test_a_number_stands_at_its_value_written_as_javascript_writes_it() -> None:
    assert position(widgets.IntSlider(value=3)) == 3
    assert position(widgets.FloatSlider(value=2.0)) == 2  # JSON.stringify(2.0) is "2"
    assert position(widgets.Checkbox(value=True)) is True


def test_a_state_key_is_json_without_spaces_or_escaped_letters() -> None:
    assert state_key([3, [1, "√d_k …"], True]) == '[3,[1,"√d_k …"],true]'
    assert json.loads(state_key([3, [1, "b"], False])) == [3, [1, "b"], False]


def test_reachable_lists_every_value_of_a_slider_a_selection_and_a_checkbox() -> None:
    assert reachable(widgets.IntSlider(value=2, min=1, max=7, step=3)) == [(1, 1), (4, 4), (7, 7)]
    selection = widgets.ToggleButtons(options=[("x", "first"), ("y", "second")])
    assert reachable(selection) == [([0, "x"], "first"), ([1, "y"], "second")]
    assert reachable(widgets.Checkbox()) == [(False, False), (True, True)]


def test_reachable_is_none_for_controls_whose_values_cannot_be_listed() -> None:
    assert reachable(widgets.Text()) is None
    assert reachable(widgets.FloatSlider()) is None
    assert reachable(widgets.IntRangeSlider()) is None


def test_a_detached_copy_has_the_controls_state_and_sends_nothing(monkeypatch) -> None:
    slider = widgets.SelectionSlider(options=[("a", 10), ("b", 20)], value=20)
    copy = detached_copy(slider)
    assert (copy.options, copy.value) == (slider.options, 20)
    fail = lambda **message: pytest.fail(f"sent {message}")  # noqa: E731
    monkeypatch.setattr(copy.comm, "send", fail, raising=False)
    copy.value = 10
    assert slider.value == 20
    copy.close()


# --- what a browser gets ------------------------------------------------------------------------


def test_hello_gets_the_current_state_and_every_state_one_move_away(greeted) -> None:
    _, sent = greeted_lab(greeted, "gradient_lab")  # d_k 16, not scaled, step 5
    d_k = [str(d) for d in D_K_OPTIONS]

    def key(d, scaled, step):
        return state_key([[d_k.index(str(d)), str(d)], scaled, step])

    expected = {key(16, False, 5), key(16, True, 5)}
    expected |= {key(d, False, 5) for d in D_K_OPTIONS}
    expected |= {key(16, False, s) for s in range(LAB_STEPS + 1)}
    assert {key for keys in sent for key in keys} == expected
    assert next(iter(sent)) == (key(16, False, 5),)  # the current state first


def test_frames_that_need_a_full_draw_come_after_every_cheaper_one(greeted) -> None:
    keys = [keys[0] for keys in greeted_lab(greeted, "gradient_lab")[1]]
    new_d_k = [i for i, k in enumerate(keys) if json.loads(k)[0][1] != "16"]
    assert min(new_d_k) == len(keys) - len(new_d_k)  # the other d_k (new backgrounds) last


@pytest.mark.parametrize("name", sorted(LABS))
def test_a_frame_drawn_ahead_is_what_the_lab_shows_when_moved_there(greeted, name: str) -> None:
    lab, sent = greeted_lab(greeted, name)
    assert len(sent) > 1
    start = {n: c.value for n, c in lab.controls.items()}
    here = json.loads(lab._state_key())
    checked = list(sent)[1::3][:8]  # a sample over every control drawn ahead
    for keys in checked:
        # the key before any control follows the move differs in the moved control only
        (moved,) = [i for i, (a, b) in enumerate(zip(here, json.loads(keys[0]))) if a != b]
        control = list(lab.controls.values())[moved]
        (value,) = [v for place, v in reachable(control) if place == json.loads(keys[0])[moved]]
        control.value = value
        assert lab._state_key() == keys[-1], f"{name}: where moving {control.description} led"
        picture, caption, readouts = sent[keys]
        assert picture == lab.live.image.value, f"{name}: the picture of {keys}"
        assert caption == lab.caption.value, f"{name}: the caption of {keys}"
        assert readouts == {n: r.value for n, r in lab.readouts.items()}, keys
        for control_name, value in start.items():  # back, for the next key
            lab.controls[control_name].value = value


def test_a_move_that_renames_options_is_drawn_ahead_under_both_keys(greeted) -> None:
    lab, sent = greeted_lab(greeted, "masking_lab")
    renamed = [keys for keys in sent if len(keys) == 2]
    assert renamed, "no move of the masking lab renames the query's options"
    before, after = (json.loads(key) for key in renamed[0])
    assert before[0][0] == after[0][0] and before[0][1] != after[0][1]  # same query, new label


def test_drawing_ahead_leaves_the_lab_on_its_state() -> None:
    lab = saturation_lab()
    state, picture = lab.state, lab.live.image.value
    say_hello(lab)
    assert lab.state is state and lab.live.image.value == picture
    lab.live.refresh()
    assert lab.live.image.value == picture  # the view was put back on the current state


def test_a_move_that_sync_controls_or_update_view_refuses_is_not_drawn_ahead() -> None:
    def refuse_two(controls: dict) -> None:
        if controls["n"].value == 2:
            raise ValueError("two is refused")

    def make_view(fig):
        return {"text": fig.text(0.5, 0.5, "")}, []

    def update_view(view, *, n):
        if n == 3:
            raise ValueError("three is refused")
        view["text"].set_text(str(n))
        return n

    controls = {"n": widgets.IntSlider(value=0, max=4, description="n")}
    lab = Lab(controls, make_view, update_view, figsize=(1, 1), sync_controls=refuse_two)
    sent = say_hello(lab)
    assert [json.loads(keys[0]) for keys in sent] == [[0], [1], [4]]


# --- a move from the browser --------------------------------------------------------------------


def browser_moves(lab: Lab, name: str, value) -> None:
    """A move of a control arriving from the browser, then one turn of the kernel's loop."""

    async def move() -> None:
        lab.controls[name].set_state({"value": value})  # what the comm handler calls
        await asyncio.sleep(0)

    asyncio.run(move())


def test_a_move_from_the_browser_to_a_state_it_has_draws_no_frame() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    frames = lab.live.frames
    browser_moves(lab, "query", 3)
    assert lab.live.frames == frames  # the browser shows the frame it has
    assert lab.state["query"] == 3
    assert lab.readouts["query"].value == "3"


def test_a_move_from_the_browser_to_a_state_it_lacks_is_drawn() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    lab.sent.pop(lab._state_key().replace(",2]", ",3]"))  # as if the browser dropped it
    frames = lab.live.frames
    browser_moves(lab, "query", 3)
    assert lab.live.frames == frames + 1


def test_want_of_the_current_state_draws_it_and_sends_its_frame_again() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    browser_moves(lab, "query", 3)  # drawn ahead: the kernel drew no frame of it
    frames, key = lab.live.frames, lab._state_key()
    sent_again = []
    lab.predrawn.send_frame = lambda key, *frame: sent_again.append(key)
    lab.predrawn._handle_custom_msg({"type": "want", "key": key}, [])
    assert lab.live.frames == frames + 1
    assert sent_again[0] == (key,)


def test_want_of_another_state_only_forgets_its_frame() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    other = lab._state_key().replace(",2]", ",4]")
    frames = lab.live.frames
    lab.predrawn._handle_custom_msg({"type": "want", "key": other}, [])
    assert other not in lab.sent
    assert lab.live.frames == frames
