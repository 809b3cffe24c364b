"""The positions lab: each control changes what it should, and the drawn numbers are the
scheme's."""

from __future__ import annotations

import html

import numpy as np
import pytest
from drawn_text import NOTEBOOK_MIN_TEXT_PX, text_faults

from attnlib import softmax
from attnlib.labs.positions import (
    KEY,
    OFFSETS,
    QUERY,
    SENTENCE,
    positions_lab,
    positions_state,
    sentence_weights,
)
from attnlib.positions import SCHEMES, alibi_slopes, positioned_scores, relative_scores, rope

DEFAULTS = {"scheme": "RoPE", "offset": 1, "base": 10000, "head": 1}


@pytest.fixture(scope="module")
def shared_lab():
    return positions_lab()


@pytest.fixture
def lab(shared_lab):
    for name, value in DEFAULTS.items():
        shared_lab.controls[name].value = value
    assert shared_lab.values() == DEFAULTS
    return shared_lab


def test_every_control_has_a_description(lab) -> None:
    assert set(lab.controls) == set(DEFAULTS)
    assert all(control.description for control in lab.controls.values())


def test_default_state_is_rope_with_bites_one_after_dog(lab) -> None:
    assert lab.last_error is None
    assert (SENTENCE[QUERY], SENTENCE[KEY]) == ("bites", "dog")
    assert lab.state["offset"] == QUERY - KEY
    X, W_Q, W_K = sentence_weights()
    # the marked score at the sentence's own offset is the (bites, dog) score, unscaled
    expected = rope(X @ W_Q)[QUERY] @ rope(X @ W_K)[KEY]
    assert lab.state["score"] == pytest.approx(expected)


def test_the_drawn_curve_and_marker_are_the_states(lab) -> None:
    lab.controls["offset"].value = -7
    np.testing.assert_array_equal(lab.view["line"].get_ydata(), lab.state["curve"])
    x, y = lab.view["marker"].get_data()
    assert (x[0], y[0]) == (-7, lab.state["score"])
    assert lab.state["score"] == lab.state["curve"][list(OFFSETS).index(-7)]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_pattern_is_the_softmax_of_the_schemes_scores(lab, scheme: str) -> None:
    lab.controls["scheme"].value = scheme
    X, W_Q, W_K = sentence_weights()
    expected = softmax(positioned_scores(X, W_Q, W_K, scheme, slope=0.5), axis=-1)
    np.testing.assert_allclose(lab.state["weights"], expected)
    T = len(SENTENCE)
    drawn = np.asarray(lab.view["image"].get_facecolor()).reshape(T, T, 4)
    assert not np.allclose(drawn, drawn[0, 0])  # the cells are coloured by their weights


def test_without_positions_the_curve_is_flat_and_the_two_the_columns_equal(lab) -> None:
    lab.controls["scheme"].value = "none"
    assert np.ptp(lab.state["curve"]) == 0
    w = lab.state["weights"]
    np.testing.assert_allclose(w[:, 0], w[:, 3])  # "the" at 0 and at 3 get the same weight


def test_the_base_control_changes_rope_and_is_disabled_for_alibi(lab) -> None:
    before = lab.state["curve"].copy()
    lab.controls["base"].value = 10
    assert not np.allclose(lab.state["curve"], before)
    lab.controls["scheme"].value = "ALiBi"
    assert lab.controls["base"].disabled and not lab.controls["head"].disabled


def test_the_head_control_sets_the_alibi_slope(lab) -> None:
    lab.controls["scheme"].value = "ALiBi"
    for head in (1, 8):
        lab.controls["head"].value = head
        assert lab.state["slope"] == alibi_slopes(8)[head - 1]
        curve = lab.state["curve"]
        np.testing.assert_allclose(curve, lab.state["content"] - lab.state["slope"] * abs(OFFSETS))
    assert "head 8 of 8" in html.unescape(lab.caption.value)


def test_rope_curve_matches_relative_scores(lab) -> None:
    X, W_Q, W_K = sentence_weights()
    expected = relative_scores(X[QUERY] @ W_Q, X[KEY] @ W_K, OFFSETS, "RoPE")
    np.testing.assert_allclose(lab.state["curve"], expected)


def test_positions_state_refuses_an_offset_off_the_slider() -> None:
    with pytest.raises(ValueError, match=r"offset must lie in \[-12, 12\]; got 13"):
        positions_state(*sentence_weights(), scheme="RoPE", offset=13, base=10, head=1)


def test_positions_lab_refuses_an_unknown_scheme_or_base() -> None:
    with pytest.raises(ValueError, match=r"scheme must be one of"):
        positions_lab(scheme="T5")
    with pytest.raises(ValueError, match=r"base must be one of"):
        positions_lab(base=5)


@pytest.fixture(scope="module", params=[False, True], ids=["notebook", "present"])
def sized_lab(request):
    return positions_lab(present=request.param)


def test_text_is_large_enough_and_nothing_overlaps(sized_lab) -> None:
    if not sized_lab.present:
        assert sized_lab.smallest_text_px() >= NOTEBOOK_MIN_TEXT_PX
    for scheme in SCHEMES:
        sized_lab.controls["scheme"].value = scheme
        sized_lab.controls["offset"].value = 12
        assert text_faults(sized_lab) == [], scheme
