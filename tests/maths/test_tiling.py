"""tiled_attention and its steps: the online softmax over key blocks equals plain attention."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import causal_mask, scaled_dot_product_attention, tiled_attention
from attnlib.tiling import tiled_attention_steps

FAST = settings(max_examples=50, deadline=None, database=None)


@st.composite
def tiled_case(draw):
    """Q, K, V with T_k >= T_q (so that causal is defined), a block size and a causal flag."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    T_q = draw(st.integers(1, 12))
    T_k = draw(st.integers(T_q, 16))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    batch = draw(st.sampled_from([(), (2,), (2, 1)]))
    scale = draw(st.floats(0.5, 3.0))  # wider scores than the default scale gives
    Q = rng.normal(scale=scale, size=(*batch, T_q, d_k))
    K = rng.normal(scale=scale, size=(*batch, T_k, d_k))
    V = rng.normal(size=(*batch, T_k, d_v))
    return Q, K, V, draw(st.integers(1, 20)), draw(st.booleans())


@FAST
@given(tiled_case())
def test_tiling_equals_plain_attention_in_float64(case) -> None:
    Q, K, V, block_size, causal = case
    mask = causal_mask(Q.shape[-2], K.shape[-2]) if causal else None
    expected, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    got = tiled_attention(Q, K, V, block_size=block_size, causal=causal)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_tiling_equals_plain_when_a_later_block_raises_the_running_maximum() -> None:
    # the largest score sits in the last key block, so the running sums are rescaled
    Q = np.ones((2, 1))
    K = np.array([[-3.0], [-1.0], [0.0], [2.0], [8.0]])
    V = np.arange(10.0).reshape(5, 2)
    expected, _ = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(
        tiled_attention(Q, K, V, block_size=2, scale=1.0), expected, rtol=0, atol=1e-14
    )


def test_scores_of_plus_minus_1e4_stay_finite() -> None:
    Q = np.array([[100.0], [-100.0]])
    K = np.array([[100.0], [-100.0], [0.0]])
    V = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    out = tiled_attention(Q, K, V, block_size=1, scale=1.0)
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 1.0]])


def test_float32_stays_float32_and_close_to_float64() -> None:
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(9, 4)), rng.normal(size=(9, 4)), rng.normal(size=(9, 2))
    out32 = tiled_attention(*(a.astype(np.float32) for a in (Q, K, V)), block_size=4, causal=True)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(
        out32, tiled_attention(Q, K, V, block_size=4, causal=True), rtol=1e-5, atol=1e-6
    )


def test_integer_lists_are_promoted_to_float64() -> None:
    out = tiled_attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]], block_size=1)
    assert out.dtype == np.float64
    np.testing.assert_allclose(
        out, scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]])[0]
    )


def test_never_builds_the_full_score_matrix() -> None:
    # T = 512, block 64: the full float64 score matrix would take 2 MiB; tiles take 32 KiB
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(512, 8)) for _ in range(3))
    tracemalloc.start()
    try:
        tiled_attention(Q, K, V, block_size=64, causal=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 512 * 512 * 8 / 4, f"peak {peak} bytes"


# --- tiled_attention_steps: the same kernel, one tile at a time ---------------------------------


def small_qkv(T_q: int = 12, T_k: int = 12, seed: int = 3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(T_q, 4)), rng.normal(size=(T_k, 4)), rng.normal(size=(T_k, 2))


def test_steps_go_through_every_key_block_of_one_query_block_before_the_next() -> None:
    Q, K, V = small_qkv(T_q=5, T_k=7)
    steps = list(tiled_attention_steps(Q, K, V, block_size=3))
    assert [(s.q_block, s.k_block) for s in steps] == [(q, k) for q in range(2) for k in range(3)]
    assert [s.index for s in steps] == list(range(6))
    assert [s.last for s in steps] == [False, False, True] * 2
    assert [(s.rows, s.cols) for s in steps[3:]] == [
        (slice(3, 5), slice(0, 3)),
        (slice(3, 5), slice(3, 6)),
        (slice(3, 5), slice(6, 7)),
    ]


def test_causal_steps_skip_the_key_blocks_entirely_in_the_future() -> None:
    Q, K, V = small_qkv()
    steps = list(tiled_attention_steps(Q, K, V, block_size=4, causal=True))
    assert [(s.q_block, s.k_block) for s in steps] == [
        (0, 0),
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 1),
        (2, 2),
    ]
    diagonal = steps[0].scores
    np.testing.assert_array_equal(np.isneginf(diagonal), ~causal_mask(4))


def test_causal_steps_with_more_keys_than_queries_align_the_mask_bottom_right() -> None:
    Q, K, V = small_qkv(T_q=2, T_k=6)
    (step,) = tiled_attention_steps(Q, K, V, block_size=6, causal=True)
    np.testing.assert_array_equal(np.isneginf(step.scores), ~causal_mask(2, 6))


@settings(max_examples=30, deadline=None, database=None)
@given(tiled_case())
def test_running_state_after_each_tile_is_the_softmax_sums_over_the_keys_seen(case) -> None:
    Q, K, V, block_size, causal = case
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if causal:
        scores = np.where(causal_mask(Q.shape[-2], K.shape[-2]), scores, -np.inf)
    for step in tiled_attention_steps(Q, K, V, block_size=block_size, causal=causal):
        seen = scores[..., step.rows, : step.cols.stop]  # every key block up to this one
        m = seen.max(axis=-1, keepdims=True)
        e = np.exp(seen - m)
        np.testing.assert_allclose(step.m, m, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.l, e.sum(axis=-1, keepdims=True), rtol=1e-12)
        np.testing.assert_allclose(step.acc, e @ V[..., : step.cols.stop, :], atol=1e-12)


@FAST
@given(tiled_case())
def test_last_step_outputs_are_the_tiled_attention_rows_bit_for_bit(case) -> None:
    Q, K, V, block_size, causal = case
    expected = tiled_attention(Q, K, V, block_size=block_size, causal=causal)
    got = np.full_like(expected, np.nan)
    for step in tiled_attention_steps(Q, K, V, block_size=block_size, causal=causal):
        if step.last:
            got[..., step.rows, :] = step.output
    np.testing.assert_array_equal(got, expected)


def test_rescale_is_zero_on_a_first_tile_below_one_where_the_maximum_grew_else_one() -> None:
    Q = np.ones((2, 1))
    K = np.array([[-3.0], [-1.0], [2.0], [0.0], [1.0], [-2.0]])
    V = np.arange(12.0).reshape(6, 2)
    first, grew, stayed = tiled_attention_steps(Q, K, V, block_size=2, scale=1.0)
    np.testing.assert_array_equal(first.rescale, 0.0)
    np.testing.assert_array_equal(first.m, -1.0)
    np.testing.assert_allclose(grew.rescale, np.exp(-1.0 - 2.0), rtol=1e-15)  # max -1 -> 2
    np.testing.assert_array_equal(stayed.m, 2.0)
    np.testing.assert_array_equal(stayed.rescale, 1.0)


def test_earlier_steps_keep_their_values_while_later_ones_are_computed() -> None:
    Q, K, V = small_qkv()
    steps = list(tiled_attention_steps(Q, K, V, block_size=4))
    again = next(iter(tiled_attention_steps(Q, K, V, block_size=4)))
    for name in ("m", "l", "acc", "rescale", "scores"):
        np.testing.assert_array_equal(getattr(steps[0], name), getattr(again, name))


def test_partial_output_before_the_last_key_block_is_attention_over_the_keys_seen() -> None:
    Q, K, V = small_qkv()
    step = list(tiled_attention_steps(Q, K, V, block_size=4))[1]  # query block 0, keys 0..7
    expected, _ = scaled_dot_product_attention(Q[:4], K[:8], V[:8])
    np.testing.assert_allclose(step.output, expected, rtol=0, atol=1e-14)


def test_bad_arguments_raise_when_the_steps_are_requested_not_when_iterated() -> None:
    Q, K, V = small_qkv()
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        tiled_attention_steps(Q, K, V, block_size=0)
    with pytest.raises(TypeError, match="causal must be True or False"):
        tiled_attention_steps(Q, K, V, causal="yes")
    with pytest.raises(ValueError, match="causal=True needs at least as many keys as queries"):
        tiled_attention_steps(Q, K[:3], V[:3], causal=True)
