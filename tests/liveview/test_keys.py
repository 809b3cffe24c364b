"""attnlib.liveview.keys: the one file that reads ipywidgets' private parts. An ipywidgets
release that changes them fails here first, before any lab misbehaves."""

from __future__ import annotations

import ipywidgets as widgets

from attnlib.liveview.keys import (
    detached_copy,
    option_labels,
    position,
    reachable,
    set_by_browser,
    state_key,
)


def test_option_labels_are_a_selections_labels_and_none_for_other_controls() -> None:
    slider = widgets.SelectionSlider(options=[("one", 1), ("two", 2)], value=2)
    assert tuple(option_labels(slider)) == ("one", "two")
    assert option_labels(widgets.IntSlider()) is None


def test_a_change_the_browser_sends_is_told_from_one_kernel_code_makes() -> None:
    slider, seen = widgets.IntSlider(value=1, max=9), []
    slider.observe(lambda change: seen.append(set_by_browser(change)), names="value")
    slider.value = 2  # kernel code
    slider.set_state({"value": 3})  # what ipywidgets does with the browser's message
    assert seen == [False, True]


def test_a_detached_copy_moves_without_touching_the_control() -> None:
    slider = widgets.SelectionSlider(options=["a", "b", "c"], value="b")
    copy = detached_copy(slider)
    copy.value = "c"
    assert slider.value == "b" and position(copy) == [2, "c"]
    copy.close()


def test_a_state_key_is_the_positions_as_json_writes_them() -> None:
    controls = [widgets.SelectionSlider(options=["x", "y"], value="y"), widgets.FloatSlider(2.0)]
    assert state_key([position(c) for c in controls]) == '[[1,"y"],2]'
    assert reachable(controls[0]) == [([0, "x"], "x"), ([1, "y"], "y")]
    assert reachable(controls[1]) is None
