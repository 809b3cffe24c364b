"""Sizes are refused before allocating: every public function that allocates from a size
argument raises a ValueError naming the argument and the bytes it would take, instead of asking
numpy for terabytes (a MemoryError naming nothing, or a killed process where memory overcommits).
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

import attnlib
from attnlib import _validation, positions
from attnlib.retrieval import retrieval_problem, train_retrieval
from attnlib.saturation import softmax_jacobian_norm

MILLION = 10**6


def long(T: int, d: int = 1) -> np.ndarray:
    return np.zeros((T, d))


def one_hot(n: int) -> np.ndarray:
    p = np.zeros(n)
    p[0] = 1.0
    return p


# name -> (call, text the message must contain: the argument and its size)
CASES = {
    "attention, 10^6 tokens": (
        lambda: attnlib.scaled_dot_product_attention(long(MILLION), long(MILLION), long(MILLION)),
        r"Q shape \(1000000, 1\)",
    ),
    "tiled attention, one tile of 10^6": (
        lambda: attnlib.tiled_attention(*(long(MILLION),) * 3, block_size=MILLION),
        r"Q shape \(1000000, 1\)",
    ),
    "tiled attention steps, one tile of 10^6": (
        lambda: attnlib.tiled_attention_steps(*(long(MILLION),) * 3, block_size=MILLION),
        r"Q shape \(1000000, 1\)",
    ),
    "multi-head attention, 10^5 tokens": (
        lambda: attnlib.multi_head_attention(long(10**5, 2), *(np.eye(2),) * 4, n_heads=1),
        r"X shape \(100000, 2\)",
    ),
    "attention backward, 10^6 tokens": (
        lambda: attnlib.attention_backward(*(long(MILLION),) * 4),
        r"Q shape \(1000000, 1\)",
    ),
    "head backward, 10^6 tokens": (
        lambda: attnlib.attention_head_backward(long(MILLION), *(np.eye(1),) * 3, long(MILLION)),
        r"\(1000000, 1\)",
    ),
    "softmax_jacobian of length 10^6": (
        lambda: attnlib.softmax_jacobian(one_hot(MILLION)),
        r"p shape \(1000000,\)",
    ),
    "softmax_jacobian_norm of length 10^6": (
        lambda: softmax_jacobian_norm(one_hot(MILLION)),
        r"p shape \(1000000,\)",
    ),
    "KVCache of 10^9 slots": (
        lambda: attnlib.KVCache(max_tokens=10**9, n_kv_heads=8, d_head=64),
        r"max_tokens=1000000000",
    ),
    "causal_mask(10**7)": (lambda: attnlib.causal_mask(10**7), r"T_q=10000000"),
    "causal_mask(1, 10**9)": (lambda: attnlib.causal_mask(1, 10**9), r"T_k=1000000000"),
    "padding_mask(T=10**13)": (
        lambda: attnlib.padding_mask([1], T=10**13),
        r"T=10000000000000",
    ),
    "sample_dot_products(d_k=10**12)": (
        lambda: attnlib.sample_dot_products(10**12, 1, np.random.default_rng(0)),
        r"d_k=1000000000000",
    ),
    "sample_dot_products(n_pairs=10**12)": (
        lambda: attnlib.sample_dot_products(1, 10**12, np.random.default_rng(0)),
        r"n_pairs=1000000000000",
    ),
    "kv_head_index(10**12, 1)": (
        lambda: attnlib.kv_head_index(10**12, 1),
        r"n_heads=1000000000000",
    ),
    "retrieval_problem(d_k=10**12)": (
        lambda: retrieval_problem(d_k=10**12),
        r"d_k=1000000000000",
    ),
    "train_retrieval(steps=10**9)": (
        lambda: train_retrieval(retrieval_problem(d_k=4, n_pairs=4), steps=10**9),
        r"steps=1000000000",
    ),
    "sinusoidal(10**7, 10**6)": (
        lambda: positions.sinusoidal(10**7, 10**6),
        r"T=10000000, d=1000000",
    ),
    "sinusoidal(1, d=10**12)": (lambda: positions.sinusoidal(1, 10**12), r"d=1000000000000"),
    "rope_frequencies(10**12)": (
        lambda: positions.rope_frequencies(10**12),
        r"d=1000000000000",
    ),
    "rope of a broadcast view of 10^10 tokens": (
        lambda: positions.rope(np.broadcast_to(np.zeros(2), (10**10, 2))),
        r"x shape \(10000000000, 2\)",
    ),
    "alibi_slopes(10**9)": (lambda: positions.alibi_slopes(10**9), r"n_heads=1000000000"),
    "alibi_bias(8, 10**7)": (lambda: positions.alibi_bias(8, 10**7), r"T_q=10000000"),
    "alibi_bias(10**9, 1)": (lambda: positions.alibi_bias(10**9, 1), r"n_heads=1000000000"),
    "alibi_bias(1, 1, 10**10)": (lambda: positions.alibi_bias(1, 1, 10**10), r"T_k=10000000000"),
    **{
        f"relative_scores({scheme!r}) at 10^6 offsets of width 10^4": (
            lambda scheme=scheme: positions.relative_scores(
                np.zeros(10**4), np.zeros(10**4), np.zeros(MILLION), scheme
            ),
            r"offsets shape \(1000000,\) and q, k of length 10000",
        )
        for scheme in ("sinusoidal", "RoPE")
    },
    **{
        f"positioned_scores({scheme!r}), 10^5 tokens": (
            lambda scheme=scheme: positions.positioned_scores(
                long(10**5, 2), np.eye(2), np.eye(2), scheme
            ),
            r"X shape \(100000, 2\)",
        )
        for scheme in positions.SCHEMES
    },
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_size_beyond_the_limit_is_refused_naming_it_and_its_bytes(case: str) -> None:
    call, names = CASES[case]
    start = time.perf_counter()
    with pytest.raises(ValueError, match="would take [0-9,]+ bytes") as err:
        call()
    assert re.search(names, str(err.value)), str(err.value)
    assert "attnlib._validation.MAX_BYTES" in str(err.value)
    assert time.perf_counter() - start < 1.0  # refused, not attempted


def test_the_limit_is_4_GiB() -> None:
    assert _validation.MAX_BYTES == 4 * 2**30


def test_the_limit_counts_the_bytes_of_the_array_it_guards(monkeypatch) -> None:
    mask = attnlib.causal_mask(30, 40)
    needed = mask.nbytes + 8 * (30 + 40)  # the mask and its two int64 position vectors
    monkeypatch.setattr(_validation, "MAX_BYTES", needed)
    np.testing.assert_array_equal(attnlib.causal_mask(30, 40), mask)  # at the limit: fine
    monkeypatch.setattr(_validation, "MAX_BYTES", needed - 1)
    with pytest.raises(ValueError, match=f"would take {needed:,} bytes"):
        attnlib.causal_mask(30, 40)


def test_attention_under_the_limit_is_unchanged(monkeypatch) -> None:
    Q = np.random.default_rng(0).standard_normal((50, 4))
    expected = attnlib.scaled_dot_product_attention(Q, Q, Q)[0]
    monkeypatch.setattr(_validation, "MAX_BYTES", 50 * 50 * 8)  # the scores exactly
    np.testing.assert_array_equal(attnlib.scaled_dot_product_attention(Q, Q, Q)[0], expected)
    monkeypatch.setattr(_validation, "MAX_BYTES", 50 * 50 * 8 - 1)
    with pytest.raises(ValueError, match="the scores"):
        attnlib.scaled_dot_product_attention(Q, Q, Q)


@pytest.mark.parametrize(
    ("call", "needed"),
    [
        # the float64 table (T, d), its angles (T, d/2) and the positions (T,)
        (lambda: positions.sinusoidal(30, 8), 8 * 30 * 8 + 8 * 30 * 4 + 8 * 30),
        # the float64 bias (H, T_q, T_k) and two int64 distance tables (T_q, T_k)
        (lambda: positions.alibi_bias(4, 20, 30), 8 * 4 * 20 * 30 + 16 * 20 * 30),
    ],
    ids=["sinusoidal", "alibi_bias"],
)
def test_a_position_table_at_the_limit_is_unchanged(monkeypatch, call, needed: int) -> None:
    expected = call()
    monkeypatch.setattr(_validation, "MAX_BYTES", needed)
    np.testing.assert_array_equal(call(), expected)
    monkeypatch.setattr(_validation, "MAX_BYTES", needed - 1)
    with pytest.raises(ValueError, match=f"would take {needed:,} bytes"):
        call()
