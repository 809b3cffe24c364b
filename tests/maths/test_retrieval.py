"""The retrieval task of notebook 11: its data, its gradient steps, and what training does."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib import softmax
from attnlib.gradients import softmax_backward
from attnlib.retrieval import ADAM_EPS, RetrievalProblem, retrieval_problem, train_retrieval

SMALL = retrieval_problem(d_k=8, n_pairs=5, d_model=6, d_v=3, seed=1)


def loss_by_hand(problem: RetrievalProblem, W_Q, W_K, scale: float, loss: str) -> float:
    X_q, X_k, V = problem.X_q, problem.X_k, problem.V
    P = softmax(scale * (X_q @ W_Q) @ (X_k @ W_K).T)
    n = len(V)
    if loss == "values":
        return 0.5 * np.sum((P @ V - V) ** 2) / n
    return -np.mean(np.log(P[np.arange(n), np.arange(n)]))


def numerical_gradient(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_problem_is_drawn_in_the_documented_order() -> None:
    rng = np.random.default_rng(1)
    expected = (
        rng.standard_normal((5, 6)),
        rng.standard_normal((5, 6)),
        rng.standard_normal((5, 3)),
        rng.standard_normal((6, 8)) / np.sqrt(6),
        rng.standard_normal((6, 8)) / np.sqrt(6),
    )
    for got, want in zip(SMALL, expected):
        np.testing.assert_array_equal(got, want)


def test_projected_queries_and_keys_have_unit_variance_entries() -> None:
    problem = retrieval_problem(d_k=256, n_pairs=64, seed=0)
    for X, W in ((problem.X_q, problem.W_Q), (problem.X_k, problem.W_K)):
        assert np.var(X @ W) == pytest.approx(1.0, abs=0.15)


@pytest.mark.parametrize("loss", ["values", "cross_entropy"])
@pytest.mark.parametrize("scale", [None, 1.0])
def test_one_step_moves_each_projection_down_its_finite_difference_gradient(loss, scale) -> None:
    c = 1 / np.sqrt(8) if scale is None else scale
    lr = 0.05
    history = train_retrieval(SMALL, scale=scale, lr=lr, steps=1, loss=loss)
    grad_Q = numerical_gradient(lambda w: loss_by_hand(SMALL, w, SMALL.W_K, c, loss), SMALL.W_Q)
    grad_K = numerical_gradient(lambda w: loss_by_hand(SMALL, SMALL.W_Q, w, c, loss), SMALL.W_K)
    np.testing.assert_allclose(history["W_Q"], SMALL.W_Q - lr * grad_Q, atol=1e-9)
    np.testing.assert_allclose(history["W_K"], SMALL.W_K - lr * grad_K, atol=1e-9)


@pytest.mark.parametrize("loss", ["values", "cross_entropy"])
def test_recorded_loss_is_the_loss_of_the_weights_at_that_step(loss) -> None:
    history = train_retrieval(SMALL, lr=0.05, steps=1, loss=loss)
    c = 1 / np.sqrt(8)
    assert history["loss"][0] == pytest.approx(loss_by_hand(SMALL, SMALL.W_Q, SMALL.W_K, c, loss))
    assert history["loss"][1] == pytest.approx(
        loss_by_hand(SMALL, history["W_Q"], history["W_K"], c, loss)
    )


def test_score_gradient_is_recorded_per_query_and_matches_the_backward_pass() -> None:
    history = train_retrieval(SMALL, lr=0.5, steps=2)
    assert history["score_grad"].shape == (3, 5)
    c = 1 / np.sqrt(8)
    P = softmax(c * (SMALL.X_q @ SMALL.W_Q) @ (SMALL.X_k @ SMALL.W_K).T)
    dS = softmax_backward(P, (P @ SMALL.V - SMALL.V) @ SMALL.V.T / 5)
    np.testing.assert_allclose(history["score_grad"][0], np.linalg.norm(dS, axis=1))


def test_kept_weights_are_the_attention_weights_and_give_the_accuracy() -> None:
    history = train_retrieval(SMALL, lr=0.5, steps=4, keep_weights=True)
    weights = history["weights"]
    assert weights.shape == (5, 5, 5)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    start = softmax((SMALL.X_q @ SMALL.W_Q) @ (SMALL.X_k @ SMALL.W_K).T / np.sqrt(8))
    np.testing.assert_allclose(weights[0], start)
    accuracy = (weights.argmax(axis=-1) == np.arange(5)).mean(axis=-1)
    np.testing.assert_array_equal(history["accuracy"], accuracy)


def test_the_problem_is_not_modified_by_training() -> None:
    before = [a.copy() for a in SMALL]
    train_retrieval(SMALL, lr=0.5, steps=3)
    for a, b in zip(SMALL, before):
        np.testing.assert_array_equal(a, b)


# --- what the notebook shows ------------------------------------------------------------------


@pytest.fixture(scope="module")
def d256() -> RetrievalProblem:
    return retrieval_problem(d_k=256)


def test_at_d_k_256_the_scaled_head_learns_to_retrieve_every_value(d256) -> None:
    history = train_retrieval(d256, lr=0.1, steps=150)
    assert history["accuracy"][0] < 0.2
    assert history["accuracy"][-1] == 1.0
    assert history["loss"][-1] < 0.05 * history["loss"][0]


def test_at_d_k_256_the_unscaled_head_stalls_and_its_score_gradient_vanishes(d256) -> None:
    history = train_retrieval(d256, scale=1.0, lr=0.1, steps=150)
    assert history["accuracy"].max() <= 0.25
    assert history["loss"][-1] > 0.5 * history["loss"][0]
    typical = np.median(history["score_grad"], axis=1)  # the median query, step by step
    assert typical[-1] < 1e-6 * typical[0]


def test_cross_entropy_on_the_weights_lets_the_unscaled_head_learn(d256) -> None:
    """-log p_ii has gradient p - onehot at the scores: no softmax Jacobian to vanish."""
    history = train_retrieval(d256, scale=1.0, lr=0.03, steps=40, loss="cross_entropy")
    assert history["accuracy"][-1] == 1.0


def test_unscaled_with_smaller_weights_and_step_is_the_scaled_run() -> None:
    """Dividing W_Q, W_K by d_k**(1/4) and the step by sqrt(d_k) undoes dropping the scale."""
    d_k = 16
    problem = retrieval_problem(d_k=d_k, n_pairs=8, seed=3)
    shrunk = problem._replace(W_Q=problem.W_Q / d_k**0.25, W_K=problem.W_K / d_k**0.25)
    scaled = train_retrieval(problem, lr=0.2, steps=20)
    unscaled = train_retrieval(shrunk, scale=1.0, lr=0.2 / np.sqrt(d_k), steps=20)
    np.testing.assert_allclose(unscaled["loss"], scaled["loss"], rtol=1e-9)
    np.testing.assert_allclose(unscaled["W_Q"] * d_k**0.25, scaled["W_Q"], rtol=1e-9)


# --- Adam, and stacks of tasks ----------------------------------------------------------------


def test_adams_first_step_moves_every_weight_by_the_step_size_against_its_gradient() -> None:
    # m_hat = g and v_hat = g^2 after one step, so the update is lr * g / (|g| + eps)
    g_Q = SMALL.W_Q - train_retrieval(SMALL, lr=1.0, steps=1)["W_Q"]  # one SGD step of size 1
    adam = train_retrieval(SMALL, lr=0.01, steps=1, optimizer="adam")
    np.testing.assert_allclose(
        adam["W_Q"], SMALL.W_Q - 0.01 * g_Q / (np.abs(g_Q) + ADAM_EPS), rtol=0, atol=1e-12
    )


def test_under_adam_the_matching_step_is_divided_by_the_fourth_root_of_d_k() -> None:
    """Adam divides the gradient by its own size, so the weights / d_k**(1/4) that undo the
    missing scale need the step / d_k**(1/4), not / sqrt(d_k) as plain gradient descent does
    (to within the effect of Adam's epsilon, 1e-8, which does not scale with the gradient)."""
    d_k = 16
    problem = retrieval_problem(d_k=d_k, n_pairs=8, seed=3)
    shrunk = problem._replace(W_Q=problem.W_Q / d_k**0.25, W_K=problem.W_K / d_k**0.25)
    scaled = train_retrieval(problem, lr=0.01, steps=40, optimizer="adam")
    fourth_root = train_retrieval(
        shrunk, scale=1.0, lr=0.01 / d_k**0.25, steps=40, optimizer="adam"
    )
    square_root = train_retrieval(shrunk, scale=1.0, lr=0.01 / d_k**0.5, steps=40, optimizer="adam")
    np.testing.assert_allclose(fourth_root["loss"], scaled["loss"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fourth_root["W_Q"] * d_k**0.25, scaled["W_Q"], rtol=0, atol=1e-4)
    assert np.abs(square_root["W_Q"] * d_k**0.25 - scaled["W_Q"]).max() > 0.01


def test_under_adam_the_unscaled_head_at_d_k_256_still_stalls(d256) -> None:
    scaled = train_retrieval(d256, lr=0.01, steps=150, optimizer="adam")
    unscaled = train_retrieval(d256, scale=1.0, lr=0.01, steps=150, optimizer="adam")
    assert scaled["accuracy"][-1] == 1.0
    assert unscaled["accuracy"].max() <= 0.25


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("loss", ["values", "cross_entropy"])
def test_a_stack_of_tasks_trains_each_as_it_would_alone(optimizer, loss) -> None:
    problems = [retrieval_problem(d_k=8, n_pairs=5, d_model=6, d_v=3, seed=s) for s in (1, 2, 3)]
    stacked = RetrievalProblem(*(np.stack(field) for field in zip(*problems)))
    together = train_retrieval(stacked, lr=0.05, steps=10, loss=loss, optimizer=optimizer)
    assert together["loss"].shape == (11, 3) and together["score_grad"].shape == (11, 3, 5)
    for k, problem in enumerate(problems):
        alone = train_retrieval(problem, lr=0.05, steps=10, loss=loss, optimizer=optimizer)
        np.testing.assert_allclose(together["loss"][:, k], alone["loss"], rtol=1e-12)
        np.testing.assert_allclose(together["W_Q"][k], alone["W_Q"], rtol=0, atol=1e-12)


def test_unknown_optimizer_is_rejected_listing_the_choices() -> None:
    with pytest.raises(ValueError, match=r"optimizer must be one of \('sgd', 'adam'\)"):
        train_retrieval(SMALL, optimizer="rmsprop")


def test_a_stack_whose_fields_disagree_on_the_leading_dimensions_is_rejected() -> None:
    bad = SMALL._replace(X_q=np.stack([SMALL.X_q, SMALL.X_q]))
    with pytest.raises(ValueError, match=r"with the same leading dimensions; got X_q \(2, 5, 6\)"):
        train_retrieval(bad)


# --- bad input --------------------------------------------------------------------------------


def test_unknown_loss_is_rejected_listing_the_choices() -> None:
    with pytest.raises(ValueError, match=r"loss must be one of \('values', 'cross_entropy'\)"):
        train_retrieval(SMALL, loss="hinge")


@pytest.mark.parametrize("lr", [0.0, -1.0, np.inf])
def test_step_size_must_be_positive_and_finite(lr) -> None:
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        train_retrieval(SMALL, lr=lr)


def test_mismatched_shapes_are_rejected_naming_them() -> None:
    bad = SMALL._replace(W_K=np.ones((6, 4)))
    with pytest.raises(ValueError, match=r"W_Q \(6, 8\), W_K \(6, 4\)"):
        train_retrieval(bad)


def test_a_problem_that_is_not_a_tuple_of_five_is_rejected() -> None:
    with pytest.raises(TypeError, match="problem must be a RetrievalProblem"):
        train_retrieval({"X_q": SMALL.X_q})


def test_a_step_size_so_large_that_the_scores_overflow_raises_instead_of_warning() -> None:
    with pytest.raises(ValueError, match="the scores overflowed after 1 steps"):
        train_retrieval(SMALL, lr=1e300, steps=3)


def test_problem_sizes_are_checked() -> None:
    with pytest.raises(ValueError, match="n_pairs must be >= 2; got n_pairs=1"):
        retrieval_problem(n_pairs=1)
