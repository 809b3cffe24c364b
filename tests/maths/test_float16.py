"""float16 is computed in float32 and rounded back: every public function whose sum would
overflow float16 (65,504 is its largest number) gives the float64 answer to float16 precision.

Two kinds of sum overflow float16: the softmax normaliser over many keys (70,000 equal scores sum
to 70,000) and a long dot product (256 entries of 16 give 65,536). Each function that sums is
fed the input that overflows its sum, and compared with the same function in float64.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import attnlib

N_KEYS = 70_000  # the softmax normaliser of N_KEYS equal scores overflows float16
F16 = np.float16


def many_keys(d_v: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query, N_KEYS keys that all score the same, values of 1: the output is exactly 1."""
    return np.zeros((1, 4)), np.zeros((N_KEYS, 4)), np.ones((N_KEYS, d_v))


def long_dot_products(heads: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries and keys whose dot products (of 256 entries near 16) pass 65,504."""
    rng = np.random.default_rng(0)
    shape = (heads, 4, 256) if heads else (4, 256)
    Q = 16 + rng.uniform(-0.5, 0.5, shape)
    K = 16 + rng.uniform(-0.5, 0.5, shape)
    return Q, K, rng.standard_normal(shape[:-1] + (3,))


def first(result):
    return result[0] if isinstance(result, tuple) else result


def mha(X, W):
    return attnlib.multi_head_attention(X, W, W, W, W, n_heads=1)


def head_backward(X, W, W_V, grad_output):
    return attnlib.attention_head_backward(X, W, W, W_V, grad_output)


# name -> (function, float64 inputs): each input overflows a float16 sum inside the function
CASES: dict[str, tuple[Callable, tuple]] = {
    "softmax over many keys": (attnlib.softmax, (np.zeros(N_KEYS),)),
    "attention over many keys": (attnlib.scaled_dot_product_attention, many_keys()),
    "attention of long dot products": (
        attnlib.scaled_dot_product_attention,
        long_dot_products(),
    ),
    "tiled attention over many keys": (attnlib.tiled_attention, many_keys()),
    "tiled attention in one tile": (
        lambda Q, K, V: attnlib.tiled_attention(Q, K, V, block_size=N_KEYS),
        many_keys(),
    ),
    "tiled attention of long dot products": (attnlib.tiled_attention, long_dot_products()),
    "decode with the KV cache": (
        lambda Q, K, V: attnlib.decode_with_kv_cache(Q, K, V)[0],
        long_dot_products(heads=2),
    ),
    "multi-head attention": (mha, (long_dot_products()[0], np.eye(256))),
    "attention backward over many keys": (
        attnlib.attention_backward,
        (*many_keys(), np.ones((1, 1))),
    ),
    "attention backward of long dot products": (
        attnlib.attention_backward,
        (*long_dot_products(), np.ones((4, 3))),
    ),
    "attention head backward": (
        head_backward,
        (long_dot_products()[0], np.eye(256), np.eye(256)[:, :3], np.ones((4, 3))),
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_float16_gives_the_float64_answer_in_float16(case: str) -> None:
    function, inputs = CASES[case]
    halves = [np.asarray(a).astype(F16) for a in inputs]
    expected = function(*(h.astype(np.float64) for h in halves))  # the same numbers in float64
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        got = function(*halves)
    expected_arrays = expected if isinstance(expected, tuple) else (expected,)
    got_arrays = got if isinstance(got, tuple) else (got,)
    for e, g in zip(expected_arrays, got_arrays):
        assert g.dtype == F16
        # computed in float32 and rounded once to float16 (eps 9.8e-4): a few eps apart
        scale = max(float(np.abs(e).max()), 1e-30)
        np.testing.assert_allclose(g.astype(float), e, rtol=4e-3, atol=4e-3 * scale)


def test_a_float16_softmax_over_many_keys_is_uniform_not_zero() -> None:
    weights = attnlib.softmax(np.zeros(N_KEYS, dtype=F16))
    assert weights.dtype == F16
    assert (weights == F16(1 / N_KEYS)).all()


def test_float16_attention_over_many_equal_keys_averages_the_values_to_one() -> None:
    out, weights = attnlib.scaled_dot_product_attention(*(a.astype(F16) for a in many_keys()))
    assert out.dtype == weights.dtype == F16 and float(out[0, 0]) == 1.0


def test_tiling_steps_keep_their_float16_running_state_in_float32() -> None:
    Q, K, V = (a.astype(F16) for a in many_keys())
    steps = list(attnlib.tiled_attention_steps(Q, K, V, block_size=1000))
    assert {s.l.dtype for s in steps} == {s.acc.dtype for s in steps} == {np.dtype(np.float32)}
    assert float(steps[-1].l[0, 0]) == N_KEYS  # past float16's largest number, 65,504
    np.testing.assert_array_equal(
        steps[-1].output.astype(F16), attnlib.tiled_attention(Q, K, V, block_size=1000)
    )
