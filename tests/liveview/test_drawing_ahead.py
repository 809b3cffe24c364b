"""Frames drawn ahead (attnlib.liveview.ahead): what a lab sends a browser that said "hello".

The browser half (frames.js) is checked in chromium by tests/browser/test_labs_in_browser.py:
there a move to a state drawn ahead shows its picture with no picture from the kernel.
"""

from __future__ import annotations

import asyncio
import json

import ipywidgets as widgets
import pytest
from lab_factories import LAB_NAMES, make_lab, record_frames

from attnlib.labs import gradient_lab, saturation_lab
from attnlib.labs.gradient import D_K_OPTIONS, LAB_STEPS
from attnlib.liveview.keys import detached_copy, position, reachable, state_key
from attnlib.liveview.lab import Lab

LABS = {name: (lambda name=name: make_lab(name)) for name in LAB_NAMES}
LABS["gradient_lab"] = lambda: gradient_lab(d_k=16, scaled=False, step=5)


def say_hello(lab: Lab) -> dict:
    """What the lab sends a browser that says "hello", by keys (no loop runs: sent at once)."""
    return record_frames(lab)


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


def test_a_move_that_renames_options_is_drawn_ahead_under_both_keys(greeted) -> None:
    lab, sent = greeted_lab(greeted, "masking_lab")
    renamed = [keys for keys in sent if len(keys) == 2]
    assert renamed, "no move of the masking lab renames the query's options"
    before, after = (json.loads(key) for key in renamed[0])
    assert before[0][0] == after[0][0] and before[0][1] != after[0][1]  # same query, new label


def test_drawing_ahead_leaves_the_lab_on_its_state() -> None:
    lab = saturation_lab()
    values, picture = lab.values(), lab.picture.value
    say_hello(lab)
    assert lab.values() == values
    assert lab.live.render() == picture  # the view was put back on the current state


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


def sends_after(lab: Lab) -> list[tuple[str, ...]]:
    """Record the keys of every frame the lab sends from now on."""
    sent: list[tuple[str, ...]] = []
    lab.store.send_frame = lambda keys, frame, drop=(): sent.append(tuple(keys))
    return sent


def test_a_move_from_the_browser_to_a_state_it_holds_sends_no_frame_of_it() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    sent = sends_after(lab)
    browser_moves(lab, "query", 3)
    assert lab.state["query"] == 3
    assert all(lab.state_key() not in keys for keys in sent)  # the browser shows its own


def test_a_move_from_the_browser_to_a_state_it_lacks_sends_that_frame_first() -> None:
    lab = saturation_lab(query=2)
    say_hello(lab)
    lab.ahead.sent.pop(lab.state_key().replace(",2]", ",3]"))  # as if never sent
    sent = sends_after(lab)
    browser_moves(lab, "query", 3)
    assert sent[0] == (lab.state_key(),)


def test_the_kernel_tells_the_browser_which_frames_to_drop_so_its_record_is_exact() -> None:
    lab = saturation_lab()
    browser: set[str] = set()  # the keys a browser's store holds, applying every message

    def store(keys, frame, drop=()):
        browser.difference_update(drop)
        browser.update(keys)

    lab.store.send_frame = store
    lab.store.receive({"type": "hello"})
    lab.ahead.capacity = len(lab.ahead.sent) - 5
    for scaled in (True, False, True):
        lab.controls["scaled"].value = scaled  # new frames to send, old ones to drop
    assert browser == set(lab.ahead.sent)
    assert len(browser) == lab.ahead.capacity
