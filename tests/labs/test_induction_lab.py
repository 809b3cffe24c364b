"""The induction lab: a training-step slider over a trained model's checkpoints, the loss on
repeats with the step marked, and the two heads' patterns and scores at that step."""

from __future__ import annotations

import numpy as np
import pytest
from lab_factories import induction_model

from attnlib.examples import induction_held_out
from attnlib.induction import head_scores, loss_on_repeats, run, training_curves
from attnlib.labs import induction_lab
from attnlib.labs.induction import induction_state


@pytest.fixture(scope="module")
def trained():
    return induction_model()


@pytest.fixture(scope="module")
def held_out(trained):
    return induction_held_out(trained.half_length, trained.vocab)


@pytest.fixture(scope="module")
def lab(trained):
    return induction_lab(trained)


def test_the_slider_offers_every_stored_checkpoint_from_the_first(lab, trained) -> None:
    assert list(lab.controls["step"].options) == [c.step for c in trained.checkpoints]
    assert lab.controls["step"].value == 0


def test_the_marker_sits_at_the_sliders_step_on_the_held_out_loss(lab, trained, held_out) -> None:
    lab.controls["step"].value = 200
    x, y = lab.view["dot"].get_data()
    assert list(x) == [200] and list(lab.view["marked"].get_xdata()) == [200, 200]
    assert y[0] == pytest.approx(loss_on_repeats(trained.at(200), held_out), rel=1e-12)


def test_the_patterns_and_scores_shown_are_that_checkpoints(lab, trained, held_out) -> None:
    lab.controls["step"].value = 300
    (l0, h0), (l1, h1) = lab.state["heads"]
    params = trained.at(300)
    weights = run(params, held_out[:1]).weights
    np.testing.assert_array_equal(lab.state["patterns"], [weights[l0, 0, h0], weights[l1, 0, h1]])
    scores = head_scores(params, held_out)
    assert lab.state["previous_token"] == pytest.approx(scores["previous_token"][l0, h0])
    assert lab.state["induction"] == pytest.approx(scores["induction"][l1, h1])
    colours = lab.view["meshes"][1].get_facecolor()
    assert colours.shape == (weights.shape[-1] ** 2, 4)


def test_the_heads_followed_are_the_trained_models_best(lab, trained, held_out) -> None:
    scores = head_scores(trained.params, held_out)
    (l0, h0), (l1, h1) = lab.state["heads"]
    assert (l0, l1) == (0, 1)
    assert h0 == np.argmax(scores["previous_token"][0])
    assert h1 == np.argmax(scores["induction"][1])


def test_the_caption_gives_the_step_loss_and_both_scores(lab) -> None:
    lab.controls["step"].value = 400
    text = lab.caption.value
    assert text.startswith("step 400: loss on held-out repeats")
    assert f"induction score {lab.state['induction']:.2f}" in text


def test_a_step_between_checkpoints_is_refused_naming_the_stored_ones(trained, held_out) -> None:
    curves = training_curves(trained, held_out)
    with pytest.raises(ValueError, match=r"one of \[0, 20, .*400\]; got step=30"):
        induction_state(curves, 30)


def test_something_other_than_a_trained_record_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="trained must be a Trained record.*got dict"):
        induction_lab({"params": None})
