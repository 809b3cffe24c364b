r"""A small retrieval task that one attention head learns by gradient descent (notebook 11).

There are ``n`` pairs. Query token :math:`i` (a row of :math:`X_q`) must find key token :math:`i`
(a row of :math:`X_k`) among all ``n`` keys, and fetch the value :math:`v_i` that key carries.
Only the projections :math:`W_Q` and :math:`W_K` are trained: they decide where each query looks.

.. math::

    S = c\,(X_q W_Q)(X_k W_K)^\top, \qquad P = \mathrm{softmax}(S), \qquad O = P V .

Two losses, both averaged over the ``n`` queries:

* ``"values"``: :math:`\tfrac12\|o_i - v_i\|^2`, a loss on what the head *outputs*, as every
  attention layer inside a transformer is trained (nothing tells it its weights directly);
* ``"cross_entropy"``: :math:`-\ln P_{ii}`, a loss on the attention weights themselves.

Accuracy is the share of queries whose largest weight is on their own key.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from ._validation import as_float_array, check_bytes, check_finite, check_int, check_scale
from .gradients import _softmax_backward

__all__ = ["LOSSES", "OPTIMIZERS", "RetrievalProblem", "retrieval_problem", "train_retrieval"]

#: The losses :func:`train_retrieval` knows.
LOSSES: tuple[str, ...] = ("values", "cross_entropy")
#: The optimisers :func:`train_retrieval` knows: plain gradient descent, and Adam.
OPTIMIZERS: tuple[str, ...] = ("sgd", "adam")
#: Adam's constants, PyTorch's defaults (``torch.optim.Adam``): the decay rates of the running
#: mean and the running mean square of the gradient, and the epsilon added to its root.
ADAM_BETAS: tuple[float, float] = (0.9, 0.999)
ADAM_EPS: float = 1e-8


class RetrievalProblem(NamedTuple):
    """The data and the starting projections of one retrieval task."""

    #: Query tokens, shape (n, d_model).
    X_q: np.ndarray
    #: Key tokens, shape (n, d_model); key i is the match of query i.
    X_k: np.ndarray
    #: Values, shape (n, d_v); value i belongs to key i.
    V: np.ndarray
    #: Starting query projection, shape (d_model, d_k).
    W_Q: np.ndarray
    #: Starting key projection, shape (d_model, d_k).
    W_K: np.ndarray


def retrieval_problem(
    d_k: int = 256, n_pairs: int = 16, d_model: int = 32, d_v: int = 16, seed: int = 9
) -> RetrievalProblem:
    r"""A seeded retrieval task, drawn in this order (as notebook 11 draws it by hand).

    ``rng = np.random.default_rng(seed)``; ``X_q``, ``X_k`` of shape (n_pairs, d_model) and ``V`` of
    shape (n_pairs, d_v), standard normal; then ``W_Q`` and ``W_K`` of shape (d_model, d_k),
    standard normal divided by :math:`\sqrt{d_\text{model}}`, so that the entries of
    :math:`q = x W_Q` and :math:`k = x W_K` have variance 1 (the assumption behind
    :math:`\mathrm{Var}(q \cdot k) = d_k`, notebook 02).

    Returns
    -------
    RetrievalProblem
        ``(X_q, X_k, V, W_Q, W_K)``.
    """
    d_k = check_int(d_k, "d_k")
    n_pairs = check_int(n_pairs, "n_pairs", minimum=2)
    d_model = check_int(d_model, "d_model")
    d_v = check_int(d_v, "d_v")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    check_bytes(
        8 * (n_pairs * (2 * d_model + d_v) + 2 * d_model * d_k),
        f"retrieval_problem(d_k={d_k}, n_pairs={n_pairs}, d_model={d_model}, d_v={d_v})",
    )
    X_q = rng.standard_normal((n_pairs, d_model))
    X_k = rng.standard_normal((n_pairs, d_model))
    V = rng.standard_normal((n_pairs, d_v))
    W_Q = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
    W_K = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
    return RetrievalProblem(X_q, X_k, V, W_Q, W_K)


def train_retrieval(
    problem: RetrievalProblem,
    *,
    scale: float | None = None,
    lr: float = 0.1,
    steps: int = 150,
    loss: str = "values",
    keep_weights: bool = False,
    optimizer: str = "sgd",
) -> dict[str, np.ndarray]:
    r"""Train ``W_Q`` and ``W_K`` by gradient descent or Adam; ``V`` and the tokens stay fixed.

    Parameters
    ----------
    problem : RetrievalProblem
        ``(X_q, X_k, V, W_Q, W_K)`` with shapes (..., n, d_model), (..., n, d_model),
        (..., n, d_v), (..., d_model, d_k), (..., d_model, d_k). Not modified. Leading
        dimensions, the same for all five, are a stack of independent tasks trained side by
        side (e.g. one per seed, ``np.stack`` of each field).
    scale : float, optional
        The scale :math:`c` of the scores; defaults to :math:`1/\sqrt{d_k}`. ``1.0`` is unscaled.
    lr : float, default 0.1
        Step size. Plain gradient descent does :math:`W \leftarrow W - \text{lr}\,g` with
        :math:`g = \partial L/\partial W`; Adam does :math:`W \leftarrow W - \text{lr}\,
        \hat m/(\sqrt{\hat v} + \epsilon)`, with :math:`\hat m` and :math:`\hat v` the
        bias-corrected running means of :math:`g` and :math:`g^2` (Kingma and Ba, 2015), entry by
        entry: a step of about ``lr`` whatever the size of the gradient, unless it is below
        :math:`\epsilon`.
    steps : int, default 150
        Number of updates.
    loss : {"values", "cross_entropy"}
        See the module docstring.
    keep_weights : bool, default False
        Also return the attention weights after every step.
    optimizer : {"sgd", "adam"}, default "sgd"
        Plain gradient descent, or Adam with PyTorch's defaults (:data:`ADAM_BETAS`,
        :data:`ADAM_EPS`).

    Returns
    -------
    dict
        ``loss`` and ``accuracy`` of shape (steps + 1, ...), and ``score_grad`` of shape
        (steps + 1, ..., n): for each query :math:`i` the norm :math:`\|\partial L/\partial
        s_i\|` of the gradient reaching its row of scores (the softmax's input). Entry ``t`` is
        measured after ``t`` updates; ``...`` are the leading dimensions of the problem.
        ``W_Q`` and ``W_K``: the trained projections. With ``keep_weights``, ``weights`` of
        shape (steps + 1, ..., n, n).

    Raises
    ------
    ValueError
        For inconsistent shapes, an unknown loss or optimiser, or when the scores overflow (the
        step size is far too large).
    """
    X_q, X_k, V, W_Q, W_K = _check_problem(problem)
    c = check_scale(scale, W_Q.shape[-1])
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 < lr < np.inf:
        raise ValueError(f"lr must be a finite number > 0; got lr={lr!r}")
    steps = check_int(steps, "steps", minimum=0)
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}; got loss={loss!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got optimizer={optimizer!r}")

    batch, n = X_q.shape[:-2], X_q.shape[-2]
    check_bytes(
        8 * (steps + 1) * int(np.prod(batch)) * (n + 2 + (n * n if keep_weights else 0)),
        f"the history of train_retrieval(steps={steps}, keep_weights={keep_weights}) for"
        f" {int(np.prod(batch))} task(s) of n={n}",
    )
    W_Q, W_K = W_Q.copy(), W_K.copy()
    history = {"loss": np.empty((steps + 1, *batch)), "accuracy": np.empty((steps + 1, *batch))}
    history["score_grad"] = np.empty((steps + 1, *batch, n))
    weights = np.empty((steps + 1, *batch, n, n)) if keep_weights else None
    diagonal = np.arange(n)
    step = _adam_step() if optimizer == "adam" else _sgd_step
    for t in range(steps + 1):
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
            Q, K = X_q @ W_Q, X_k @ W_K
            S = c * (Q @ K.mT)
        if not np.isfinite(S).all():
            raise ValueError(
                f"the scores overflowed after {t} steps (lr={lr}, scale={c:.4g}): the step size"
                " is far too large"
            )
        shifted = S - S.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        P = e / e.sum(axis=-1, keepdims=True)
        if loss == "values":
            error = P @ V - V  # o_i - v_i
            history["loss"][t] = 0.5 * np.sum(error * error, axis=(-2, -1)) / n
            dS = _softmax_backward(P, (error @ V.mT) / n)
        else:
            log_p = shifted[..., diagonal, diagonal] - np.log(e.sum(axis=-1))
            history["loss"][t] = -log_p.mean(axis=-1)
            dS = P.copy()
            dS[..., diagonal, diagonal] -= 1.0
            dS /= n
        history["accuracy"][t] = np.mean(P.argmax(axis=-1) == diagonal, axis=-1)
        history["score_grad"][t] = np.sqrt(np.sum(dS * dS, axis=-1))
        if weights is not None:
            weights[t] = P
        if t < steps:
            with np.errstate(over="ignore", invalid="ignore"):  # reported at the next step
                step(W_Q, W_K, X_q.mT @ (c * (dS @ K)), X_k.mT @ (c * (dS.mT @ Q)), lr)
    history["W_Q"], history["W_K"] = W_Q, W_K
    if weights is not None:
        history["weights"] = weights
    return history


def _sgd_step(W_Q: np.ndarray, W_K: np.ndarray, g_Q: np.ndarray, g_K: np.ndarray, lr: float):
    """Plain gradient descent, in place."""
    W_Q -= lr * g_Q
    W_K -= lr * g_K


def _adam_step():
    """An Adam update in place, with its running means kept between calls (one per training)."""
    (beta1, beta2), eps = ADAM_BETAS, ADAM_EPS
    moments: list[list[np.ndarray]] = []  # [m, v] for W_Q, then for W_K
    t = 0

    def step(W_Q: np.ndarray, W_K: np.ndarray, g_Q: np.ndarray, g_K: np.ndarray, lr: float):
        nonlocal t
        t += 1
        if not moments:
            moments.extend([np.zeros_like(g), np.zeros_like(g)] for g in (g_Q, g_K))
        for W, g, (m, v) in zip((W_Q, W_K), (g_Q, g_K), moments):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            # m_hat / (sqrt(v_hat) + eps), the bias corrections folded in as PyTorch does
            denominator = np.sqrt(v) / np.sqrt(1 - beta2**t) + eps
            W -= (lr / (1 - beta1**t)) * m / denominator

    return step


def _check_problem(problem: RetrievalProblem) -> tuple[np.ndarray, ...]:
    if not isinstance(problem, tuple) or len(problem) != 5:
        raise TypeError(
            "problem must be a RetrievalProblem (X_q, X_k, V, W_Q, W_K), e.g. from"
            f" retrieval_problem(); got {type(problem).__name__}"
        )
    arrays = [
        as_float_array(a, name, min_ndim=2) for a, name in zip(problem, RetrievalProblem._fields)
    ]
    X_q, X_k, V, W_Q, W_K = arrays
    batch, n, d_model = X_q.shape[:-2], X_q.shape[-2], X_q.shape[-1]
    expected = {
        "X_q": (*batch, n, d_model),
        "X_k": (*batch, n, d_model),
        "V": (*batch, n, V.shape[-1]),
        "W_Q": (*batch, d_model, W_Q.shape[-1]),
        "W_K": (*batch, d_model, W_Q.shape[-1]),
    }
    got = dict(zip(RetrievalProblem._fields, (a.shape for a in arrays)))
    if got != expected or min(d_model, V.shape[-1], W_Q.shape[-1]) < 1:
        described = ", ".join(f"{name} {shape}" for name, shape in got.items())
        raise ValueError(
            "problem shapes must be X_q (..., n, d_model), X_k (..., n, d_model), V (..., n, d_v),"
            f" W_Q (..., d_model, d_k), W_K (..., d_model, d_k), with the same leading"
            f" dimensions; got {described}"
        )
    for a, name in zip(arrays, RetrievalProblem._fields):
        check_finite(a, name)
    return tuple(arrays)
