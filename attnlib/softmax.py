"""The softmax function and its Jacobian."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_bool_mask,
    as_float_array,
    check_allocation,
    check_axis,
    check_probabilities,
    working_dtype,
)


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
        Broadcastable to ``x``; True = keep. Masked entries get weight exactly 0. A mask of more
        than two dimensions must have as many dimensions as ``x`` (no silent alignment of a
        batch axis with another axis).

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
    axis = check_axis(axis, x, "x")
    if x.shape[axis] == 0:
        raise ValueError(
            f"x has no entries along axis={axis} (x shape {x.shape}): there is nothing to weigh"
        )
    if not (x < np.inf).all():  # one pass: False exactly at NaN and +inf
        raise ValueError(
            f"x must not contain NaN or +inf (softmax is undefined there); got"
            f" {int(np.isnan(x).sum())} NaN and {int(np.isposinf(x).sum())} +inf entries"
            f" in x of shape {x.shape}. Use -inf or mask to give an entry zero weight."
        )
    if mask is not None:
        mask = as_bool_mask(mask, x.shape, "mask", target="x")
    return _softmax_inplace(x.copy(), axis=axis, mask=mask)


def _softmax_inplace(
    s: np.ndarray, axis: int = -1, mask: np.ndarray | None = None, scale: float = 1.0
) -> np.ndarray:
    """Softmax of ``scale * s`` along ``axis``, computed in ``s`` (overwritten) and returned.

    The private kernel behind :func:`softmax` and the attention functions, which check the
    arguments first: ``s`` is a floating array the caller owns, with no NaN or ``+inf``
    (``-inf`` means zero weight); ``mask`` is None or a boolean array that broadcasts to ``s``.
    float16 is computed in float32 (see :func:`attnlib._validation.working_dtype`).

    ``scale`` (> 0) multiplies ``s - max s``, not ``s``: the keys that carry the weight have
    scores near the maximum, whose difference from it is exact, so the rounding of
    ``scale * s`` (up to ``|s| * eps / 2`` when ``scale`` is not a power of two) is avoided
    where it matters. A caller passing ``scale`` makes sure that ``s - max s`` cannot overflow
    (every ``|s| < largest / 2``): an overflow to ``-inf`` there is a weight of exactly 0,
    right only when ``scale`` is not tiny.
    """
    if s.dtype != working_dtype(s.dtype):
        work = s.astype(working_dtype(s.dtype))
        s[...] = _softmax_inplace(work, axis=axis, mask=mask, scale=scale)
        return s
    if mask is not None:
        np.copyto(s, -np.inf, where=~mask)
    row_max = s.max(axis=axis, keepdims=True)
    row_max[~np.isfinite(row_max)] = 0  # a row with nothing kept (all -inf): shift by 0
    # s - row_max <= 0 on kept entries; it can only overflow towards -inf (when s spans more
    # than the dtype's range), and exp(-inf) = 0 is then the right weight.
    with np.errstate(over="ignore"):
        s -= row_max
        if scale != 1:
            s *= s.dtype.type(scale)
    np.exp(s, out=s)
    total = s.sum(axis=axis, keepdims=True)
    total[total == 0] = 1  # a row with nothing kept is all zeros, and 0 / 1 keeps it so
    s /= total
    return s


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
        to 0, or the Jacobian would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    p = as_float_array(p, "p", min_ndim=1)
    check_allocation(
        (*p.shape, p.shape[-1]), p.dtype, f"the Jacobian (..., n, n) of p shape {p.shape}"
    )
    check_probabilities(p, "p", allow_zero_rows=True)
    return p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype) - p[..., :, None] * p[..., None, :]
