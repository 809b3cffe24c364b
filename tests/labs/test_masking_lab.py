"""The masking lab: each control changes what it should, and the drawn numbers obey the masks."""

from __future__ import annotations

import html

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib import causal_mask, scaled_dot_product_attention, softmax
from attnlib.labs.masking import (
    MASK_TYPES,
    PAD,
    SENTENCE,
    WRONG,
    masking_lab,
    masking_weights,
    position_labels,
    sentence_scores,
)

T = len(SENTENCE)
RIGHT_TYPES = [m for m in MASK_TYPES if m != WRONG]
MASKED_GREY = (0.78, 0.78, 0.78, 1.0)


@pytest.fixture(scope="module")
def shared_lab():
    return masking_lab()


@pytest.fixture
def lab(shared_lab):
    """The module's lab, with its controls back at their defaults (building one takes ~0.2 s)."""
    defaults = {"query": 6, "mask_type": "causal", "length": 6}
    for name, value in defaults.items():
        shared_lab.controls[name].value = value
    assert shared_lab.values() == defaults
    return shared_lab


def bar_heights(lab) -> np.ndarray:
    return np.array([bar.get_height() for bar in lab.view["bars"]])


def drawn_rgba(lab) -> np.ndarray:
    """The colours of the weight-matrix cells, (T, T, 4) (the mesh's face colours, row by row)."""
    return np.asarray(lab.view["image"].get_facecolor()).reshape(T, T, 4)


def caption(lab) -> str:
    return html.unescape(lab.caption.value)


# --- the controls -------------------------------------------------------------------------------


def test_default_state_is_the_causal_row_of_it(lab) -> None:
    assert lab.last_error is None
    assert lab.state["query"] == 6 and SENTENCE[6] == "it"
    assert lab.state["mask_type"] == "causal"
    np.testing.assert_array_equal(lab.state["mask"], causal_mask(T))
    np.testing.assert_array_equal(bar_heights(lab), lab.state["weights"][6])


def test_query_control_moves_the_outlined_row_and_redraws_the_bars(lab) -> None:
    frames = lab.live.frames
    lab.controls["query"].value = 2
    assert lab.state["query"] == 2
    assert lab.view["row_box"].get_y() == pytest.approx(1.5)
    np.testing.assert_array_equal(bar_heights(lab), lab.state["weights"][2])
    assert "'crossed' attends to 3 of 9 keys" in caption(lab)
    assert lab.live.frames == frames + 1


def test_mask_type_none_lets_every_query_attend_to_every_key(lab) -> None:
    lab.controls["mask_type"].value = "none"
    assert lab.state["mask"].all()
    assert (bar_heights(lab) > 0).all()
    assert lab.view["crosses"].get_xdata().size == 0


def test_mask_type_causal_hides_every_key_after_the_query(lab) -> None:
    lab.controls["mask_type"].value = "none"
    lab.controls["mask_type"].value = "causal"
    lab.controls["query"].value = 4
    heights = bar_heights(lab)
    assert (heights[:5] > 0).all()
    assert (heights[5:] == 0).all()
    np.testing.assert_array_equal(lab.view["crosses"].get_xdata(), [5, 6, 7, 8])


def test_length_slider_moves_the_padding(lab) -> None:
    lab.controls["mask_type"].value = "padding"
    lab.controls["length"].value = 3
    assert lab.state["length"] == 3
    np.testing.assert_array_equal(lab.state["mask"][:, :3], True)
    np.testing.assert_array_equal(lab.state["mask"][:, 3:], False)
    lab.controls["length"].value = 7
    np.testing.assert_array_equal(lab.state["mask"][:, 7:], False)
    assert lab.state["mask"][:, :7].all()


def test_causal_plus_padding_is_the_intersection(lab) -> None:
    lab.controls["mask_type"].value = "causal + padding"
    lab.controls["length"].value = 4
    np.testing.assert_array_equal(lab.state["mask"], causal_mask(T) & (np.arange(T) < 4))


@pytest.mark.parametrize("mask_type", MASK_TYPES)
def test_length_slider_is_enabled_only_for_the_padding_types(lab, mask_type) -> None:
    lab.controls["mask_type"].value = mask_type
    assert lab.controls["length"].disabled == ("padding" not in mask_type)


@pytest.mark.parametrize("mask_type", ["none", "causal", WRONG])
def test_length_is_ignored_unless_padding(lab, mask_type) -> None:
    lab.controls["mask_type"].value = mask_type
    before = lab.state["weights"].copy()
    lab.controls["length"].value = 2
    assert lab.state["length"] is None
    np.testing.assert_array_equal(lab.state["weights"], before)


def test_a_padded_query_is_labelled_as_such(lab) -> None:
    lab.controls["mask_type"].value = "padding"
    lab.controls["length"].value = 3
    lab.controls["query"].value = 5
    assert "padded query" in caption(lab)
    assert lab.state["row_sum"] == pytest.approx(1.0)
    lab.controls["query"].value = 2
    assert "padded query" not in caption(lab)


# --- what is drawn ------------------------------------------------------------------------------


@pytest.mark.parametrize("mask_type", RIGHT_TYPES)
def test_masked_keys_are_drawn_with_weight_exactly_zero_and_rows_sum_to_one(lab, mask_type) -> None:
    lab.controls["mask_type"].value = mask_type
    for length, query in [(1, 0), (1, 8), (4, 3), (4, 4), (T, 0), (T, 8)]:
        lab.controls["length"].value = length
        lab.controls["query"].value = query
        mask, weights = lab.state["mask"], lab.state["weights"]
        heights = bar_heights(lab)
        assert (heights[~mask[query]] == 0.0).all()
        assert (heights[mask[query]] > 0.0).all()
        np.testing.assert_array_equal(lab.view["crosses"].get_xdata(), np.flatnonzero(~mask[query]))
        assert (weights[~mask] == 0.0).all()
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
        rgba = drawn_rgba(lab)
        np.testing.assert_array_equal(rgba[~mask], np.broadcast_to(MASKED_GREY, rgba[~mask].shape))
        assert (rgba[mask][:, :3] != MASKED_GREY[:3]).any(axis=-1).all()


def test_padded_positions_are_labelled_pad_on_both_panels_and_the_query_slider(lab) -> None:
    lab.controls["mask_type"].value = "causal + padding"
    lab.controls["length"].value = 4
    expected = (*SENTENCE[:4], *[PAD] * (T - 4))
    assert lab.state["labels"] == expected
    for axis in (lab.view["ax_map"].xaxis, lab.view["ax_map"].yaxis, lab.view["ax_bar"].xaxis):
        assert tuple(t.get_text() for t in axis.get_ticklabels()) == expected
    assert lab.readouts["query"].value == f"6: {PAD}"
    assert lab.values()["query"] == 6  # relabelling kept the chosen query
    assert f"'{PAD}' attends to" in caption(lab)
    lab.controls["mask_type"].value = "causal"
    assert lab.state["labels"] == SENTENCE and lab.readouts["query"].value == "6: it"


def test_zero_after_softmax_keeps_the_future_in_the_denominator(lab) -> None:
    lab.controls["mask_type"].value = WRONG
    lab.controls["query"].value = 2
    full = softmax(sentence_scores(), axis=-1)
    np.testing.assert_array_equal(lab.state["mask"], causal_mask(T))
    np.testing.assert_allclose(lab.state["row"], np.where(causal_mask(T)[2], full[2], 0.0))
    assert lab.state["row_sum"] == pytest.approx(full[2, :3].sum())
    assert lab.state["row_sum"] + lab.state["future_share"][2] == pytest.approx(1.0)
    ghosts = np.array([g.get_height() for g in lab.view["ghosts"]])
    np.testing.assert_allclose(ghosts[3:], full[2, 3:])
    assert all(g.get_visible() for g in lab.view["ghosts"][3:])
    assert not any(g.get_visible() for g in lab.view["ghosts"][:3])
    assert "wrong: the future keys took" in caption(lab)


@pytest.mark.parametrize("mask_type", RIGHT_TYPES)
def test_the_ghost_bars_of_the_wrong_mode_are_hidden_in_every_other_mode(lab, mask_type) -> None:
    lab.controls["mask_type"].value = WRONG
    lab.controls["mask_type"].value = mask_type
    assert not any(g.get_visible() for g in lab.view["ghosts"])
    assert not lab.view["legend"].get_visible()


def test_zeroing_after_softmax_lets_a_future_key_change_the_past_and_masking_does_not() -> None:
    scores = sentence_scores()
    changed = scores.copy()
    changed[:, -1] += 3.0  # only the last key's scores change
    for mask_type, leaks in (("causal", False), (WRONG, True)):
        _, before = masking_weights(scores, mask_type)
        _, after = masking_weights(changed, mask_type)
        assert (not np.allclose(before[:-1], after[:-1])) == leaks, mask_type


def test_numbers_above_the_bars_are_the_allowed_weights(lab) -> None:
    lab.controls["query"].value = 3
    texts = lab.view["values"].texts
    assert texts[:4] == [f"{w:.2f}" for w in lab.state["row"][:4]]
    assert texts[4:] == [""] * (T - 4)


# --- the picture at both sizes ------------------------------------------------------------------


# --- the pure function --------------------------------------------------------------------------


def test_causal_weights_equal_scaled_dot_product_attention() -> None:
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 5, 4))
    _, expected = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5))
    _, weights = masking_weights(Q @ K.T / 2.0, "causal")
    np.testing.assert_allclose(weights, expected, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    scores=st.integers(1, 7).flatmap(
        lambda n: arrays(np.float64, (n, n), elements=st.floats(-50, 50))
    ),
    mask_type=st.sampled_from(MASK_TYPES),
    data=st.data(),
)
def test_masked_weights_are_the_softmax_over_the_allowed_keys(scores, mask_type, data) -> None:
    n = scores.shape[0]
    length = data.draw(st.integers(1, n))
    mask, weights = masking_weights(scores, mask_type, length)
    assert (weights[~mask] == 0.0).all()
    if mask_type == WRONG:  # the ordinary softmax over every key, then zeroed
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        expected = np.where(mask, e / e.sum(axis=-1, keepdims=True), 0.0)
        np.testing.assert_allclose(weights, expected, rtol=1e-9, atol=1e-300)
        return
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
    for i in range(n):
        allowed = scores[i, mask[i]]
        e = np.exp(allowed - allowed.max())
        np.testing.assert_allclose(weights[i, mask[i]], e / e.sum(), rtol=1e-9, atol=1e-300)


def test_position_labels_pad_only_for_the_padding_types() -> None:
    assert position_labels(["a", "b", "c"], "padding", 1) == ("a", PAD, PAD)
    assert position_labels(["a", "b", "c"], "causal + padding", 3) == ("a", "b", "c")
    assert position_labels(["a", "b", "c"], "causal", 1) == ("a", "b", "c")


def test_sentence_scores_are_deterministic_and_square() -> None:
    a, b = sentence_scores(), sentence_scores()
    assert a.shape == (T, T)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, sentence_scores(seed=7))


# --- bad input ----------------------------------------------------------------------------------


def test_non_square_scores_raise_naming_the_shape() -> None:
    with pytest.raises(ValueError, match=r"scores must be a square.*\(3, 4\)"):
        masking_weights(np.zeros((3, 4)), "causal")
    with pytest.raises(ValueError, match=r"scores.*\(3, 4\)"):
        masking_lab(np.zeros((3, 4)))


def test_unknown_mask_type_raises_listing_the_choices() -> None:
    with pytest.raises(ValueError, match="mask_type must be one of.*'sliding'"):
        masking_weights(np.zeros((3, 3)), "sliding")
    with pytest.raises(ValueError, match="mask_type must be one of"):
        masking_lab(mask_type="sliding")


@pytest.mark.parametrize("length", [0, T + 1])
def test_padding_length_out_of_range_raises(length) -> None:
    with pytest.raises(ValueError, match="length"):
        masking_weights(sentence_scores(), "padding", length)


def test_padding_without_a_length_raises() -> None:
    with pytest.raises(ValueError, match="needs the sentence length"):
        masking_weights(np.zeros((3, 3)), "padding")


def test_token_labels_must_match_the_scores() -> None:
    with pytest.raises(ValueError, match=r"tokens has 2 labels but scores shape \(3, 3\)"):
        masking_lab(np.zeros((3, 3)), tokens=["a", "b"])


def test_query_out_of_range_raises() -> None:
    with pytest.raises(ValueError, match=r"query must be a token position in \[0, 8\]"):
        masking_lab(query=9)
