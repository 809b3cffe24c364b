"""softmax and softmax_jacobian: against explicit loops, their laws, and awkward inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from attnlib import softmax, softmax_jacobian

FAST = settings(max_examples=50, deadline=None, database=None)

#: Rows of moderate scores, shape (..., n) with n >= 1.
score_arrays = arrays(
    np.float64,
    array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    elements=st.floats(-50, 50),
)


def softmax_loop(row: list[float]) -> list[float]:
    """softmax of one row, written out with Python floats."""
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    total = sum(exps)
    return [e / total for e in exps]


def test_matches_explicit_loop_row_by_row() -> None:
    x = np.random.default_rng(0).normal(scale=3.0, size=(3, 5))
    expected = [softmax_loop(list(row)) for row in x]
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-14)


def test_axis_zero_normalises_columns() -> None:
    x = np.random.default_rng(1).normal(size=(4, 3))
    expected = np.array([softmax_loop(list(col)) for col in x.T]).T
    np.testing.assert_allclose(softmax(x, axis=0), expected, rtol=1e-14)


def test_seed_003_small_and_large_scores_at_two_decimals() -> None:
    # seed 003: softmax([1, 2, 3]) = [0.09, 0.24, 0.67]; softmax([8, 16, 24]) = [0.00, 0.00, 1.00]
    np.testing.assert_array_equal(np.round(softmax([1, 2, 3]), 2), [0.09, 0.24, 0.67])
    np.testing.assert_array_equal(np.round(softmax([8, 16, 24]), 2), [0.0, 0.0, 1.0])


@FAST
@given(score_arrays)
def test_rows_sum_to_one(x: np.ndarray) -> None:
    np.testing.assert_allclose(softmax(x).sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@FAST
@given(score_arrays, st.floats(-1e3, 1e3))
def test_adding_a_constant_to_every_score_changes_nothing(x: np.ndarray, c: float) -> None:
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=0, atol=1e-12)


@FAST
@given(score_arrays)
def test_weights_lie_in_zero_one_and_keep_the_order_of_scores(x: np.ndarray) -> None:
    p = softmax(x)
    assert ((p >= 0) & (p <= 1)).all()
    flat_x, flat_p = x.reshape(-1, x.shape[-1]), p.reshape(-1, x.shape[-1])
    for row_x, row_p in zip(flat_x, flat_p):
        order = np.argsort(row_x, kind="stable")
        assert (np.diff(row_p[order]) >= 0).all()


def test_scores_of_plus_minus_1e4_stay_finite() -> None:
    p = softmax([1e4, -1e4, 0.0, 1e4])
    assert np.isfinite(p).all()
    np.testing.assert_array_equal(p, [0.5, 0.0, 0.0, 0.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scores_spanning_more_than_the_dtype_range_give_one_hot_without_warning(dtype) -> None:
    big = np.finfo(dtype).max
    p = softmax(np.array([big, -big], dtype=dtype))  # pytest -W error turns a warning into failure
    np.testing.assert_array_equal(p, [1.0, 0.0])


def test_float32_stays_float32() -> None:
    assert softmax(np.array([1.0, 2.0], dtype=np.float32)).dtype == np.float32


def test_float32_with_a_mask_stays_float32() -> None:
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert softmax(x, mask=[True, False, True]).dtype == np.float32


def test_integers_are_promoted_to_float64() -> None:
    p = softmax(np.array([1, 2, 3], dtype=np.int32))
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, softmax_loop([1.0, 2.0, 3.0]), rtol=1e-15)


def test_nested_lists_are_accepted() -> None:
    np.testing.assert_allclose(softmax([[0.0, 0.0], [1.0, 1.0]]), [[0.5, 0.5], [0.5, 0.5]])


def test_masked_entries_are_exactly_zero_and_the_rest_renormalise() -> None:
    x = np.array([3.0, 1.0, 2.0, 0.5])
    keep = np.array([True, False, True, False])
    p = softmax(x, mask=keep)
    assert (p[~keep] == 0.0).all()
    np.testing.assert_allclose(p[keep], softmax_loop([3.0, 2.0]), rtol=1e-15)


def test_minus_infinity_means_zero_weight() -> None:
    p = softmax([0.0, -np.inf, 0.0])
    np.testing.assert_array_equal(p, [0.5, 0.0, 0.5])


def test_a_row_with_nothing_kept_is_all_zeros_not_nan() -> None:
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    mask = np.array([[True, True], [False, False]])
    p = softmax(x, mask=mask)
    np.testing.assert_array_equal(p[1], [0.0, 0.0])
    np.testing.assert_allclose(p[0].sum(), 1.0)


def test_a_row_of_minus_infinity_is_all_zeros_not_nan() -> None:
    np.testing.assert_array_equal(softmax([-np.inf, -np.inf]), [0.0, 0.0])


def test_mask_broadcasts_over_rows() -> None:
    x = np.arange(6.0).reshape(2, 3)
    p = softmax(x, mask=np.array([True, True, False]))
    np.testing.assert_array_equal(p[:, 2], 0.0)
    np.testing.assert_allclose(p[:, :2], softmax(x[:, :2]), rtol=1e-15)


# --------------------------------------------------------------------------- softmax_jacobian


def test_jacobian_matches_the_formula_written_as_loops() -> None:
    p = softmax([0.3, -1.2, 2.0, 0.7])
    n = p.size
    expected = [[p[i] * ((1.0 if i == j else 0.0) - p[j]) for j in range(n)] for i in range(n)]
    np.testing.assert_allclose(softmax_jacobian(p), expected, rtol=1e-15, atol=1e-17)


@FAST
@given(arrays(np.float64, st.integers(1, 6), elements=st.floats(-5, 5)))
def test_jacobian_matches_central_finite_differences_of_softmax(x: np.ndarray) -> None:
    h = 1e-6  # central differences: truncation ~h^2 = 1e-12, rounding ~eps/h = 2e-10
    numeric = np.empty((x.size, x.size))
    for j in range(x.size):
        step = np.zeros_like(x)
        step[j] = h
        numeric[:, j] = (softmax(x + step) - softmax(x - step)) / (2 * h)
    np.testing.assert_allclose(softmax_jacobian(softmax(x)), numeric, rtol=0, atol=1e-8)


def test_jacobian_rows_sum_to_zero() -> None:
    # softmax outputs always sum to 1, so moving any score changes the total by 0
    p = softmax(np.random.default_rng(2).normal(size=(3, 5)))
    np.testing.assert_allclose(softmax_jacobian(p).sum(axis=-2), 0.0, atol=1e-15)


def test_jacobian_works_row_by_row_over_batch_dimensions() -> None:
    p = softmax(np.random.default_rng(3).normal(size=(2, 3, 4)))
    J = softmax_jacobian(p)
    assert J.shape == (2, 3, 4, 4)
    np.testing.assert_array_equal(J[1, 2], softmax_jacobian(p[1, 2]))


def test_jacobian_of_a_fully_masked_row_is_zero() -> None:
    np.testing.assert_array_equal(softmax_jacobian([0.0, 0.0, 0.0]), np.zeros((3, 3)))


def test_jacobian_of_a_one_hot_row_is_zero() -> None:
    # the saturation of seed 000: a one-hot softmax passes back no gradient at all
    np.testing.assert_array_equal(softmax_jacobian([0.0, 1.0, 0.0]), np.zeros((3, 3)))


def test_jacobian_keeps_float32() -> None:
    p = softmax(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    assert softmax_jacobian(p).dtype == np.float32


def test_the_input_is_not_modified() -> None:
    x = np.array([[3.0, 1.0, -np.inf], [0.0, 2.0, 1.0]])
    before = x.copy()
    softmax(x, mask=np.array([True, False, True]))
    np.testing.assert_array_equal(x, before)


def test_a_mask_with_batch_dimensions_needs_one_per_dimension_of_x() -> None:
    # a (B, 1, n) mask against x of shape (B, H, T, n) would pair B with H
    x = np.zeros((2, 2, 3, 4))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 4\) has batch dimensions"):
        softmax(x, mask=np.ones((2, 1, 4), dtype=bool))
    assert softmax(x, mask=np.ones((2, 1, 1, 4), dtype=bool)).shape == x.shape
