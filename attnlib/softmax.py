"""The softmax function and its Jacobian."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_bool_mask, as_float_array


def softmax(x: ArrayLike, axis: int = -1, mask: ArrayLike | None = None) -> np.ndarray:
    r"""Numerically stable softmax, :math:`e^{x_i - \max x} / \sum_j e^{x_j - \max x}`.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Scores. Floats keep their dtype (float32 stays float32); integers become float64.
        ``-inf`` is allowed and means "zero weight"; NaN and ``+inf`` raise ValueError.
    axis : int, default -1
        The axis that sums to one.
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
    nothing overflows, whatever the size of the scores. This shift changes no weight: softmax is
    invariant to adding a constant to every score.
    """
    x = as_float_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis!r} is out of range for x of shape {x.shape}")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError(
            f"x must not contain NaN or +inf (softmax is undefined there); got"
            f" {int(np.isnan(x).sum())} NaN and {int(np.isposinf(x).sum())} +inf entries"
            f" in x of shape {x.shape}. Use -inf or mask to give an entry zero weight."
        )
    keep = np.isfinite(x)
    if mask is not None:
        keep = keep & as_bool_mask(mask, x.shape, "mask")
    shifted = np.where(keep, x, -np.inf)
    row_max = np.max(shifted, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0)
    e = np.where(keep, np.exp(np.where(keep, x - row_max, 0)), 0).astype(x.dtype, copy=False)
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
        ``diag(p) - p p^T`` for every row; ``J[..., i, j]`` is ``d softmax_i / d x_j``.
    """
    p = as_float_array(p, "p", min_ndim=1)
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError(
            f"p must hold probabilities in [0, 1] (softmax outputs); got values from"
            f" {np.nanmin(p)} to {np.nanmax(p)} in p of shape {p.shape}"
        )
    sums = p.sum(axis=-1)
    tol = 1e-4 if p.dtype == np.float32 else 1e-8
    ok = np.isclose(sums, 1, atol=tol * p.shape[-1]) | (sums == 0)
    if not ok.all():
        raise ValueError(
            f"each row of p must sum to 1 (a softmax output) or be all zeros; got row sums"
            f" from {sums.min()} to {sums.max()} in p of shape {p.shape}"
        )
    return p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype) - p[..., :, None] * p[..., None, :]
