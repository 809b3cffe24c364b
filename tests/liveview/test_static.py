"""attnlib.liveview.static: a lab's static form, every state its controls reach with the frame
the lab draws there (what the site shows without a kernel)."""

from __future__ import annotations

import json

import ipywidgets as widgets
import ipywidgets.widgets.widget as widget_module
import numpy as np
import pytest

from attnlib.liveview.lab import Lab
from attnlib.liveview.static import STATE_FIELDS, control_kind, static_form

X = np.linspace(0, 1, 5)


def make_view(fig):
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 4)
    (line,) = ax.plot([], [])
    return {"line": line}, [line]


def update_view(view, *, slope, shifted, mode="line"):
    view["line"].set_data(X, slope * X + (0.5 if shifted else 0.0))
    return {"slope": slope, "shifted": shifted, "mode": mode}


def caption(state) -> str:
    return f"slope {state['slope']}\nshifted {state['shifted']}"


def toy_lab(slope: int = 1, shifted: bool = False) -> Lab:
    """Three slopes and a checkbox: six states, no followers."""
    controls = {
        "slope": widgets.IntSlider(value=slope, min=0, max=2, description="slope"),
        "shifted": widgets.Checkbox(value=shifted, description="shift up"),
    }
    return Lab(controls, make_view, update_view, figsize=(3, 2), dpi=40, caption=caption)


def follow_mode(controls) -> None:
    """A follower: in mode "flat", the slope slider offers 0 alone."""
    slider = controls["slope"]
    flat = controls["mode"].value == "flat"
    wanted = (0,) if flat else (0, 1, 2)
    if tuple(slider.options) != wanted:
        with slider.hold_sync():
            slider.options = wanted
            slider.value = 0 if flat else slider.value


def follower_lab() -> Lab:
    """A mode (toggle buttons) whose "flat" option leaves the slope slider one option."""
    controls = {
        "slope": widgets.SelectionSlider(options=(0, 1, 2), value=2, description="slope"),
        "shifted": widgets.Checkbox(value=False, description="shift up"),
        "mode": widgets.ToggleButtons(options=["line", "flat"], value="line", description="mode"),
    }
    return Lab(controls, make_view, update_view, figsize=(3, 2), dpi=40, sync_controls=follow_mode)


def test_the_first_state_is_the_labs_current_state() -> None:
    lab = toy_lab(slope=2, shifted=True)
    assert static_form(lab).first == lab.state_key()


def test_without_followers_the_states_are_every_combination_of_the_controls_options() -> None:
    form = static_form(toy_lab())
    assert len(form.states) == 3 * 2
    assert form.aliases == {}


def test_every_states_frame_is_the_one_the_live_lab_shows_there() -> None:
    form = static_form(toy_lab())
    for state in form.states.values():
        live = toy_lab(**state.values)
        frame = live.current_frame()
        assert form.pictures[state.picture] == frame.picture
        assert (state.caption, state.alt) == (frame.caption, frame.alt)


def test_equal_pictures_are_stored_once() -> None:
    form = static_form(follower_lab())
    # "flat" (slope 0) draws the picture of slope 0 in "line": one stored picture for both
    assert len(form.pictures) < len(form.states)
    assert set(form.pictures) == {state.picture for state in form.states.values()}


def test_a_move_that_moves_a_follower_is_stored_under_the_key_before_it() -> None:
    lab = follower_lab()
    form = static_form(lab)
    before = lab.state_key().replace('[0,"line"]', '[1,"flat"]')
    reached = form.aliases[before]
    assert json.loads(reached)[0] == [0, "0"]  # the slope followed to its one option
    assert form.states[reached].options[0] == (('[0,"0"]', "0"),)


def test_a_grid_keeps_the_options_it_names_and_the_one_a_state_stands_at() -> None:
    form = static_form(toy_lab(slope=1), keep={"slope": lambda label: label == "2"})
    first = form.states[form.first]
    assert [label for _, label in first.options[0]] == ["1", "2"]
    assert {state.values["slope"] for state in form.states.values()} == {1, 2}


def test_a_grid_naming_no_control_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"keep names no control of the lab: \['slop'\]"):
        static_form(toy_lab(), keep={"slop": lambda label: True})


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"lab": "a lab"}, TypeError, "lab must be an attnlib.liveview.Lab; got str"),
        ({"limit": 0}, ValueError, "limit must be a positive integer; got 0"),
        ({"keep": {"slope": "2"}}, TypeError, r"keep must map .* not: \['slope'\]"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        static_form(**({"lab": toy_lab()} | kwargs))


def test_more_states_than_the_limit_asks_for_a_grid() -> None:
    with pytest.raises(ValueError, match=r"more than 4 states: store a grid"):
        static_form(toy_lab(), limit=4)


def test_every_copy_of_the_controls_is_closed_even_when_the_walk_stops_early() -> None:
    lab = toy_lab()
    alive = set(widget_module._instances)
    with pytest.raises(ValueError):
        static_form(lab, limit=4)
    static_form(lab)
    assert set(widget_module._instances) == alive


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda: widgets.Checkbox(description="c"), "checkbox"),
        (lambda: widgets.ToggleButtons(options=["a", "b"], description="t"), "buttons"),
        (lambda: widgets.IntSlider(description="i"), "slider"),
        (lambda: widgets.SelectionSlider(options=["a", "b"], description="s"), "slider"),
        (lambda: widgets.Dropdown(options=["a", "b"], description="d"), "select"),
        (lambda: widgets.Combobox(options=["a", "b"], value="a", description="b"), "select"),
    ],
    ids=["Checkbox", "ToggleButtons", "IntSlider", "SelectionSlider", "Dropdown", "Combobox"],
)
def test_each_control_is_shown_as_its_kind(make, kind: str) -> None:
    control = make()
    assert control_kind(control) == kind
    control.close()


def test_a_control_whose_values_cannot_be_listed_is_refused_by_its_class() -> None:
    with pytest.raises(TypeError, match="FloatSlider"):
        control_kind(widgets.FloatSlider(description="f"))


def test_the_manifest_is_json_and_a_states_options_spell_its_key() -> None:
    form = static_form(follower_lab())
    manifest = json.loads(json.dumps(form.manifest("pictures")))
    assert manifest["fields"] == list(STATE_FIELDS)
    for key, row in manifest["states"].items():
        state = dict(zip(manifest["fields"], row))
        places = [manifest["options"][o][at][0] for o, at in zip(state["options"], state["at"])]
        assert "[" + ",".join(places) + "]" == key  # how static.js builds a key


def test_the_manifest_stores_each_text_and_option_list_once() -> None:
    manifest = static_form(toy_lab()).manifest("pictures")
    assert len(manifest["texts"]) == len(set(manifest["texts"]))
    assert len(manifest["options"]) == len({json.dumps(o) for o in manifest["options"]})


def test_the_first_states_manifest_holds_that_state_alone() -> None:
    form = static_form(toy_lab())
    manifest = form.manifest("pictures", first_only=True)
    assert list(manifest["states"]) == [form.first]
    assert manifest["aliases"] == {} and len(manifest["pictures"]) == 1
