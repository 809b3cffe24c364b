"""The KV cache: its byte count, its append, and decoding with it equals full causal attention."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import causal_mask, merge_heads, multi_head_attention, scaled_dot_product_attention
from attnlib import split_heads as split
from attnlib.kv_cache import KVCache, decode_step_bytes, decode_with_kv_cache, kv_cache_bytes

# --- kv_cache_bytes -----------------------------------------------------------------------------


def test_bytes_count_k_and_v_for_every_layer_kv_head_token_and_entry() -> None:
    # 2 (K and V) * 3 layers * 4 KV heads * 5 tokens * 6 entries * 2 bytes (float16)
    assert kv_cache_bytes(5, 3, 4, 6, np.float16) == 2 * 3 * 4 * 5 * 6 * 2


def test_bytes_follow_the_dtype_item_size() -> None:
    fp16 = kv_cache_bytes(10, 2, 2, 8, "float16")
    assert kv_cache_bytes(10, 2, 2, 8, "float32") == 2 * fp16
    assert kv_cache_bytes(10, 2, 2, 8, np.int8) * 2 == fp16


def test_bytes_scale_with_the_batch_and_are_zero_for_an_empty_cache() -> None:
    assert kv_cache_bytes(7, 2, 2, 4, batch_size=3) == 3 * kv_cache_bytes(7, 2, 2, 4)
    assert kv_cache_bytes(0, 2, 2, 4) == 0


def test_bytes_are_exact_python_ints_at_sizes_past_int32() -> None:
    n = kv_cache_bytes(1_000_000, 80, 64, 128, "float32", batch_size=64)
    assert isinstance(n, int) and n == 2 * 64 * 80 * 64 * 1_000_000 * 128 * 4


def test_bytes_equal_what_a_cache_of_that_size_stores() -> None:
    cache = KVCache(max_tokens=9, n_kv_heads=3, d_head=4, batch_shape=(2,), dtype=np.float32)
    cache.append(np.ones((2, 3, 5, 4)), np.ones((2, 3, 5, 4)))
    assert cache.nbytes == kv_cache_bytes(5, 1, 3, 4, np.float32, batch_size=2)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"n_tokens": -1}, ValueError, "n_tokens must be >= 0"),
        ({"n_layers": 0}, ValueError, "n_layers must be >= 1"),
        ({"n_kv_heads": 2.0}, TypeError, "n_kv_heads must be an integer"),
        ({"dtype": "complex64"}, TypeError, "integer or floating dtype; got complex64"),
        ({"dtype": "not a dtype"}, TypeError, "dtype must be a numpy dtype"),
    ],
)
def test_bad_arguments_of_kv_cache_bytes_raise_naming_them(kwargs, error, pattern) -> None:
    args = {"n_tokens": 4, "n_layers": 2, "n_kv_heads": 2, "d_head": 8, **kwargs}
    with pytest.raises(error, match=pattern):
        kv_cache_bytes(**args)


# --- decode_step_bytes --------------------------------------------------------------------------


def test_a_decode_step_reads_every_parameter_once_and_every_sequences_cache() -> None:
    cache = kv_cache_bytes(100, 4, 2, 8, np.float16)  # one sequence's cache
    assert decode_step_bytes(5_000, 100, 4, 2, 8, np.float16, batch_size=3) == 5_000 * 2 + 3 * cache


@given(
    n_parameters=st.integers(1, 10**12),
    n_tokens=st.integers(0, 10**6),
    batch=st.integers(1, 512),
    dtype=st.sampled_from(["float16", "float32", "int8"]),
)
@settings(max_examples=50, deadline=None)
def test_the_batch_multiplies_the_cache_and_never_the_parameters(
    n_parameters, n_tokens, batch, dtype
) -> None:
    one = decode_step_bytes(n_parameters, n_tokens, 32, 8, 128, dtype)
    many = decode_step_bytes(n_parameters, n_tokens, 32, 8, 128, dtype, batch_size=batch)
    assert many - one == (batch - 1) * kv_cache_bytes(n_tokens, 32, 8, 128, dtype)
    assert decode_step_bytes(n_parameters, 0, 32, 8, 128, dtype, batch_size=batch) == (
        n_parameters * np.dtype(dtype).itemsize
    )


def test_a_llama_2_7b_step_at_8k_tokens_in_float16_reads_its_parameters_and_4_gib_of_cache() -> (
    None
):
    # 6,738,415,616 parameters (Llama-2-7B), 32 layers of 32 K/V heads of 128: 4 GiB of cache
    step = decode_step_bytes(6_738_415_616, 8192, 32, 32, 128, np.float16)
    assert step == 2 * 6_738_415_616 + 4 * 2**30


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"n_parameters": 0}, ValueError, "n_parameters must be >= 1"),
        ({"n_parameters": 7e9}, TypeError, "n_parameters must be an integer"),
        ({"n_tokens": -5}, ValueError, "n_tokens must be >= 0"),
        ({"batch_size": 0}, ValueError, "batch_size must be >= 1"),
        ({"dtype": "complex64"}, TypeError, "integer or floating dtype; got complex64"),
    ],
)
def test_bad_arguments_of_decode_step_bytes_raise_naming_them(kwargs, error, pattern) -> None:
    args = {"n_parameters": 1000, "n_tokens": 4, "n_layers": 2, "n_kv_heads": 2, "d_head": 8}
    with pytest.raises(error, match=pattern):
        decode_step_bytes(**{**args, **kwargs})


# --- KVCache ------------------------------------------------------------------------------------


def test_append_returns_everything_cached_with_the_new_tokens_last() -> None:
    rng = np.random.default_rng(0)
    cache = KVCache(max_tokens=6, n_kv_heads=2, d_head=3, d_v=5)
    k1, v1 = rng.normal(size=(2, 2, 3)), rng.normal(size=(2, 2, 5))
    k2, v2 = rng.normal(size=(2, 1, 3)), rng.normal(size=(2, 1, 5))
    cache.append(k1, v1)
    keys, values = cache.append(k2, v2)
    assert cache.length == 3
    np.testing.assert_array_equal(keys, np.concatenate([k1, k2], axis=-2))
    np.testing.assert_array_equal(values, np.concatenate([v1, v2], axis=-2))


def test_returned_keys_and_values_are_read_only() -> None:
    cache = KVCache(max_tokens=2, n_kv_heads=1, d_head=2)
    keys, values = cache.append(np.ones((1, 1, 2)), np.ones((1, 1, 2)))
    with pytest.raises(ValueError, match="read-only"):
        keys[0, 0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        values[0, 0, 0] = 5.0


def test_an_empty_cache_holds_zero_tokens_and_zero_bytes() -> None:
    cache = KVCache(max_tokens=3, n_kv_heads=2, d_head=4, batch_shape=(5,))
    assert cache.length == 0 and cache.nbytes == 0
    assert cache.keys.shape == (5, 2, 0, 4)


def test_appending_past_the_capacity_raises() -> None:
    cache = KVCache(max_tokens=2, n_kv_heads=1, d_head=2)
    cache.append(np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="the cache is full: it holds 2 of max_tokens=2"):
        cache.append(np.ones((1, 1, 2)), np.ones((1, 1, 2)))


def test_a_key_of_the_wrong_shape_raises_naming_both_shapes() -> None:
    cache = KVCache(max_tokens=4, n_kv_heads=2, d_head=3)
    with pytest.raises(
        ValueError, match=r"k must have shape .*\(2, 't', 3\).*got k shape \(3, 1, 3\)"
    ):
        cache.append(np.ones((3, 1, 3)), np.ones((2, 1, 3)))


def test_k_and_v_with_different_token_counts_raise() -> None:
    cache = KVCache(max_tokens=4, n_kv_heads=1, d_head=2)
    with pytest.raises(ValueError, match="same number of new tokens"):
        cache.append(np.ones((1, 2, 2)), np.ones((1, 1, 2)))


def test_nan_in_a_new_value_raises() -> None:
    cache = KVCache(max_tokens=4, n_kv_heads=1, d_head=2)
    with pytest.raises(ValueError, match="v must be finite; got 1 NaN"):
        cache.append(np.ones((1, 1, 2)), np.array([[[1.0, np.nan]]]))


def test_an_integer_cache_dtype_raises() -> None:
    with pytest.raises(TypeError, match="dtype must be a floating dtype; got int8"):
        KVCache(max_tokens=4, n_kv_heads=1, d_head=2, dtype=np.int8)


# --- decode_with_kv_cache -----------------------------------------------------------------------


def full_causal(Q, K, V):
    """Reference: repeat each KV head for its query heads, then full attention, causal mask."""
    group = Q.shape[-3] // K.shape[-3]
    K, V = np.repeat(K, group, axis=-3), np.repeat(V, group, axis=-3)
    return scaled_dot_product_attention(Q, K, V, mask=causal_mask(Q.shape[-2]))[0]


@settings(max_examples=40, deadline=None)
@given(
    n_kv_heads=st.integers(1, 3),
    group=st.integers(1, 3),
    T=st.integers(1, 6),
    d_head=st.integers(1, 4),
    d_v=st.integers(1, 3),
    batch=st.lists(st.integers(1, 2), max_size=2).map(tuple),
    seed=st.integers(0, 2**32 - 1),
)
def test_decoding_with_the_cache_equals_full_causal_attention(
    n_kv_heads, group, T, d_head, d_v, batch, seed
) -> None:
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(*batch, n_kv_heads * group, T, d_head))
    K = rng.normal(size=(*batch, n_kv_heads, T, d_head))
    V = rng.normal(size=(*batch, n_kv_heads, T, d_v))
    output, cache = decode_with_kv_cache(Q, K, V)
    np.testing.assert_allclose(output, full_causal(Q, K, V), rtol=1e-10, atol=1e-12)
    assert cache.length == T
    np.testing.assert_array_equal(cache.keys, K)
    np.testing.assert_array_equal(cache.values, V)


def test_decoding_reproduces_causal_multi_head_attention_with_grouped_queries() -> None:
    rng = np.random.default_rng(7)
    T, d_model, n_heads, n_kv_heads, d_head = 5, 12, 6, 2, 3
    X = rng.normal(size=(T, d_model))
    W_q = rng.normal(size=(d_model, n_heads * d_head))
    W_k, W_v = rng.normal(size=(2, d_model, n_kv_heads * d_head))
    W_o = rng.normal(size=(n_heads * d_head, d_model))
    expected, _ = multi_head_attention(
        X, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, mask=causal_mask(T)
    )
    heads, _ = decode_with_kv_cache(
        split(X @ W_q, n_heads), split(X @ W_k, n_kv_heads), split(X @ W_v, n_kv_heads)
    )
    np.testing.assert_allclose(merge_heads(heads) @ W_o, expected, rtol=1e-10)


def test_decoding_keeps_float32() -> None:
    Q = np.ones((2, 3, 4), np.float32)
    K = V = np.ones((1, 3, 4), np.float32)
    output, cache = decode_with_kv_cache(Q, K, V)
    assert output.dtype == np.float32 and cache.keys.dtype == np.float32


def test_kv_heads_that_do_not_divide_the_query_heads_raise() -> None:
    with pytest.raises(
        ValueError, match=r"n_kv_heads=2 \(K.shape\[-3\]\) does not divide n_heads=3"
    ):
        decode_with_kv_cache(np.ones((3, 4, 2)), np.ones((2, 4, 2)), np.ones((2, 4, 2)))


def test_keys_for_a_different_number_of_tokens_raise_naming_the_shapes() -> None:
    with pytest.raises(ValueError, match=r"K must have shape .*K shape \(1, 3, 2\)"):
        decode_with_kv_cache(np.ones((2, 4, 2)), np.ones((1, 3, 2)), np.ones((1, 3, 2)))


def test_different_batch_dimensions_raise() -> None:
    with pytest.raises(ValueError, match="same leading"):
        decode_with_kv_cache(np.ones((2, 1, 4, 2)), np.ones((3, 1, 4, 2)), np.ones((3, 1, 4, 2)))


def test_infinite_queries_raise() -> None:
    Q = np.ones((1, 2, 2))
    Q[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="Q must be finite; got 0 NaN and 1 infinite"):
        decode_with_kv_cache(Q, np.ones((1, 2, 2)), np.ones((1, 2, 2)))


def test_kv_cache_bytes_dtype_none_means_the_documented_default_float16() -> None:
    args = {"n_tokens": 8, "n_layers": 2, "n_kv_heads": 2, "d_head": 4}
    assert kv_cache_bytes(**args, dtype=None) == kv_cache_bytes(**args) == 2 * 2 * 2 * 8 * 4 * 2
