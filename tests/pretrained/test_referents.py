"""Removing heads from the trained model (``head_mask``) and the referent measures of
attnlib.pretrained.referents: each checked against a computation that does not use it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib import examples
from attnlib.pretrained import MiniLM, load_minilm
from attnlib.pretrained.referents import (
    ablated_leanings,
    head_percentiles,
    head_ranks,
    leanings,
    pair_positions,
    preference,
    referent_shifts,
)

PAIR = examples.WINOGRAD_PAIRS[0]  # animal/street: "... too tired" / "... too wide"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return load_minilm()


def without_head_values(model: MiniLM, layer: int, head: int) -> MiniLM:
    """The model with the value projection of one head set to zero: that head then outputs
    exactly zero, which is what ``head_mask`` promises, computed another way."""
    tensors = dict(model.tensors)
    d = model.config.d_head
    for part in ("weight", "bias"):
        name = f"encoder.layer.{layer}.attention.self.value.{part}"
        values = tensors[name].copy()
        values[head * d : (head + 1) * d] = 0  # stored (out, in): head h owns rows h*d .. h*d+d
        tensors[name] = values
    return MiniLM(tensors, model._tokenizer, model.config)


# --- head_mask --------------------------------------------------------------------------------


def test_a_head_mask_of_ones_changes_nothing(model) -> None:
    plain = model.run(list(PAIR[1:3]))
    masked = model.run(list(PAIR[1:3]), head_mask=np.ones((6, 12)))
    np.testing.assert_array_equal(masked.hidden, plain.hidden)


def test_a_zero_in_the_head_mask_removes_that_heads_output(model) -> None:
    mask = np.ones((6, 12))
    mask[3, 1] = 0
    masked = model.run(list(PAIR[1:3]), head_mask=mask)
    expected = without_head_values(model, 3, 1).run(list(PAIR[1:3]))
    np.testing.assert_allclose(masked.hidden, expected.hidden, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(masked.hidden[:4], model.run(list(PAIR[1:3])).hidden[:4])


def test_a_removed_head_still_reports_its_attention_weights(model) -> None:
    mask = np.zeros((6, 12))
    masked, plain = model.run(PAIR[1], head_mask=mask), model.run(PAIR[1])
    np.testing.assert_array_equal(
        masked.weights[0], plain.weights[0]
    )  # layer 0's input is the same


@pytest.mark.parametrize(
    ("head_mask", "error", "match"),
    [
        (np.ones((6, 11)), ValueError, r"shape \(n_layers, n_heads\) = \(6, 12\).*\(6, 11\)"),
        (np.ones(72), ValueError, r"got shape \(72,\)"),
        (np.full((6, 12), np.nan), ValueError, "head_mask must be finite"),
        (np.ones((6, 12), dtype=bool), TypeError, "head_mask must be a real numeric array"),
    ],
)
def test_a_bad_head_mask_is_refused_with_its_name(model, head_mask, error, match) -> None:
    with pytest.raises(error, match=match):
        model.run("The animal was tired.", head_mask=head_mask)


# --- shifts ------------------------------------------------------------------------------------


def test_the_shift_of_a_pair_is_its_preference_in_first_minus_in_second(model) -> None:
    _, first, second, noun1, noun2 = PAIR
    expected = []
    for sentence in (first, second):
        tokens, weights = model.attention(sentence)  # one sentence alone, no padding
        it, n1, n2 = tokens.index("it"), tokens.index(noun1), tokens.index(noun2)
        expected.append(weights[:, :, it, n1].astype(float) - weights[:, :, it, n2])
    shifts = referent_shifts(model, examples.WINOGRAD_PAIRS[:3])  # padded with two other pairs
    assert shifts.shape == (3, 6, 12)
    np.testing.assert_allclose(shifts[0], expected[0] - expected[1], rtol=0, atol=1e-5)


def test_preference_reads_the_query_row_of_every_head() -> None:
    weights = np.zeros((2, 3, 4, 4))
    weights[..., 1, 2], weights[..., 1, 0] = 0.7, 0.2
    np.testing.assert_allclose(preference(weights, 1, 2, 0), np.full((2, 3), 0.5))


@pytest.mark.parametrize(
    ("words", "match"),
    [(("it", "street"), "'street' must be exactly one token.*it is 0"), (("the",), "it is 2")],
)
def test_a_word_that_is_not_exactly_one_token_is_refused(words, match) -> None:
    tokens = ["[CLS]", "the", "animal", "saw", "the", "road", "it", "[SEP]"]
    with pytest.raises(ValueError, match=match):
        pair_positions(tokens, words, "The animal saw the road it")


def test_a_pair_whose_pronoun_is_missing_names_the_sentence(model) -> None:
    pair = ("x", "The dog slept.", "The dog ran.", "dog", "cat")
    with pytest.raises(ValueError, match="'it' must be exactly one token of 'The dog slept.'"):
        referent_shifts(model, [pair])


@pytest.mark.parametrize(
    ("pairs", "error", "match"),
    [
        (PAIR, TypeError, r"got one pair\. Wrap it in a list"),
        ([], ValueError, "pairs is empty"),
        ([("a", "b", "c")], TypeError, r"pairs\[0\] must be a \(name, first, second"),
        (42, TypeError, "got int"),
    ],
)
def test_bad_pairs_are_refused_with_what_was_seen(model, pairs, error, match) -> None:
    with pytest.raises(error, match=match):
        referent_shifts(model, pairs)


def test_a_model_that_is_not_minilm_is_refused() -> None:
    with pytest.raises(TypeError, match="model must be a MiniLM"):
        leanings("model", [PAIR])


# --- ranks and percentiles -------------------------------------------------------------------


def test_ranks_count_the_heads_above_by_more_than_the_tie() -> None:
    values = np.array([[0.5, 0.1, 0.1004], [0.0, -0.2, 0.3]])
    np.testing.assert_array_equal(head_ranks(values), [[1, 3, 3], [5, 6, 2]])
    np.testing.assert_array_equal(head_ranks(values, tie=0), [[1, 4, 3], [5, 6, 2]])


def test_percentiles_count_the_heads_beaten_by_more_than_the_tie() -> None:
    values = np.array([[0.5, 0.1, 0.1004], [0.0, -0.2, 0.3]])
    np.testing.assert_allclose(head_percentiles(values), np.array([[5, 2, 2], [1, 0, 4]]) / 5)


distinct_values = arrays(
    np.float64,
    (3, 4),
    elements=st.floats(-1, 1, allow_nan=False),
    unique=True,
)


@given(distinct_values)
@settings(max_examples=50, deadline=None)
def test_without_ties_ranks_are_ordinal_and_percentiles_follow(values) -> None:
    ranks = head_ranks(values, tie=0)
    order = np.argsort(-values, axis=None)
    np.testing.assert_array_equal(ranks.ravel()[order], np.arange(1, 13))
    np.testing.assert_allclose(head_percentiles(values, tie=0), (12 - ranks) / 11)


@given(distinct_values, st.integers(0, 2**32 - 1))
@settings(max_examples=50, deadline=None)
def test_a_rank_moves_with_its_head_when_the_heads_are_shuffled(values, seed) -> None:
    permutation = np.random.default_rng(seed).permutation(12)
    shuffled = values.ravel()[permutation].reshape(3, 4)
    np.testing.assert_array_equal(
        head_ranks(shuffled).ravel(), head_ranks(values).ravel()[permutation]
    )


@pytest.mark.parametrize("tie", [-1e-3, np.inf, True])
def test_a_bad_tie_is_refused(tie) -> None:
    with pytest.raises(ValueError, match="tie must be a finite number >= 0"):
        head_ranks(np.zeros((2, 2)), tie=tie)


# --- leanings and ablations --------------------------------------------------------------------


def test_the_embedding_layer_leans_nowhere(model) -> None:
    # the embedding of a token sees only its id and position, and in each pair the pronoun and
    # the nouns stand at the same positions in both sentences
    lean = leanings(model, examples.WINOGRAD_PAIRS)
    assert lean.shape == (7, 16)
    np.testing.assert_array_equal(lean[0], 0)


def test_the_leaning_is_the_difference_of_cosines_in_first_and_second(model) -> None:
    _, first, second, noun1, noun2 = PAIR
    expected = []
    for sentence in (first, second):
        encoding = model.run(sentence)
        tokens, h = encoding.tokens[0], encoding.hidden[-1, 0].astype(float)
        it, n1, n2 = (
            h[tokens.index(w)] / np.linalg.norm(h[tokens.index(w)]) for w in ("it", noun1, noun2)
        )
        expected.append(it @ n1 - it @ n2)
    assert leanings(model, [PAIR])[-1, 0] == pytest.approx(expected[0] - expected[1], abs=1e-5)


def test_ablated_leanings_are_leanings_with_that_head_masked(model) -> None:
    pairs = [examples.REFERENT_CONTROL]
    ablated = ablated_leanings(model, pairs)
    assert ablated.shape == (6, 12, 1)
    for layer, head in [(0, 0), (2, 3), (5, 11)]:
        mask = np.ones((6, 12))
        mask[layer, head] = 0
        expected = leanings(model, pairs, head_mask=mask)[-1]
        np.testing.assert_allclose(ablated[layer, head], expected, rtol=0, atol=1e-5)
