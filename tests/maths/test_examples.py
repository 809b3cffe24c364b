"""attnlib.examples reproduces the numbers the source lessons print, at their printed precision."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from attnlib import examples, scaled_dot_product_attention, softmax

# Published values, copied from the seeds (000 for "it" and "late", 004 for T=2): these are what
# the code must reproduce, so they are written down here and nowhere in attnlib.
SEED_000_Q = [[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]]
SEED_000_K = [[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
SEED_000_V = [[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]]
IT, LATE = examples.ORDER_TOKENS.index("it"), examples.ORDER_TOKENS.index("late")


def assert_matches_printed(computed, printed, decimals: int = 4) -> None:
    """Equal to the printed numbers to within half a unit of their last printed place."""
    np.testing.assert_allclose(computed, printed, rtol=0, atol=0.5 * 10.0**-decimals + 1e-12)


@pytest.fixture(scope="module")
def order_qkv():
    X = examples.ORDER_X
    return X @ examples.ORDER_W_Q, X @ examples.ORDER_W_K, X @ examples.ORDER_W_V


def test_order_projections_equal_the_printed_q_k_v(order_qkv) -> None:
    Q, K, V = order_qkv
    np.testing.assert_array_equal(Q, SEED_000_Q)
    np.testing.assert_array_equal(K, SEED_000_K)
    np.testing.assert_array_equal(V, SEED_000_V)


def test_it_raw_and_scaled_scores(order_qkv) -> None:
    Q, K, _ = order_qkv
    np.testing.assert_array_equal(Q[IT] @ K.T, [5, 3, 4, 4])
    np.testing.assert_array_equal(Q[IT] @ K.T / np.sqrt(4), [2.5, 1.5, 2.0, 2.0])


def test_it_weights_and_outputs_raw_and_scaled(order_qkv) -> None:
    Q, K, V = order_qkv
    out_raw, w_raw = scaled_dot_product_attention(Q, K, V, scale=1.0)
    out, w = scaled_dot_product_attention(Q, K, V)
    assert_matches_printed(w_raw[IT], [0.5344, 0.0723, 0.1966, 0.1966])
    assert_matches_printed(w[IT], [0.3875, 0.1425, 0.2350, 0.2350])
    assert_matches_printed(out_raw[IT], [1.7311, 0.2689, 2.1932, 1.0000])
    assert_matches_printed(out[IT], [1.6225, 0.3775, 1.8674, 1.0000])


def test_late_scores_weights_and_output(order_qkv) -> None:
    Q, K, V = order_qkv
    np.testing.assert_array_equal(Q[LATE], [1, 1, 0, 1])
    np.testing.assert_array_equal(Q[LATE] @ K.T, [2, 4, 3, 3])
    assert_matches_printed(softmax(Q[LATE] @ K.T), [0.0723, 0.5344, 0.1966, 0.1966])
    out, w = scaled_dot_product_attention(Q, K, V)
    assert_matches_printed(w[LATE], [0.1425, 0.3875, 0.2350, 0.2350])
    assert_matches_printed(out[LATE], [1.3775, 0.6225, 1.1326, 1.0000])


def test_equal_keys_late_and_it_get_equal_weight_for_every_query(order_qkv) -> None:
    Q, K, V = order_qkv
    _, w = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_array_equal(w[:, LATE], w[:, IT])


def test_t2_weights_and_output_at_four_decimals() -> None:
    out, A = scaled_dot_product_attention(examples.T2_Q, examples.T2_K, examples.T2_V)
    assert_matches_printed(A, [[0.8808, 0.1192], [0.1192, 0.8808]])
    assert_matches_printed(out, [[1.2384, 1.7616], [2.7616, 0.2384]])


def test_t2_output_at_six_decimals_differs_from_the_seeds_rounded_working() -> None:
    # seed 004 prints 1.238404 and 0.238405; the exact values round to 1.238406 and 0.238406
    out, _ = scaled_dot_product_attention(examples.T2_Q, examples.T2_K, examples.T2_V)
    assert_matches_printed(out[0, 0], 1.238406, decimals=6)
    assert_matches_printed(out[1, 1], 0.238406, decimals=6)
    assert abs(out[0, 0] - 1.238404) > 1e-6


def test_two_key_exercise_gives_the_uniform_average_5_10() -> None:
    out, w = scaled_dot_product_attention(
        examples.TWO_KEY_Q,
        examples.TWO_KEY_K,
        examples.TWO_KEY_V,
        scale=1 / np.sqrt(examples.TWO_KEY_D_K),
    )
    np.testing.assert_array_equal(w, [[0.5, 0.5]])
    np.testing.assert_array_equal(out, [[5.0, 10.0]])


def test_animal_figure_dot_product_is_the_printed_1_30() -> None:
    # "q_1 . k_1 = 1.0(1.1) + 0.5(0.4) = 1.30"
    assert_matches_printed(examples.ANIMAL_Q1 @ examples.ANIMAL_K1, 1.30, decimals=2)


def test_animal_figure_weight_row_sums_to_one() -> None:
    np.testing.assert_allclose(examples.ANIMAL_WEIGHTS_ROW1.sum(), 1.0, rtol=0, atol=1e-12)


def test_animal_figure_output_is_exactly_1_125_printed_as_1_13() -> None:
    # "0.31(2.0) + 0.26(0.5) + 0.25(1.5) + 0.18(0.0) = 1.13": a tie, rounded half up
    out = examples.ANIMAL_WEIGHTS_ROW1 @ examples.ANIMAL_V_COLUMN
    np.testing.assert_allclose(out, 1.125, rtol=0, atol=1e-12)
    assert Decimal(float(out)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) == Decimal("1.13")


@pytest.mark.parametrize(
    "name",
    [
        "ORDER_X",
        "ORDER_W_Q",
        "ORDER_W_K",
        "ORDER_W_V",
        "T2_Q",
        "T2_K",
        "T2_V",
        "TWO_KEY_Q",
        "TWO_KEY_K",
        "TWO_KEY_V",
        "ANIMAL_Q1",
        "ANIMAL_K1",
        "ANIMAL_WEIGHTS_ROW1",
        "ANIMAL_V_COLUMN",
    ],
)
def test_example_arrays_are_read_only_float64(name: str) -> None:
    arr = getattr(examples, name)
    assert arr.dtype == np.float64
    with pytest.raises(ValueError, match="read-only"):
        arr[(0,) * arr.ndim] = 1.0


@pytest.mark.parametrize(
    "pair", [*examples.WINOGRAD_PAIRS, examples.REFERENT_CONTROL], ids=lambda pair: pair[0]
)
def test_a_referent_pair_differs_in_one_word_and_names_nouns_of_both_sentences(pair) -> None:
    name, first, second, noun1, noun2 = pair
    words = [re.findall(r"[a-z']+", sentence.lower()) for sentence in (first, second)]
    assert len(words[0]) == len(words[1])
    assert sum(a != b for a, b in zip(*words)) == 1
    for sentence_words in words:
        for word in ("it", noun1, noun2):
            assert sentence_words.count(word) == 1, (name, word)


def test_the_winograd_pairs_are_sixteen_with_distinct_names() -> None:
    names = [pair[0] for pair in examples.WINOGRAD_PAIRS]
    assert len(names) == 16 == len(set(names))
    assert names[0] == "animal/street"
