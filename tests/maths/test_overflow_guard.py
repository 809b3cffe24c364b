"""One overflow guard for every entry point: finite but huge inputs raise a ValueError that names
the caller's arguments to rescale (never a wrong number, an inf or a numpy warning)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import attnlib

HUGE = 1e200  # finite, but a product of two overflows float64
ONES = np.ones((3, 4))


def append_to_float16_cache():
    cache = attnlib.KVCache(max_tokens=2, n_kv_heads=1, d_head=4, dtype=np.float16)
    cache.append(np.full((1, 1, 4), 1e5), np.ones((1, 1, 4)))  # 1e5 > 65,504


# name -> (call, names the message must give, internal names it must not give)
CASES = {
    "attention": (
        lambda: attnlib.scaled_dot_product_attention(ONES * HUGE, ONES * HUGE, ONES),
        ["Q", "K"],
        [],
    ),
    "tiled attention": (
        lambda: attnlib.tiled_attention(ONES * HUGE, ONES * HUGE, ONES),
        ["Q", "K"],
        [],
    ),
    "decode with the KV cache, float32": (
        lambda: attnlib.decode_with_kv_cache(
            *(np.full((1, 3, 4), v, np.float32) for v in (1e20, 1e20, 1.0))
        ),
        ["Q", "K"],
        [],
    ),
    "float16 KV cache append": (append_to_float16_cache, ["k"], []),
    "attention backward, huge grad_output": (
        lambda: attnlib.attention_backward(ONES, ONES, ONES, np.full((3, 4), 1e308)),
        ["grad_output"],
        [],
    ),
    "head backward, huge projection": (
        lambda: attnlib.attention_head_backward(
            ONES * HUGE, np.eye(4) * HUGE, np.eye(4), np.eye(4), ONES
        ),
        ["X", "W_Q"],
        ["|Q|"],
    ),
    "head backward, huge scores": (
        lambda: attnlib.attention_head_backward(
            ONES * 1e100, np.eye(4) * 1e60, np.eye(4) * 1e60, np.eye(4), ONES
        ),
        ["X @ W_Q", "X @ W_K"],
        ["|Q|"],
    ),
    "multi-head attention, huge scores": (
        lambda: attnlib.multi_head_attention(
            ONES * 1e100, *(np.eye(4) * 1e60,) * 2, np.eye(4), np.eye(4), n_heads=2
        ),
        ["X @ W_q", "X @ W_k"],
        ["|Q|"],
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_an_overflow_raises_naming_the_callers_arguments(case: str) -> None:
    call, names, internal = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy overflow warning would be an error too
        with pytest.raises(ValueError, match="overflowed in") as err:
            call()
    message = str(err.value)
    for name in names:
        assert f"|{name}| entry" in message and re.search(rf"rescale .*{re.escape(name)}", message)
    for name in internal:
        assert name not in message


def test_a_float16_cache_keeps_values_that_fit() -> None:
    cache = attnlib.KVCache(max_tokens=1, n_kv_heads=1, d_head=2, dtype=np.float16)
    keys, _ = cache.append(np.full((1, 1, 2), 6e4), np.ones((1, 1, 2)))
    assert keys.dtype == np.float16 and np.isfinite(keys).all()


def test_decode_equals_attention_where_both_succeed_in_float32() -> None:
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((2, 5, 4)).astype(np.float32) * 30 for _ in range(3))
    out, _ = attnlib.decode_with_kv_cache(Q, K, V)
    expected, _ = attnlib.scaled_dot_product_attention(Q, K, V, mask=attnlib.causal_mask(5))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
