"""The softmax function and its Jacobian."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_bool_mask, as_float_array, check_probabilities


def softmax(x: ArrayLike, axis: int = -1, mask: ArrayLike | None = None) -> np.ndarray:
    r"""Numerically stable softmax, :math:`e^{x_i - \max x} / \sum_j e^{x_j - \max x}`.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Scores. Floats keep their dtype (float32 stays float32); integers become float64.
        ``-inf`` is allowed and means "zero weight"; NaN and ``+inf`` raise ValueError.
    axis : int, default -1
        The axis that sums to one; it must have at least one entry.
    mask : array_like of bool, optional
        Broadcastable to ``x``; True = keep. Masked entries get weight exactly 0.

    Returns
    -------
    ndarray, same shape and dtype as ``x``
        Weights along ``axis`` that sum to 1. A slice with nothing kept (everything masked or
        ``-inf``) is all zeros, never NaN.

    Notes
    -----
    The row maximum is subtracted before exponentiating, so no exponent exceeds ``e**0 = 1`` and
    nothing overflows, whatever the size of the scores (1e4 or 1e300 alike). This shift changes
    no weight: softmax is invariant to adding a constant to every score.
    """
    x = as_float_array(x, "x", min_ndim=1)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer; got {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} is out of range for x of shape {x.shape}")
    if x.shape[axis] == 0:
        raise ValueError(
            f"x has no entries along axis={axis} (x shape {x.shape}): there is nothing to weigh"
        )
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError(
            f"x must not contain NaN or +inf (softmax is undefined there); got"
            f" {int(np.isnan(x).sum())} NaN and {int(np.isposinf(x).sum())} +inf entries"
            f" in x of shape {x.shape}. Use -inf or mask to give an entry zero weight."
        )
    keep = np.isfinite(x)
    if mask is not None:
        keep = keep & as_bool_mask(mask, x.shape, "mask", target="x")
    row_max = np.max(np.where(keep, x, -np.inf), axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0)  # a row with nothing kept: shift by 0
    # x - row_max <= 0 on kept entries; it can only overflow towards -inf (when x spans more
    # than the dtype's range), and exp(-inf) = 0 is then the right weight.
    with np.errstate(over="ignore"):
        e = np.exp(np.where(keep, x - row_max, -np.inf))
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def softmax_jacobian(p: ArrayLike) -> np.ndarray:
    r"""Jacobian of softmax at its output ``p``: :math:`J_{ij} = p_i(\delta_{ij} - p_j)`.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Softmax outputs over the last axis: entries in [0, 1] that sum to 1 (or an all-zero row,
        the output of a fully masked row, whose Jacobian is zero).

    Returns
    -------
    ndarray, shape (..., n, n)
        ``diag(p) - p p^T`` for every row; ``J[..., i, j]`` is ``d softmax_i / d x_j``. Same
        floating dtype as ``p`` (integers become float64).

    Raises
    ------
    ValueError
        If ``p`` holds NaN, infinity or values outside [0, 1], or a row sums neither to 1 nor
        to 0.
    """
    p = as_float_array(p, "p", min_ndim=1)
    check_probabilities(p, "p", allow_zero_rows=True)
    return p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype) - p[..., :, None] * p[..., None, :]
