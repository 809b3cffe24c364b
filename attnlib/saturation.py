r"""How saturated a softmax is: the entropy of its weights and the size of its gradient.

A softmax whose scores are spread wide puts nearly all its weight on one entry ("saturates"). Two
numbers measure it:

* the entropy :math:`H(p) = -\sum_j p_j \ln p_j`, from :math:`\ln n` (uniform) down to 0
  (one-hot);
* the Frobenius norm of the softmax Jacobian :math:`J_{ij} = p_i(\delta_{ij} - p_j)`, which scales
  every gradient that flows back through the softmax; it goes to 0 as ``p`` goes one-hot.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_axis, check_probabilities
from .softmax import softmax_jacobian

__all__ = ["entropy", "softmax_jacobian_norm"]


def entropy(p: ArrayLike, axis: int = -1) -> np.ndarray:
    r"""Shannon entropy in nats, :math:`H(p) = -\sum_j p_j \ln p_j`, with :math:`0 \ln 0 = 0`.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probabilities (softmax weights) that sum to 1 along ``axis``.
    axis : int, default -1
        The axis that sums to 1 (an integer; TypeError otherwise).

    Returns
    -------
    ndarray, shape ``p.shape`` without ``axis``
        Between 0 (one-hot) and :math:`\ln n` (uniform). A 0-d array for a single distribution.
    """
    p = as_float_array(p, "p", min_ndim=1)
    axis = check_axis(axis, p, "p")
    check_probabilities(p, "p", axis=axis)
    terms = np.zeros_like(p)
    np.multiply(p, np.log(p, where=p > 0, out=np.zeros_like(p)), out=terms, where=p > 0)
    # -0.0 for a one-hot row would print as "-0."; adding 0.0 turns it into +0.0.
    return -terms.sum(axis=axis) + 0.0


def softmax_jacobian_norm(p: ArrayLike) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian :math:`\mathrm{diag}(p) - p p^\top` at output ``p``.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Softmax outputs along the last axis.

    Returns
    -------
    ndarray, shape (...)
        :math:`\|J\|_F`: 0 for a one-hot ``p``, :math:`\sqrt{n-1}/n` for the uniform ``p``, at most
        1/2 (reached by two entries of 1/2). It bounds how much of an upstream gradient passes
        back through the softmax to the scores.
    """
    jac = softmax_jacobian(p)  # checks p
    return np.sqrt(np.sum(jac * jac, axis=(-2, -1)))
