r"""The backward pass of scaled dot-product attention, written out by hand.

Forward, with :math:`c` the scale (:math:`1/\sqrt{d_k}` by default):

.. math::

    S = c\,Q K^\top, \qquad P = \mathrm{softmax}(S) \text{ (row by row)}, \qquad O = P V .

Given the gradient of a loss with respect to the output, :math:`dO = \partial L/\partial O`, the
chain rule runs the steps backwards:

.. math::

    dV = P^\top dO, \qquad dP = dO\,V^\top, \qquad
    dS_{ij} = P_{ij}\Big(dP_{ij} - \sum_l dP_{il} P_{il}\Big), \qquad
    dQ = c\,dS\,K, \qquad dK = c\,dS^\top Q .

The softmax step is the Jacobian :math:`p_i(\delta_{ij} - p_j)` (``attnlib.softmax_jacobian``)
applied to one row of :math:`dP` at a time, without building the :math:`T \times T` matrix. Through
the projections :math:`Q = XW_Q`, :math:`K = XW_K`, :math:`V = XW_V` it continues as
:math:`dW_Q = X^\top dQ`, :math:`dW_K = X^\top dK`, :math:`dW_V = X^\top dV`, and into the
tokens themselves as :math:`dX = dQ\,W_Q^\top + dK\,W_K^\top + dV\,W_V^\top`, which a stack of
layers passes down to the layer below.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_float_array,
    check_finite,
    check_probabilities,
    check_scale,
    finite_result,
    working_dtype,
)
from .attention import check_qkv, check_scores_size, scaled_scores
from .softmax import _softmax_inplace

__all__ = [
    "attention_backward",
    "attention_head_backward",
    "attention_head_input_backward",
    "softmax_backward",
]


def softmax_backward(weights: ArrayLike, grad_weights: ArrayLike) -> np.ndarray:
    r"""The gradient reaching the softmax's input, from the gradient at its output.

    Parameters
    ----------
    weights : array_like, shape (..., n)
        Softmax outputs :math:`p` along the last axis (rows sum to 1, or are all zero for a
        fully masked row).
    grad_weights : array_like, same shape as ``weights``
        :math:`\partial L/\partial p`.

    Returns
    -------
    ndarray, shape (..., n)
        :math:`\partial L/\partial s_j = p_j\big(g_j - \sum_l g_l p_l\big)`, which equals
        :math:`J^\top g` with the softmax Jacobian :math:`J_{ij} = p_i(\delta_{ij} - p_j)`. It
        goes to zero as :math:`p` goes one-hot, whatever :math:`g` is.
    """
    p = as_float_array(weights, "weights", min_ndim=1)
    g = as_float_array(grad_weights, "grad_weights", min_ndim=1)
    if g.shape != p.shape:
        raise ValueError(
            f"grad_weights must have the shape of weights; got grad_weights shape {g.shape}"
            f" and weights shape {p.shape}"
        )
    check_probabilities(p, "weights", allow_zero_rows=True)
    check_finite(g, "grad_weights")
    dtype = np.result_type(p, g)
    work = working_dtype(dtype)
    what = "the gradient weights * (grad_weights - sum(grad_weights * weights))"
    grad = finite_result(
        lambda: _softmax_backward(p.astype(work), g.astype(work)), what, {"grad_weights": g}
    )
    return grad.astype(dtype, copy=False)


def _softmax_backward(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


def attention_backward(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    grad_output: ArrayLike,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gradients of a loss with respect to Q, K and V, given its gradient at the output.

    The forward pass is ``scaled_dot_product_attention(Q, K, V, scale=scale)``:
    :math:`O = \mathrm{softmax}(c\,QK^\top)\,V`.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    V : array_like, shape (..., T_k, d_v)
    grad_output : array_like, shape (..., T_q, d_v)
        :math:`dO = \partial L/\partial O`; its shape must be the output's shape (leading
        dimensions of Q, K and V broadcast).
    scale : float, optional
        The scale :math:`c` of the forward pass; defaults to :math:`1/\sqrt{d_k}`. ``1.0`` is
        unscaled attention.

    Returns
    -------
    dQ : ndarray, shape (..., T_q, d_k)
    dK : ndarray, shape (..., T_k, d_k)
    dV : ndarray, shape (..., T_k, d_v)
        :math:`c\,dS\,K`, :math:`c\,dS^\top Q` and :math:`P^\top dO`, with
        :math:`dS` from :func:`softmax_backward`. Where the leading dimensions of an input were
        broadcast, its gradient is summed over them, so each has its input's shape.

    Raises
    ------
    ValueError
        For bad shapes or non-finite entries, for scores or gradients too large for the dtype
        (a ``grad_output`` of 1e300, say: the message names the arguments to rescale), and for
        (T_q, T_k) matrices beyond ``attnlib._validation.MAX_BYTES`` (4 GiB).

    Notes
    -----
    float16 is computed in float32 and the gradients rounded back to float16.
    """
    Q, K, V = check_qkv(Q, K, V)
    c = check_scale(scale, Q.shape[-1])
    check_scores_size(Q, K, Q.shape[-2], K.shape[-2])
    dO = _check_grad_output(grad_output, Q, K, V, "Q, K and V")
    names = {"Q": Q, "K": K, "V": V, "grad_output": dO}
    dQ, dK, dV = _attention_backward(Q, K, V, dO, c, names)
    return _sum_to(dQ, Q.shape), _sum_to(dK, K.shape), _sum_to(dV, V.shape)


def attention_head_backward(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    grad_output: ArrayLike,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gradients of a loss with respect to the three projections of one attention head.

    The forward pass is :math:`O = \mathrm{softmax}(c\,XW_Q (XW_K)^\top)\,XW_V`.

    Parameters
    ----------
    X : array_like, shape (..., T, d_model)
        The tokens (one row each); leading dimensions are a batch.
    W_Q, W_K : array_like, shape (d_model, d_k)
    W_V : array_like, shape (d_model, d_v)
    grad_output : array_like, shape (..., T, d_v)
        :math:`\partial L/\partial O`.
    scale : float, optional
        Defaults to :math:`1/\sqrt{d_k}`.

    Returns
    -------
    dW_Q : ndarray, shape (d_model, d_k)
    dW_K : ndarray, shape (d_model, d_k)
    dW_V : ndarray, shape (d_model, d_v)
        :math:`X^\top dQ`, :math:`X^\top dK`, :math:`X^\top dV`, summed over the batch.

    Raises
    ------
    ValueError
        As :func:`attention_backward`; an overflow names X, W_Q, W_K, W_V or grad_output.
    """
    X, weights, grads, dtype, names = _head_backward(X, W_Q, W_K, W_V, grad_output, scale)
    Xt = np.swapaxes(X, -1, -2)
    dW = finite_result(
        lambda: tuple(_batch_sum(Xt @ d) for d in grads), "X^T @ (the gradients)", names
    )
    return tuple(d.astype(dtype, copy=False) for d in dW)


def attention_head_input_backward(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    grad_output: ArrayLike,
    scale: float | None = None,
) -> np.ndarray:
    r"""The gradient of a loss with respect to the tokens X that enter one attention head.

    The forward pass is :math:`O = \mathrm{softmax}(c\,XW_Q (XW_K)^\top)\,XW_V`. ``X`` enters
    three times, through the queries, the keys and the values, so its gradient is the sum of
    three paths:

    .. math::

        dX = dQ\,W_Q^\top + dK\,W_K^\top + dV\,W_V^\top .

    This is what flows into the layer below when layers are stacked (its output is this X).

    Parameters
    ----------
    X : array_like, shape (..., T, d_model)
    W_Q, W_K : array_like, shape (d_model, d_k)
    W_V : array_like, shape (d_model, d_v)
    grad_output : array_like, shape (..., T, d_v)
        :math:`\partial L/\partial O`.
    scale : float, optional
        Defaults to :math:`1/\sqrt{d_k}`.

    Returns
    -------
    dX : ndarray, shape (..., T, d_model)
        One gradient per token of each batch item, the shape of ``X``.

    Raises
    ------
    ValueError
        As :func:`attention_head_backward`.
    """
    _, weights, grads, dtype, names = _head_backward(X, W_Q, W_K, W_V, grad_output, scale)
    dX = finite_result(
        lambda: sum(d @ W.T for d, W in zip(grads, weights)),
        "dQ W_Q^T + dK W_K^T + dV W_V^T",
        names,
    )
    return dX.astype(dtype, copy=False)


def _head_backward(X, W_Q, W_K, W_V, grad_output, scale):
    """Check the arguments of one head, run its forward pass and the backward pass to
    (dQ, dK, dV): returns X and (W_Q, W_K, W_V) in the working dtype, the gradients, the
    result dtype and the argument names for overflow messages."""
    X = as_float_array(X, "X", min_ndim=2)
    check_finite(X, "X")
    weights = []
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        W = as_float_array(W, name, min_ndim=2)
        if W.ndim != 2 or W.shape[0] != X.shape[-1] or W.shape[1] < 1:
            raise ValueError(
                f"{name} must be a (d_model, d) matrix with d_model = {X.shape[-1]} rows (the"
                f" width of X) and d >= 1; got {name} shape {W.shape} and X shape {X.shape}"
            )
        check_finite(W, name)
        weights.append(W)
    W_Q, W_K, W_V = weights
    if W_K.shape != W_Q.shape:
        raise ValueError(
            f"W_Q and W_K must have the same shape (d_model, d_k): queries and keys are compared"
            f" by dot product; got W_Q shape {W_Q.shape} and W_K shape {W_K.shape}"
        )
    c = check_scale(scale, W_Q.shape[1])
    dtype = np.result_type(X, W_Q, W_K, W_V)
    X, W_Q, W_K, W_V = (a.astype(working_dtype(dtype), copy=False) for a in (X, W_Q, W_K, W_V))
    Q, K, V = (
        finite_result(lambda W=W: X @ W, f"X @ {name}", {"X": X, name: W})
        for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V))
    )
    check_scores_size(Q, K, Q.shape[-2], K.shape[-2])
    dO = _check_grad_output(grad_output, Q, K, V, f"X shape {X.shape} and W_V shape {W_V.shape}")
    names = {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "grad_output": dO}
    grads = _attention_backward(Q, K, V, dO, c, names, ("X @ W_Q", "X @ W_K"))
    return X, (W_Q, W_K, W_V), grads, dtype, names


def _check_grad_output(
    grad_output: ArrayLike, Q: np.ndarray, K: np.ndarray, V: np.ndarray, source: str
) -> np.ndarray:
    """``grad_output`` as a finite array of the output's shape; ``source`` names the caller's
    arguments that shape comes from (for the message)."""
    dO = as_float_array(grad_output, "grad_output", min_ndim=2)
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    out_shape = (*batch, Q.shape[-2], V.shape[-1])
    if dO.shape != out_shape:
        raise ValueError(
            f"grad_output must have the output's shape (..., T_q, d_v) = {out_shape}; got"
            f" grad_output shape {dO.shape} (from {source})"
        )
    check_finite(dO, "grad_output")
    return dO


def _attention_backward(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    c: float,
    names: dict[str, np.ndarray],
    score_names: tuple[str, str] = ("Q", "K"),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The backward pass for validated inputs; gradients have the broadcast batch shape.

    float16 is computed in float32 and rounded back. ``names`` maps the caller's argument names
    to their arrays and ``score_names`` names the queries and keys, for the overflow messages.
    """
    dtype = np.result_type(Q, K, V, dO)
    work = working_dtype(dtype)
    Q, K, V, dO = (a.astype(work, copy=False) for a in (Q, K, V, dO))
    P = _softmax_inplace(scaled_scores(Q, K, c, score_names))

    def gradients() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dV = np.swapaxes(P, -1, -2) @ dO
        dS = _softmax_backward(P, dO @ np.swapaxes(V, -1, -2))
        return c * (dS @ K), c * (np.swapaxes(dS, -1, -2) @ Q), dV

    grads = finite_result(gradients, "the gradients dQ, dK, dV", names)
    return tuple(g.astype(dtype, copy=False) for g in grads)


def _sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the leading dimensions that broadcasting added to an input of ``shape``."""
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def _batch_sum(x: np.ndarray) -> np.ndarray:
    """Sum a (..., m, n) array over its leading (batch) dimensions: shape (m, n)."""
    return x.reshape(-1, *x.shape[-2:]).sum(axis=0)
