"""tiled_attention: the online softmax over key blocks equals plain attention, in tiles."""

from __future__ import annotations

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import causal_mask, scaled_dot_product_attention, tiled_attention

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
def test_tiled_equals_plain_attention_in_float64(case) -> None:
    Q, K, V, block_size, causal = case
    mask = causal_mask(Q.shape[-2], K.shape[-2]) if causal else None
    expected, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    got = tiled_attention(Q, K, V, block_size=block_size, causal=causal)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_tiled_equals_plain_when_a_later_block_raises_the_running_maximum() -> None:
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
