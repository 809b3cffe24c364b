"""The gradient lab: what it shows comes from the training runs; every control changes it."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from attnlib.labs.gradient import (
    D_K_OPTIONS,
    LAB_LR,
    LAB_STEPS,
    gradient_caption,
    gradient_lab,
    gradient_state,
    training_runs,
)
from attnlib.retrieval import retrieval_problem, train_retrieval


@pytest.fixture(scope="module")
def runs():
    return training_runs()


@pytest.fixture(scope="module")
def shared_lab():
    return gradient_lab()


@pytest.fixture
def lab(shared_lab):
    """The module's lab with its controls back at their defaults (building one trains 8 runs)."""
    defaults = {"d_k": 256, "scaled": False, "step": 0}
    for name, value in defaults.items():
        shared_lab.controls[name].value = value
    assert shared_lab.values() == defaults
    return shared_lab


def drawn_weights(lab) -> np.ndarray:
    return np.asarray(lab.view["image"].get_array()).reshape(16, 16)


# --- the training runs and the plain state function -------------------------------------------


def test_there_is_a_scaled_and_an_unscaled_run_for_every_d_k(runs) -> None:
    assert set(runs) == {(d, s) for d in D_K_OPTIONS for s in (True, False)}
    for run in runs.values():
        assert run["weights"].shape == (LAB_STEPS + 1, 16, 16)


def test_each_run_is_train_retrieval_from_the_shared_start(runs) -> None:
    problem = retrieval_problem(d_k=64, seed=9)
    for scaled, scale in ((True, None), (False, 1.0)):
        expected = train_retrieval(problem, scale=scale, lr=LAB_LR, steps=LAB_STEPS)
        np.testing.assert_array_equal(runs[64, scaled]["loss"], expected["loss"])


def test_state_reads_the_chosen_run_at_the_chosen_step(runs) -> None:
    state = gradient_state(runs, 16, True, 37)
    run = runs[16, True]
    np.testing.assert_array_equal(state["weights"], run["weights"][37])
    assert state["loss"] == run["loss"][37]
    assert state["accuracy"] == run["accuracy"][37]
    assert state["found"] == round(16 * run["accuracy"][37])
    assert state["grad"] == pytest.approx(np.median(run["score_grad"][37]))
    np.testing.assert_allclose(run["score_grad_median"], np.median(run["score_grad"], axis=1))


def test_state_curves_hold_both_runs_of_the_chosen_d_k(runs) -> None:
    curves = gradient_state(runs, 64, False, 0)["curves"]
    np.testing.assert_array_equal(curves["loss_scaled"], runs[64, True]["loss"])
    np.testing.assert_array_equal(curves["loss_unscaled"], runs[64, False]["loss"])
    np.testing.assert_allclose(curves["grad_unscaled"], np.median(runs[64, False]["score_grad"], 1))


def test_at_d_k_256_the_scaled_run_finds_every_key_and_the_unscaled_run_stalls(runs) -> None:
    assert gradient_state(runs, 256, True, LAB_STEPS)["found"] == 16
    unscaled = gradient_state(runs, 256, False, LAB_STEPS)
    assert unscaled["found"] <= 2
    assert unscaled["grad"] < 1e-6 * gradient_state(runs, 256, False, 0)["grad"]


def test_at_d_k_4_the_scale_hardly_matters(runs) -> None:
    scaled = gradient_state(runs, 4, True, LAB_STEPS)["found"]
    unscaled = gradient_state(runs, 4, False, LAB_STEPS)["found"]
    assert abs(scaled - unscaled) <= 2


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"d_k": 32}, ValueError, r"d_k must be one of the trained key dimensions \[4, 16, 64"),
        ({"step": LAB_STEPS + 1}, ValueError, rf"step must be in \[0, {LAB_STEPS}\]"),
        ({"step": -1}, ValueError, "step must be >= 0"),
        ({"scaled": "yes"}, TypeError, "scaled must be True or False"),
    ],
)
def test_state_rejects_settings_off_the_controls(runs, settings, error, message) -> None:
    with pytest.raises(error, match=message):
        gradient_state(runs, **({"d_k": 256, "scaled": False, "step": 0} | settings))


def test_caption_states_the_setting_and_the_numbers(runs) -> None:
    state = gradient_state(runs, 256, False, 150)
    text = gradient_caption(state)
    assert text.startswith("d_k = 256, unscaled, step 150: loss ")
    assert f"loss {state['loss']:.3f}," in text
    assert f"{state['found']} of 16 queries find their key" in text
    assert f"median |dL/ds_i| = {state['grad']:.1e}" in text


# --- the lab ----------------------------------------------------------------------------------


def test_the_controls_are_d_k_scaled_and_step_and_nothing_failed(lab) -> None:
    assert set(lab.controls) == {"d_k", "scaled", "step"}
    assert isinstance(lab, widgets.VBox) and lab.last_error is None


def test_step_slider_moves_the_weights_the_markers_and_the_readout(lab) -> None:
    frames = lab.live.frames
    lab.controls["step"].value = 3
    np.testing.assert_array_equal(drawn_weights(lab), lab.state["weights"])
    for key in ("loss", "grad"):
        marker, cursor = lab.view["lines"][key][2], lab.view["lines"][key][3]
        assert marker.get_xdata()[0] == 3 and cursor.get_xdata()[0] == 3
    assert lab.view["lines"]["loss"][2].get_ydata()[0] == pytest.approx(lab.state["loss"])
    assert "step 3:" in lab.caption.value
    assert lab.live.frames == frames + 1


def test_scaled_checkbox_switches_the_run_shown(lab, runs) -> None:
    lab.controls["step"].value = 60
    lab.controls["scaled"].value = True
    np.testing.assert_array_equal(drawn_weights(lab), runs[256, True]["weights"][60])
    assert ", scaled," in lab.caption.value
    lab.controls["scaled"].value = False
    np.testing.assert_array_equal(drawn_weights(lab), runs[256, False]["weights"][60])
    assert ", unscaled," in lab.caption.value


def test_d_k_slider_redraws_both_curves(lab, runs) -> None:
    lab.controls["d_k"].value = 16
    scaled_line, raw_line = lab.view["lines"]["loss"][:2]
    np.testing.assert_array_equal(scaled_line.get_ydata(), runs[16, True]["loss"])
    np.testing.assert_array_equal(raw_line.get_ydata(), runs[16, False]["loss"])
    np.testing.assert_array_equal(drawn_weights(lab), runs[16, False]["weights"][0])


def test_gradients_below_the_axis_floor_are_drawn_on_the_floor(lab) -> None:
    lab.controls["step"].value = LAB_STEPS
    raw_line = lab.view["lines"]["grad"][1]
    bottom = lab.view["lines"]["grad"][0].axes.get_ylim()[0]
    assert np.min(raw_line.get_ydata()) >= bottom
    assert np.isfinite(raw_line.get_ydata()).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"d_k": 32}, "d_k must be one of"), ({"step": LAB_STEPS + 1}, "step must be in")],
)
def test_lab_rejects_a_start_off_its_controls(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        gradient_lab(**kwargs)


# --- the picture at both sizes ----------------------------------------------------------------


@pytest.fixture(scope="module", params=[False, True], ids=["notebook", "present"])
def sized_lab(request):
    return gradient_lab(present=request.param)


def test_step_markers_are_drawn_whole_inside_their_panels_at_every_step(sized_lab, runs) -> None:
    # at step 0, at each curve's largest value and on the gradient axis' floor alike
    renderer = sized_lab.live.canvas.get_renderer()
    px_per_pt = sized_lab.live.figure.dpi / 72
    steps = np.arange(LAB_STEPS + 1)
    for key, column in (("loss", "loss"), ("grad", "score_grad_median")):
        marker = sized_lab.view["lines"][key][2]
        ax = marker.axes
        panel = ax.get_window_extent(renderer)
        radius = (marker.get_markersize() + marker.get_markeredgewidth()) / 2 * px_per_pt
        low = 1e-12 if key == "grad" else -np.inf
        for run in runs.values():
            ys = np.maximum(run[column], low)
            for x, y in ax.transData.transform(np.column_stack([steps, ys])):
                assert panel.x0 + radius <= x <= panel.x1 - radius, (key, x, panel.bounds)
                assert panel.y0 + radius <= y <= panel.y1 - radius, (key, y, panel.bounds)


def test_the_gradient_floor_tick_says_smaller_norms_are_drawn_there(lab) -> None:
    ax = lab.view["lines"]["grad"][0].axes
    labels = {tick: label.get_text() for tick, label in zip(ax.get_yticks(), ax.get_yticklabels())}
    assert labels[1e-12] == r"$\leq\mathdefault{10^{-12}}$"
    assert labels[1e-2] == r"$\mathdefault{10^{-2}}$"
