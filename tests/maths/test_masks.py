"""causal_mask and padding_mask: against explicit loops, shapes, and the KV-cache alignment."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib import causal_mask, padding_mask


@pytest.mark.parametrize("T", [1, 2, 5])
def test_causal_mask_matches_loop(T: int) -> None:
    expected = [[j <= i for j in range(T)] for i in range(T)]
    mask = causal_mask(T)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, expected)


@pytest.mark.parametrize(("T_q", "T_k"), [(1, 4), (2, 5), (3, 3)])
def test_kv_cache_causal_mask_matches_loop(T_q: int, T_k: int) -> None:
    # the T_q queries are the last T_q positions of a T_k-long sequence
    expected = [[j <= (T_k - T_q) + i for j in range(T_k)] for i in range(T_q)]
    np.testing.assert_array_equal(causal_mask(T_q, T_k), expected)


def test_kv_cache_causal_mask_lets_the_last_query_see_every_key() -> None:
    mask = causal_mask(3, 7)
    assert mask.shape == (3, 7)
    assert mask[-1].all()
    np.testing.assert_array_equal(mask[0], [True] * 5 + [False] * 2)


def test_causal_mask_with_equal_lengths_is_the_lower_triangle() -> None:
    np.testing.assert_array_equal(causal_mask(4, 4), np.tril(np.ones((4, 4), dtype=bool)))


def test_causal_mask_refuses_fewer_keys_than_queries() -> None:
    with pytest.raises(ValueError, match=r"T_k=2 is smaller than T_q=3"):
        causal_mask(3, 2)


def test_padding_mask_matches_loop() -> None:
    lengths, T = [3, 0, 5, 1], 5
    expected = [[[j < n for j in range(T)]] for n in lengths]
    mask = padding_mask(lengths, T)
    assert mask.shape == (4, 1, 5) and mask.dtype == bool
    np.testing.assert_array_equal(mask, expected)


def test_padding_mask_broadcasts_over_queries() -> None:
    scores = np.zeros((2, 3, 4))  # (B, T_q, T_k)
    keep = np.broadcast_to(padding_mask([4, 2], 4), scores.shape)
    np.testing.assert_array_equal(keep[1], [[True, True, False, False]] * 3)


def test_padding_mask_accepts_a_numpy_integer_array() -> None:
    np.testing.assert_array_equal(padding_mask(np.array([1], dtype=np.uint8), 2), [[[True, False]]])


def test_padding_mask_with_a_head_axis_broadcasts_over_heads_and_queries() -> None:
    scores = np.zeros((2, 3, 4, 4))  # (B, H, T_q, T_k)
    keep = np.broadcast_to(padding_mask([4, 2], 4)[:, None], scores.shape)
    np.testing.assert_array_equal(keep[1], [[[True, True, False, False]] * 4] * 3)
    np.testing.assert_array_equal(keep[0], True)
