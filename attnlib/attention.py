"""Scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    abs_max,
    as_bool_mask,
    as_float_array,
    batch_shape,
    check_allocation,
    check_finite,
    check_scale,
    finite_result,
    working_dtype,
)
from .softmax import _softmax_inplace


def check_qkv(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the three attention inputs and return them as floating arrays.

    Checks that each is a finite numeric array with at least 2 dimensions, that Q and K share
    d_k, that K and V have the same number of keys, and that the leading dimensions broadcast.
    """
    Q = as_float_array(Q, "Q", min_ndim=2)
    K = as_float_array(K, "K", min_ndim=2)
    V = as_float_array(V, "V", min_ndim=2)
    shapes = f"(Q shape {Q.shape}, K shape {K.shape}, V shape {V.shape})"
    if Q.shape[-1] < 1:
        raise ValueError(f"Q must have d_k >= 1 columns; got Q shape {Q.shape}")
    if K.shape[-1] != Q.shape[-1]:
        raise ValueError(
            f"K has d_k={K.shape[-1]} but Q has d_k={Q.shape[-1]}: queries and keys are compared"
            f" by dot product, so their last dimensions must match {shapes}"
        )
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"V has {V.shape[-2]} rows but K has {K.shape[-2]}: every key needs exactly one value"
            f" {shapes}"
        )
    if K.shape[-2] < 1:
        raise ValueError(f"K must hold at least one key; got K shape {K.shape}")
    batch_shape({"Q": Q.shape, "K": K.shape, "V": V.shape})
    for name, arr in (("Q", Q), ("K", K), ("V", V)):
        check_finite(arr, name)
    return Q, K, V


def check_scores_size(Q: np.ndarray, K: np.ndarray, T_q: int, T_k: int) -> None:
    """Raise ValueError if a (..., T_q, T_k) score matrix would exceed the allocation limit.

    ``T_q`` and ``T_k`` are the rows and columns computed at once (a tile's, in tiled
    attention); the leading dimensions are those of Q and K broadcast.
    """
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    check_allocation(
        (*batch, T_q, T_k),
        working_dtype(np.result_type(Q, K)),
        f"the scores (..., T_q, T_k) of Q shape {Q.shape} and K shape {K.shape}",
    )


def scaled_dot_product_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Attention(Q, K, V) = softmax(scale * Q K^T) V, with scale = 1/sqrt(d_k) by default.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
        Queries, one row per query token.
    K : array_like, shape (..., T_k, d_k)
        Keys, one row per key token.
    V : array_like, shape (..., T_k, d_v)
        Values, one row per key token.
    mask : array_like of bool, shape broadcastable to (..., T_q, T_k), optional
        True = this query may attend to this key (the convention of PyTorch's boolean
        ``attn_mask``). Masked scores are excluded before the softmax: their weights are exactly
        0. A query row with no key allowed gets zero weights and a zero output, never NaN.
        A mask with batch dimensions (more than two) must have as many dimensions as the
        scores: for per-head scores (B, H, T_q, T) give a padding mask (B, 1, T) a head axis,
        ``padding_mask(lengths, T)[:, None]`` of shape (B, 1, 1, T); otherwise ValueError.
    scale : float, optional
        Multiplies the scores (a finite number > 0); defaults to ``1/sqrt(d_k)``.
        ``scale=1.0`` is raw (unscaled) attention.

    Returns
    -------
    output : ndarray, shape (..., T_q, d_v)
        Each row is the weighted average of the rows of V.
    weights : ndarray, shape (..., T_q, T_k)
        The attention weights; each row sums to 1 (or is all zeros when fully masked).

    Notes
    -----
    Leading (batch) dimensions broadcast. float32 inputs give float32 results; integers are
    promoted to float64; float16 is computed in float32 (a float16 softmax over 70,000 keys
    would overflow its sum) and the results rounded to float16. Scores larger than
    ``attnlib._validation.MAX_BYTES`` (4 GiB; 23,170 tokens attending to 23,170 in float64)
    raise ValueError before anything is allocated. NaN or infinity in Q, K or V raises
    ValueError, and so do scores too large for the dtype; a score of any finite size (1e4,
    say) is fine.

    The arguments are checked once, in O(T d) time (the finiteness of Q, K, V and a bound on
    the largest score); the (T_q, T_k) scores are then scaled, exponentiated and normalised in
    place, so the function costs about as much as the bare numpy three-liner
    (``benchmarks/attention_speed.py`` measures it).
    """
    Q, K, V = check_qkv(Q, K, V)
    scale = check_scale(scale, Q.shape[-1])
    check_scores_size(Q, K, Q.shape[-2], K.shape[-2])
    if mask is not None:
        scores_shape = (*np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])
        mask = as_bool_mask(mask, scores_shape, "mask", target="the scores (..., T_q, T_k)")
    return _attention(Q, K, V, mask, scale)


def _attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None,
    scale: float,
    names: tuple[str, str] = ("Q", "K"),
) -> tuple[np.ndarray, np.ndarray]:
    """The kernel of :func:`scaled_dot_product_attention`, for already checked arguments.

    Q, K, V finite floating arrays of matching shapes, ``mask`` None or a boolean array that
    broadcasts to the scores, ``scale`` a float > 0. Every (T_q, T_k) step is done in place.
    float16 is computed in float32 and rounded back. ``names`` are the caller's names of the
    queries and keys, for the message of an overflow.
    """
    dtype = np.result_type(Q, K, V)
    work = working_dtype(dtype)
    if work != dtype:
        out, weights = _attention(*(a.astype(work) for a in (Q, K, V)), mask, scale, names)
        return out.astype(dtype), weights.astype(dtype)
    if dtype == np.float32 and scores_fit(Q, K, scale):
        # float32 scales s - max s, not s (see _softmax_inplace): when scale is not a power of
        # two (d_k = 8, 32, 128, ...), rounding scale * s moved the large scores by |s| * eps / 2
        # and the output up to 1.25x further from float64 (benchmarks/float32_accuracy.py)
        s = Q @ np.swapaxes(K, -1, -2)
        weights = _softmax_inplace(s, axis=-1, mask=mask, scale=scale)
    else:
        weights = _softmax_inplace(scaled_scores(Q, K, scale, names), axis=-1, mask=mask)
    return weights @ V, weights


def scores_fit(Q: np.ndarray, K: np.ndarray, scale: float) -> bool:
    """True when neither ``Q @ K^T`` nor ``scale * Q @ K^T`` (nor any partial sum of the product,
    nor a difference of two scores) can come within a factor 2 of the dtype's largest number.

    The cheap O(T d_k) bound of :func:`scaled_scores`: no entry of ``Q @ K^T`` exceeds
    ``d_k * max|Q| * max|K|``.
    """
    largest = float(np.finfo(np.result_type(Q, K)).max)
    bound = Q.shape[-1] * abs_max(Q) * abs_max(K)  # a Python float: inf, not an error
    return max(bound, bound * scale) < largest / 4 and scale < largest


def scaled_scores(
    Q: np.ndarray, K: np.ndarray, scale: float, names: tuple[str, str] = ("Q", "K")
) -> np.ndarray:
    """Return ``scale * Q @ K^T``, shape ``(..., T_q, T_k)``, for already validated Q and K.

    Raises ValueError (instead of a numpy overflow warning) when a score does not fit in the
    dtype, which finite Q and K can still cause (e.g. entries of 1e200, or 1e20 in float32).

    Notes
    -----
    No entry of ``Q @ K^T``, nor any partial sum inside the matrix product, can exceed
    ``bound = d_k * max|Q| * max|K|`` (each of the d_k products in a dot product is at most
    ``max|Q| * max|K|``), and no score can exceed ``bound * scale``. The bound costs O(T d_k);
    only when it comes near the dtype's largest number are the (T_q, T_k) scores themselves
    checked, by :func:`attnlib._validation.finite_result`, whose message names the caller's
    arguments ``names``.
    """
    dtype = np.result_type(Q, K)

    def scores() -> np.ndarray:
        s = Q @ np.swapaxes(K, -1, -2)
        s *= dtype.type(scale)
        return s

    if scores_fit(Q, K, scale):
        return scores()
    q, k = names
    detail = f", scale {scale:.3g}, {q} shape {Q.shape}, {k} shape {K.shape}"
    qf, kf = (f"({n})" if " " in n else n for n in names)
    return finite_result(scores, f"the scores scale * {qf} @ {kf}^T", {q: Q, k: K}, detail)
