"""The hand-written backward pass: it agrees with finite differences, the Jacobian, and its laws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import examples, scaled_dot_product_attention, softmax, softmax_jacobian
from attnlib.gradients import (
    attention_backward,
    attention_head_backward,
    attention_head_input_backward,
    softmax_backward,
)

FAST = settings(max_examples=30, deadline=None, database=None)
FEW = settings(max_examples=15, deadline=None, database=None)  # each runs ~100 forward passes
SCALES = st.sampled_from([None, 1.0, 0.3])


def numerical_gradient(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar function ``f`` at ``x``, one entry at a time."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@st.composite
def qkv_and_upstream(draw, max_t: int = 4, max_d: int = 4):
    """Seeded Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v) and an upstream gradient G (T_q, d_v)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    T_q, T_k = draw(st.integers(1, max_t)), draw(st.integers(1, max_t))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    return (
        rng.normal(size=(T_q, d_k)),
        rng.normal(size=(T_k, d_k)),
        rng.normal(size=(T_k, d_v)),
        rng.normal(size=(T_q, d_v)),
    )


# --- softmax_backward -------------------------------------------------------------------------


@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), spread=st.floats(0.1, 20))
def test_softmax_backward_is_the_jacobian_transpose_times_the_upstream(seed, n, spread) -> None:
    rng = np.random.default_rng(seed)
    p = softmax(spread * rng.normal(size=(3, n)))
    g = rng.normal(size=(3, n))
    by_jacobian = np.einsum("rij,ri->rj", softmax_jacobian(p), g)
    np.testing.assert_allclose(softmax_backward(p, g), by_jacobian, atol=1e-15)


@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_softmax_backward_sums_to_zero_because_a_shift_changes_no_weight(seed, n) -> None:
    rng = np.random.default_rng(seed)
    p, g = softmax(rng.normal(size=n)), rng.normal(size=n)
    assert softmax_backward(p, g).sum() == pytest.approx(0.0, abs=1e-14)


def test_softmax_backward_of_a_one_hot_softmax_is_zero_whatever_the_upstream() -> None:
    p = np.array([0.0, 1.0, 0.0, 0.0])
    g = np.array([-5.0, 3.0, 100.0, 0.5])
    np.testing.assert_array_equal(softmax_backward(p, g), 0.0)


def test_softmax_backward_matches_finite_differences_of_a_loss() -> None:
    rng = np.random.default_rng(3)
    s, g = rng.normal(size=5), rng.normal(size=5)
    numeric = numerical_gradient(lambda x: softmax(x) @ g, s)
    np.testing.assert_allclose(softmax_backward(softmax(s), g), numeric, atol=1e-9)


# --- attention_backward -----------------------------------------------------------------------


@FEW
@given(data=qkv_and_upstream(), scale=SCALES)
def test_attention_backward_matches_finite_differences(data, scale) -> None:
    Q, K, V, G = data

    def loss(Q_, K_, V_):
        return np.sum(scaled_dot_product_attention(Q_, K_, V_, scale=scale)[0] * G)

    dQ, dK, dV = attention_backward(Q, K, V, G, scale=scale)
    np.testing.assert_allclose(dQ, numerical_gradient(lambda x: loss(x, K, V), Q), atol=1e-7)
    np.testing.assert_allclose(dK, numerical_gradient(lambda x: loss(Q, x, V), K), atol=1e-7)
    np.testing.assert_allclose(dV, numerical_gradient(lambda x: loss(Q, K, x), V), atol=1e-7)


@FAST
@given(data=qkv_and_upstream())
def test_each_gradient_has_the_shape_of_its_input(data) -> None:
    Q, K, V, G = data
    for grad, arr in zip(attention_backward(Q, K, V, G), (Q, K, V)):
        assert grad.shape == arr.shape


def test_a_batch_gives_each_item_its_own_gradients() -> None:
    rng = np.random.default_rng(5)
    Q, K, V = (
        rng.normal(size=(3, 2, 4, 3)),
        rng.normal(size=(3, 2, 5, 3)),
        rng.normal(size=(3, 2, 5, 2)),
    )
    G = rng.normal(size=(3, 2, 4, 2))
    batched = attention_backward(Q, K, V, G)
    for index in np.ndindex(3, 2):
        single = attention_backward(Q[index], K[index], V[index], G[index])
        for b, s in zip(batched, single):
            np.testing.assert_allclose(b[index], s, rtol=1e-12, atol=1e-15)


def test_keys_shared_by_a_batch_collect_the_gradient_of_every_item() -> None:
    rng = np.random.default_rng(6)
    Q, K, V = rng.normal(size=(4, 3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 3))
    G = rng.normal(size=(4, 3, 3))
    _, dK, dV = attention_backward(Q, K, V, G)
    per_item = [attention_backward(Q[b], K, V, G[b]) for b in range(4)]
    assert dK.shape == K.shape and dV.shape == V.shape
    np.testing.assert_allclose(dK, sum(g[1] for g in per_item), rtol=1e-12)
    np.testing.assert_allclose(dV, sum(g[2] for g in per_item), rtol=1e-12)


def test_unscaled_attention_at_large_d_k_passes_almost_no_gradient_to_a_typical_query() -> None:
    """A saturated softmax stops dQ for most queries; dV (no softmax on its path) still flows.

    The median over 64 queries: a query whose top two keys happen to tie is not saturated.
    """
    rng = np.random.default_rng(7)
    Q, K, V, G = (rng.normal(size=shape) for shape in ((64, 1024), (8, 1024), (8, 4), (64, 4)))
    dQ_raw, _, dV_raw = attention_backward(Q, K, V, G, scale=1.0)
    dQ, _, dV = attention_backward(Q, K, V, G)
    row_norm = np.linalg.norm
    assert np.median(row_norm(dQ_raw, axis=1)) < 1e-2 * np.median(row_norm(dQ, axis=1))
    assert np.median(row_norm(dV_raw, axis=1)) > 0.5 * np.median(row_norm(dV, axis=1))


# --- attention_head_backward ------------------------------------------------------------------


def it_loss(W_Q, W_K, W_V) -> float:
    """The notebook's loss: half the squared distance from the output of "it" to v_Order."""
    X = examples.ORDER_X
    out, _ = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    target = (X @ W_V)[0]
    return 0.5 * np.sum((out[3] - target) ** 2)


def test_head_backward_on_the_it_example_matches_finite_differences() -> None:
    X, W_Q, W_K, W_V = (
        examples.ORDER_X,
        examples.ORDER_W_Q,
        examples.ORDER_W_K,
        examples.ORDER_W_V,
    )
    out, _ = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    grad_output = np.zeros_like(out)
    grad_output[3] = out[3] - (X @ W_V)[0]  # the target v_Order is held fixed
    dW_Q, dW_K, _ = attention_head_backward(X, W_Q, W_K, W_V, grad_output)
    np.testing.assert_allclose(
        dW_Q, numerical_gradient(lambda w: it_loss(w, W_K, W_V), W_Q), atol=1e-8
    )
    np.testing.assert_allclose(
        dW_K, numerical_gradient(lambda w: it_loss(W_Q, w, W_V), W_K), atol=1e-8
    )


@FAST
@given(seed=st.integers(0, 2**32 - 1), batch=st.sampled_from([(), (2,), (2, 3)]), scale=SCALES)
def test_head_backward_is_x_transpose_times_the_attention_gradients(seed, batch, scale) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(*batch, 4, 5))
    W_Q, W_K, W_V = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    G = rng.normal(size=(*batch, 4, 2))
    dQ, dK, dV = attention_backward(X @ W_Q, X @ W_K, X @ W_V, G, scale=scale)
    got = attention_head_backward(X, W_Q, W_K, W_V, G, scale=scale)
    Xt = np.swapaxes(X, -1, -2)
    for g, d in zip(got, (dQ, dK, dV)):
        expected = (Xt @ d).reshape(-1, *g.shape).sum(axis=0)
        np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-12)


@FEW
@given(seed=st.integers(0, 2**32 - 1), scale=SCALES)
def test_head_backward_matches_finite_differences_of_any_linear_loss(seed, scale) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, 4))
    W_Q, W_K, W_V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    G = rng.normal(size=(3, 3))

    def loss(wq, wk, wv):
        return np.sum(scaled_dot_product_attention(X @ wq, X @ wk, X @ wv, scale=scale)[0] * G)

    dW_Q, dW_K, dW_V = attention_head_backward(X, W_Q, W_K, W_V, G, scale=scale)
    np.testing.assert_allclose(
        dW_Q, numerical_gradient(lambda w: loss(w, W_K, W_V), W_Q), atol=1e-7
    )
    np.testing.assert_allclose(
        dW_K, numerical_gradient(lambda w: loss(W_Q, w, W_V), W_K), atol=1e-7
    )
    np.testing.assert_allclose(
        dW_V, numerical_gradient(lambda w: loss(W_Q, W_K, w), W_V), atol=1e-7
    )


# --- attention_head_input_backward ------------------------------------------------------------


@FEW
@given(seed=st.integers(0, 2**32 - 1), scale=SCALES)
def test_input_backward_matches_finite_differences_of_any_linear_loss(seed, scale) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, 4))
    W_Q, W_K, W_V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    G = rng.normal(size=(3, 3))

    def loss(x):
        return np.sum(scaled_dot_product_attention(x @ W_Q, x @ W_K, x @ W_V, scale=scale)[0] * G)

    dX = attention_head_input_backward(X, W_Q, W_K, W_V, G, scale=scale)
    np.testing.assert_allclose(dX, numerical_gradient(loss, X), atol=1e-7)


@FAST
@given(seed=st.integers(0, 2**32 - 1), batch=st.sampled_from([(), (2,), (2, 3)]), scale=SCALES)
def test_input_backward_sums_the_query_key_and_value_paths(seed, batch, scale) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(*batch, 4, 5))
    W_Q, W_K, W_V = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    G = rng.normal(size=(*batch, 4, 2))
    dQ, dK, dV = attention_backward(X @ W_Q, X @ W_K, X @ W_V, G, scale=scale)
    dX = attention_head_input_backward(X, W_Q, W_K, W_V, G, scale=scale)
    assert dX.shape == X.shape
    np.testing.assert_allclose(dX, dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T, rtol=1e-10, atol=1e-12)


def test_input_backward_checks_its_arguments_as_the_head_backward_does() -> None:
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"W_V must be a \(d_model, d\) matrix with d_model = 4"):
        attention_head_input_backward(
            X, np.ones((4, 2)), np.ones((4, 2)), np.ones((5, 2)), np.ones((3, 2))
        )
    with pytest.raises(ValueError, match=r"grad_output must have the output's shape"):
        attention_head_input_backward(
            X, np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((3, 3))
        )


# --- bad input --------------------------------------------------------------------------------


def test_grad_output_of_the_wrong_shape_is_rejected_naming_both_shapes() -> None:
    Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))
    with pytest.raises(
        ValueError, match=r"output's shape .* \(3, 2\); got grad_output shape \(3, 4\)"
    ):
        attention_backward(Q, K, V, np.ones((3, 4)))


def test_grad_output_must_be_finite() -> None:
    G = np.ones((3, 2))
    G[0, 0] = np.nan
    with pytest.raises(ValueError, match="grad_output must be finite; got 1 NaN"):
        attention_backward(np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)), G)


def test_mismatched_query_and_key_widths_are_rejected() -> None:
    with pytest.raises(ValueError, match="K has d_k=3 but Q has d_k=4"):
        attention_backward(np.ones((3, 4)), np.ones((5, 3)), np.ones((5, 2)), np.ones((3, 2)))


def test_head_weights_must_fit_the_width_of_x() -> None:
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"W_K must be a \(d_model, d\) matrix with d_model = 4"):
        attention_head_backward(
            X, np.ones((4, 2)), np.ones((5, 2)), np.ones((4, 2)), np.ones((3, 2))
        )


def test_head_query_and_key_projections_must_have_the_same_shape() -> None:
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"W_Q shape \(4, 2\) and W_K shape \(4, 3\)"):
        attention_head_backward(
            X, np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2)), np.ones((3, 2))
        )


def test_softmax_backward_rejects_weights_that_are_not_probabilities() -> None:
    with pytest.raises(ValueError, match="each row of weights must sum to 1"):
        softmax_backward(np.array([0.5, 0.2]), np.zeros(2))


def test_softmax_backward_rejects_an_upstream_of_another_shape() -> None:
    with pytest.raises(ValueError, match=r"grad_weights shape \(3,\) and weights shape \(2,\)"):
        softmax_backward(np.array([0.5, 0.5]), np.zeros(3))


def test_a_scale_that_is_not_positive_is_rejected() -> None:
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        attention_backward(
            np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), scale=0.0
        )
