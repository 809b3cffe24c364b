"""scaled_dot_product_attention: against explicit loops, its laws, masks, dtypes and extremes."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import causal_mask, padding_mask, scaled_dot_product_attention

FAST = settings(max_examples=50, deadline=None, database=None)


def attention_loop(Q, K, V, mask=None, scale=None):
    """softmax(scale Q K^T) V for 2-D inputs, one query and one key at a time."""
    T_q, d_k = len(Q), len(Q[0])
    T_k, d_v = len(K), len(V[0])
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    out = [[0.0] * d_v for _ in range(T_q)]
    weights = [[0.0] * T_k for _ in range(T_q)]
    for i in range(T_q):
        allowed = [j for j in range(T_k) if mask is None or mask[i][j]]
        if not allowed:
            continue
        scores = {j: scale * sum(Q[i][m] * K[j][m] for m in range(d_k)) for j in allowed}
        top = max(scores.values())
        total = sum(math.exp(s - top) for s in scores.values())
        for j in allowed:
            weights[i][j] = math.exp(scores[j] - top) / total
            for c in range(d_v):
                out[i][c] += weights[i][j] * V[j][c]
    return np.array(out), np.array(weights)


@st.composite
def qkv(draw, max_t: int = 5, max_d: int = 4):
    """Random float64 Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v) from a drawn seed."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    T_q, T_k = draw(st.integers(1, max_t)), draw(st.integers(1, max_t))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    return (rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v)))


def random_qkv(seed: int, T_q: int = 3, T_k: int = 4, d_k: int = 4, d_v: int = 2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))


def test_matches_explicit_loop() -> None:
    Q, K, V = random_qkv(0)
    out, w = scaled_dot_product_attention(Q, K, V)
    out_loop, w_loop = attention_loop(Q, K, V)
    np.testing.assert_allclose(w, w_loop, rtol=1e-13)
    np.testing.assert_allclose(out, out_loop, rtol=1e-13, atol=1e-15)


def test_matches_explicit_loop_with_a_mask() -> None:
    Q, K, V = random_qkv(1, T_q=4, T_k=4)
    mask = np.array([[1, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1], [1, 1, 1, 1]], dtype=bool)
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    out_loop, w_loop = attention_loop(Q, K, V, mask=mask.tolist())
    np.testing.assert_allclose(w, w_loop, rtol=1e-13)
    np.testing.assert_allclose(out, out_loop, rtol=1e-13, atol=1e-15)


def test_scale_one_is_raw_unscaled_attention() -> None:
    Q, K, V = random_qkv(2)
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    out_loop, w_loop = attention_loop(Q, K, V, scale=1.0)
    np.testing.assert_allclose(w, w_loop, rtol=1e-13)
    np.testing.assert_allclose(out, out_loop, rtol=1e-13, atol=1e-15)


def test_default_scale_is_one_over_sqrt_dk() -> None:
    Q, K, V = random_qkv(3, d_k=9)
    np.testing.assert_array_equal(
        scaled_dot_product_attention(Q, K, V)[1],
        scaled_dot_product_attention(Q, K, V, scale=1 / 3)[1],
    )


def test_leading_batch_dimensions_broadcast() -> None:
    rng = np.random.default_rng(4)
    Q = rng.normal(size=(2, 3, 5, 4))  # batch (2, 3)
    K = rng.normal(size=(3, 6, 4))  # batch (3,) broadcasts against (2, 3)
    V = rng.normal(size=(1, 1, 6, 2))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 5, 2) and w.shape == (2, 3, 5, 6)
    for a in range(2):
        for b in range(3):
            out_ab, w_ab = scaled_dot_product_attention(Q[a, b], K[b], V[0, 0])
            np.testing.assert_allclose(out[a, b], out_ab, rtol=1e-14)
            np.testing.assert_allclose(w[a, b], w_ab, rtol=1e-14)


@FAST
@given(qkv())
def test_weight_rows_sum_to_one(inputs) -> None:
    _, w = scaled_dot_product_attention(*inputs)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@FAST
@given(qkv(), st.data())
def test_equal_keys_get_equal_weight(inputs, data) -> None:
    Q, K, V = inputs
    j = data.draw(st.integers(0, len(K) - 1), label="copied key")
    K = np.vstack([K, K[j]])  # key T_k is a copy of key j
    V = np.vstack([V, np.zeros(V.shape[1])])
    _, w = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(w[:, -1], w[:, j], rtol=1e-14, atol=0)


@FAST
@given(qkv(), st.randoms(use_true_random=False))
def test_permuting_keys_and_values_together_changes_nothing(inputs, random) -> None:
    Q, K, V = inputs
    perm = np.array(random.sample(range(len(K)), len(K)))
    out, w = scaled_dot_product_attention(Q, K, V)
    out_p, w_p = scaled_dot_product_attention(Q, K[perm], V[perm])
    np.testing.assert_allclose(out_p, out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w_p, w[:, perm], rtol=1e-12, atol=1e-15)


@FAST
@given(qkv())
def test_output_rows_lie_within_the_range_of_the_values(inputs) -> None:
    # each output row is a convex combination (weighted average) of the rows of V
    Q, K, V = inputs
    out, _ = scaled_dot_product_attention(Q, K, V)
    assert (out >= V.min(axis=0) - 1e-12).all() and (out <= V.max(axis=0) + 1e-12).all()


def test_scores_of_plus_minus_1e4_stay_finite() -> None:
    Q = np.array([[100.0], [-100.0]])
    K = np.array([[100.0], [-100.0], [0.0]])  # raw scores +-1e4 and 0
    V = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_array_equal(w, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 1.0]])


def test_float32_stays_float32() -> None:
    Q, K, V = (a.astype(np.float32) for a in random_qkv(5))
    out, w = scaled_dot_product_attention(Q, K, V)
    assert out.dtype == np.float32 and w.dtype == np.float32
    out64, _ = scaled_dot_product_attention(*random_qkv(5))
    np.testing.assert_allclose(out, out64, rtol=1e-5, atol=1e-6)


def test_integers_are_promoted_to_float64() -> None:
    Q = np.array([[1, 0], [0, 1]])
    out, w = scaled_dot_product_attention(Q, Q, np.array([[2, 0], [0, 2]]))
    assert out.dtype == np.float64 and w.dtype == np.float64
    e = math.exp(1 / math.sqrt(2))
    np.testing.assert_allclose(w[0], [e / (e + 1), 1 / (e + 1)], rtol=1e-15)


def test_nested_lists_are_accepted() -> None:
    out, w = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], [[2.0], [4.0]])
    np.testing.assert_allclose(w, [[0.5, 0.5]])
    np.testing.assert_allclose(out, [[3.0]])


def test_masked_weights_are_exactly_zero() -> None:
    Q, K, V = random_qkv(6, T_q=4, T_k=4)
    _, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(4))
    assert (w[np.triu_indices(4, k=1)] == 0.0).all()


def test_a_fully_masked_query_gets_zero_weights_and_zero_output() -> None:
    Q, K, V = random_qkv(7, T_q=3, T_k=4)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert not np.isnan(out).any() and not np.isnan(w).any()
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(axis=-1), 1.0)


def test_causal_mask_makes_each_output_independent_of_later_values() -> None:
    Q, K, V = random_qkv(8, T_q=5, T_k=5)
    V_changed = V.copy()
    V_changed[3:] += 100.0  # change the values of positions 3 and 4 only
    out, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5))
    out_changed, _ = scaled_dot_product_attention(Q, K, V_changed, mask=causal_mask(5))
    np.testing.assert_array_equal(out[:3], out_changed[:3])
    assert not np.allclose(out[3:], out_changed[3:])


def test_padding_mask_hides_the_padded_keys_of_each_sequence() -> None:
    rng = np.random.default_rng(9)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 2))
    out, w = scaled_dot_product_attention(Q, K, V, mask=padding_mask([3, 2], 3))
    np.testing.assert_array_equal(w[1, :, 2], 0.0)
    # sequence 1 behaves exactly as if it had only its first 2 tokens as keys
    out_short, w_short = scaled_dot_product_attention(Q[1], K[1, :2], V[1, :2])
    np.testing.assert_allclose(w[1, :, :2], w_short, rtol=1e-14)
    np.testing.assert_allclose(out[1], out_short, rtol=1e-14)


def test_scores_too_large_for_the_dtype_raise_instead_of_warning() -> None:
    Q = np.full((2, 3), 1e20, dtype=np.float32)  # 3 * 1e40 overflows float32
    with pytest.raises(ValueError, match=r"overflowed in float32.*Q shape \(2, 3\)"):
        scaled_dot_product_attention(Q, Q, np.ones((2, 2), dtype=np.float32))


def bare_numpy_attention(Q, K, V):
    """The three-line numpy version the reference must agree with."""
    s = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ V, w


@pytest.mark.parametrize("scale", [1 / 3, 1 / math.sqrt(8), 1 / math.sqrt(32), 0.1])
@pytest.mark.parametrize("offset", [1e3, 1e4, 1e5])
def test_float32_weights_depend_on_score_differences_not_on_rounded_large_scores(
    scale, offset
) -> None:
    """Raw scores offset + j (j = 0..3) are exact in float32 and the weights depend only on
    scale * j; rounding scale * score first (scale not a power of two) would move each score by
    up to offset * scale * eps / 2, a weight error of 1e-4 at offset 1e4 (issue 19)."""
    Q = np.ones((1, 1), dtype=np.float32)
    K = (offset + np.arange(4, dtype=np.float32))[:, None]
    V = np.eye(4, dtype=np.float32)
    expected, _ = scaled_dot_product_attention(
        *(a.astype(np.float64) for a in (Q, K, V)), scale=scale
    )
    _, w = scaled_dot_product_attention(Q, K, V, scale=scale)
    tol = 4 * np.finfo(np.float32).eps
    np.testing.assert_allclose(w, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize(("dtype", "tol"), [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_matches_the_bare_numpy_three_liner_and_keeps_the_dtype(dtype, tol) -> None:
    rng = np.random.default_rng(10)
    Q, K, V = (rng.standard_normal((2, 64, 16)).astype(dtype) for _ in range(3))
    out, w = scaled_dot_product_attention(Q, K, V)
    out_bare, w_bare = bare_numpy_attention(Q, K, V)
    assert out.dtype == w.dtype == dtype
    np.testing.assert_allclose(w, w_bare, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, out_bare, rtol=tol, atol=tol)


def test_inputs_are_not_modified() -> None:
    Q, K, V = random_qkv(11)
    copies = [a.copy() for a in (Q, K, V)]
    mask = causal_mask(4)[1:]
    scaled_dot_product_attention(Q, K, V, mask=mask)
    for before, after in zip(copies, (Q, K, V)):
        np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(mask, causal_mask(4)[1:])


def test_finite_scores_are_fine_when_entries_are_huge_but_never_meet() -> None:
    # the cheap bound on the scores, d_k * max|Q| * max|K| = 2 * 1e308 * 2, overflows, so the
    # scores themselves are checked; but the huge entry only ever meets a zero: they are
    # [[0, 0], [1, 2]], all finite
    Q = np.array([[1e308, 0.0], [0.0, 1.0]])
    K = np.array([[0.0, 1.0], [0.0, 2.0]])
    V = np.array([[1.0], [3.0]])
    out, w = scaled_dot_product_attention(Q, K, V, scale=1.0)
    e = math.e
    np.testing.assert_allclose(w, [[0.5, 0.5], [1 / (1 + e), e / (1 + e)]], rtol=1e-15)
    np.testing.assert_allclose(out[0], [2.0], rtol=1e-15)


def test_a_scale_that_overflows_the_scores_raises() -> None:
    Q = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"overflowed in float64.*scale 1e\+308"):
        scaled_dot_product_attention(Q, Q, np.ones((2, 1)), scale=1e308)


def test_a_fraction_scale_is_the_same_as_its_float() -> None:
    Q, K, V = random_qkv(12)
    out, w = scaled_dot_product_attention(Q, K, V, scale=Fraction(1, 2))
    out_f, w_f = scaled_dot_product_attention(Q, K, V, scale=0.5)
    np.testing.assert_array_equal(w, w_f)
    np.testing.assert_array_equal(out, out_f)


def test_a_padding_mask_with_a_head_axis_masks_each_sequence_in_every_head() -> None:
    # per-head scores (B, H, T, T) with B == H == 2: the mask needs the shape (B, 1, 1, T)
    rng = np.random.default_rng(13)
    Q, K, V = (rng.normal(size=(2, 2, 3, 4)) for _ in range(3))
    out, w = scaled_dot_product_attention(Q, K, V, mask=padding_mask([3, 1], 3)[:, None])
    for b, length in enumerate([3, 1]):
        for h in range(2):
            out_bh, w_bh = scaled_dot_product_attention(Q[b, h], K[b, h, :length], V[b, h, :length])
            np.testing.assert_allclose(w[b, h, :, :length], w_bh, rtol=1e-14)
            np.testing.assert_array_equal(w[b, h, :, length:], 0.0)
            np.testing.assert_allclose(out[b, h], out_bh, rtol=1e-14)


def test_a_padding_mask_without_its_head_axis_is_refused_even_when_batch_equals_heads() -> None:
    # (B, 1, T) against (B, H, T, T) would broadcast B against H: silently wrong when B == H
    rng = np.random.default_rng(14)
    Q, K, V = (rng.normal(size=(2, 2, 3, 4)) for _ in range(3))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 3\) has batch dimensions"):
        scaled_dot_product_attention(Q, K, V, mask=padding_mask([3, 1], 3))


def test_a_product_that_overflows_before_a_small_scale_raises_instead_of_giving_nan() -> None:
    # in float32, 4 * (1e19)^2 = 4e38 overflows inside Q @ K^T, although scale * 4e38 = 4e35
    # would fit: the scores cannot be computed in float32
    Q = np.full((2, 4), 1e19, dtype=np.float32)
    with pytest.raises(ValueError, match=r"overflowed in float32"):
        scaled_dot_product_attention(Q, Q, np.ones((2, 1), dtype=np.float32), scale=1e-3)
