"""split_heads, merge_heads and multi_head_attention (MHA, MQA, GQA) against explicit loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    split_heads,
)

FAST = settings(max_examples=50, deadline=None, database=None)


def mha_loop(X, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, mask=None):
    """Multi-head attention for a 2-D X, head by head, with the head -> KV head map spelt out."""
    d_head = W_q.shape[1] // n_heads
    d_v = W_v.shape[1] // n_kv_heads
    group = n_heads // n_kv_heads
    heads, weights = [], []
    for h in range(n_heads):
        kv = h // group  # query head h reads KV head h // group
        Q = X @ W_q[:, h * d_head : (h + 1) * d_head]
        K = X @ W_k[:, kv * d_head : (kv + 1) * d_head]
        V = X @ W_v[:, kv * d_v : (kv + 1) * d_v]
        out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
        heads.append(out)
        weights.append(w)
    return np.concatenate(heads, axis=-1) @ W_o, np.stack(weights)


def random_weights(seed, d_model=8, n_heads=4, n_kv_heads=4, d_head=2, d_v=3, T=5):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(T, d_model)),
        rng.normal(size=(d_model, n_heads * d_head)),
        rng.normal(size=(d_model, n_kv_heads * d_head)),
        rng.normal(size=(d_model, n_kv_heads * d_v)),
        rng.normal(size=(n_heads * d_v, d_model)),
    )


def test_split_heads_gives_head_i_the_columns_i_dhead_to_i_plus_1_dhead() -> None:
    x = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)  # (B, T, n_heads * d_head)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 3, 2)  # (B, n_heads, T, d_head)
    for b in range(2):
        for i in range(3):
            for t in range(3):
                np.testing.assert_array_equal(heads[b, i, t], x[b, t, 2 * i : 2 * i + 2])


def test_merge_heads_concatenates_heads_in_order() -> None:
    heads = np.arange(3 * 4 * 2, dtype=float).reshape(3, 4, 2)  # (n_heads, T, d_head)
    merged = merge_heads(heads)
    assert merged.shape == (4, 6)
    for t in range(4):
        np.testing.assert_array_equal(merged[t], np.concatenate([heads[i, t] for i in range(3)]))


@FAST
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.just(n),
            arrays(
                np.float64,
                st.tuples(
                    st.integers(1, 3), st.integers(1, 4), st.integers(1, 3).map(lambda d: d * n)
                ),
                elements=st.floats(-1e6, 1e6),
            ),
        )
    )
)
def test_merge_heads_undoes_split_heads(case) -> None:
    n_heads, x = case
    np.testing.assert_array_equal(merge_heads(split_heads(x, n_heads)), x)


def test_split_heads_keeps_float32() -> None:
    assert split_heads(np.zeros((2, 4), dtype=np.float32), 2).dtype == np.float32


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), [(4, None), (4, 4), (4, 2), (4, 1), (3, 1)])
def test_multi_head_attention_matches_a_loop_over_heads(n_heads, n_kv_heads) -> None:
    n_kv = n_heads if n_kv_heads is None else n_kv_heads
    X, W_q, W_k, W_v, W_o = random_weights(0, n_heads=n_heads, n_kv_heads=n_kv)
    out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, n_kv_heads)
    out_loop, w_loop = mha_loop(X, W_q, W_k, W_v, W_o, n_heads, n_kv)
    assert w.shape == (n_heads, 5, 5)
    np.testing.assert_allclose(w, w_loop, rtol=1e-12)
    np.testing.assert_allclose(out, out_loop, rtol=1e-12, atol=1e-12)


def test_gqa_equals_mha_whose_kv_heads_are_copied_to_their_query_heads() -> None:
    # 4 query heads, 2 KV heads: heads 0, 1 read KV head 0 and heads 2, 3 read KV head 1
    X, W_q, W_k, W_v, W_o = random_weights(1, n_heads=4, n_kv_heads=2, d_head=2, d_v=3)
    k_cols = [W_k[:, 0:2], W_k[:, 0:2], W_k[:, 2:4], W_k[:, 2:4]]
    v_cols = [W_v[:, 0:3], W_v[:, 0:3], W_v[:, 3:6], W_v[:, 3:6]]
    out_gqa, w_gqa = multi_head_attention(X, W_q, W_k, W_v, W_o, 4, n_kv_heads=2)
    out_mha, w_mha = multi_head_attention(X, W_q, np.hstack(k_cols), np.hstack(v_cols), W_o, 4)
    np.testing.assert_allclose(w_gqa, w_mha, rtol=1e-13)
    np.testing.assert_allclose(out_gqa, out_mha, rtol=1e-13, atol=1e-13)


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(1, 4))
def test_gqa_with_as_many_kv_heads_as_query_heads_is_mha(seed, n_heads, T) -> None:
    X, W_q, W_k, W_v, W_o = random_weights(
        seed, d_model=6, n_heads=n_heads, n_kv_heads=n_heads, T=T
    )
    out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads)
    out_gqa, w_gqa = multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, n_kv_heads=n_heads)
    np.testing.assert_array_equal(out_gqa, out)
    np.testing.assert_array_equal(w_gqa, w)


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 4))
def test_one_head_is_single_head_attention(seed, T, d_head) -> None:
    X, W_q, W_k, W_v, W_o = random_weights(
        seed, d_model=3, n_heads=1, n_kv_heads=1, d_head=d_head, T=T
    )
    out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, 1)
    single_out, single_w = scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
    np.testing.assert_allclose(w[0], single_w, rtol=1e-13)
    np.testing.assert_allclose(out, single_out @ W_o, rtol=1e-12, atol=1e-12)


def test_batched_input_gives_each_sequence_its_own_attention() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 5, 8))
    _, W_q, W_k, W_v, W_o = random_weights(2)
    out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, 4)
    assert out.shape == (3, 5, 8) and w.shape == (3, 4, 5, 5)
    out_1, w_1 = multi_head_attention(X[1], W_q, W_k, W_v, W_o, 4)
    np.testing.assert_allclose(out[1], out_1, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(w[1], w_1, rtol=1e-13)


def test_mask_is_shared_by_every_head() -> None:
    X, W_q, W_k, W_v, W_o = random_weights(3, n_kv_heads=2)
    _, w = multi_head_attention(X, W_q, W_k, W_v, W_o, 4, n_kv_heads=2, mask=causal_mask(5))
    _, w_loop = mha_loop(X, W_q, W_k, W_v, W_o, 4, 2, mask=causal_mask(5))
    np.testing.assert_array_equal(w[:, ~causal_mask(5)], 0.0)
    np.testing.assert_allclose(w, w_loop, rtol=1e-12)


def test_batched_padding_mask_is_applied_per_sequence() -> None:
    from attnlib import padding_mask

    rng = np.random.default_rng(4)
    X = rng.normal(size=(2, 5, 8))
    _, W_q, W_k, W_v, W_o = random_weights(4)
    out, w = multi_head_attention(X, W_q, W_k, W_v, W_o, 4, mask=padding_mask([5, 3], 5))
    np.testing.assert_array_equal(w[1, :, :, 3:], 0.0)
    out_short, _ = multi_head_attention(X[1, :3], W_q, W_k, W_v, W_o, 4)
    np.testing.assert_allclose(out[1, :3], out_short, rtol=1e-12, atol=1e-12)


def test_writing_to_split_heads_output_leaves_the_input_unchanged() -> None:
    x = np.arange(12.0).reshape(2, 6)
    heads = split_heads(x, 3)
    heads[...] = -1.0
    np.testing.assert_array_equal(x, np.arange(12.0).reshape(2, 6))


@pytest.mark.parametrize("shape", [(1, 3, 2), (3, 1, 2), (2, 3, 2)])
def test_writing_to_merge_heads_output_leaves_the_input_unchanged(shape) -> None:
    # one head, or one token, is where a reshape alone would return a view
    x = np.arange(float(np.prod(shape))).reshape(shape)
    merged = merge_heads(x)
    merged[...] = -1.0
    np.testing.assert_array_equal(x, np.arange(float(np.prod(shape))).reshape(shape))


def test_a_projection_too_large_for_the_dtype_raises() -> None:
    X, W_q, W_k, W_v, W_o = random_weights(5)
    with pytest.raises(ValueError, match=r"X @ W_k overflowed in float64"):
        multi_head_attention(X * 1e200, W_q, W_k * 1e200, W_v, W_o, 4)
