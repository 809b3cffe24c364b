"""Attention computed in tiles with an online (streaming) softmax, as FlashAttention does."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_int, check_scale
from .attention import check_qkv, scaled_scores


def tiled_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    block_size: int = 128,
    causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    r"""Scaled dot-product attention without ever building the full (T_q, T_k) score matrix.

    Queries are processed ``block_size`` rows at a time; for each query block the keys are
    streamed ``block_size`` at a time. A running row maximum ``m``, running normaliser ``l`` and
    running weighted sum ``acc`` are rescaled by :math:`e^{m_{old} - m_{new}}` whenever a new
    block raises the maximum, so the result equals the plain softmax exactly (up to rounding).

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    V : array_like, shape (..., T_k, d_v)
    block_size : int, default 128
        Rows per query block and per key block (>= 1). Scores exist only as
        ``block_size x block_size`` tiles (per batch element), one tile at a time, never as the
        full ``T_q x T_k`` matrix.
    causal : bool, default False
        Apply :func:`attnlib.causal_mask` (bottom-right aligned when ``T_k > T_q``); key blocks
        entirely in a query block's future are skipped, not computed.
    scale : float, optional
        Defaults to ``1/sqrt(d_k)``.

    Returns
    -------
    ndarray, shape (..., T_q, d_v)
        Equal to ``scaled_dot_product_attention(Q, K, V, mask, scale)[0]`` with
        ``mask = causal_mask(T_q, T_k) if causal else None`` (within 1e-12 in float64).

    Notes
    -----
    Inputs are checked as in :func:`attnlib.scaled_dot_product_attention`: NaN or infinity in
    Q, K or V raises ValueError; float32 stays float32; integers become float64.
    """
    Q, K, V = check_qkv(Q, K, V)
    block_size = check_int(block_size, "block_size")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False; got {causal!r}")
    s = check_scale(scale, Q.shape[-1])
    T_q, T_k = Q.shape[-2], K.shape[-2]
    if causal and T_k < T_q:
        raise ValueError(
            f"causal=True needs at least as many keys as queries; got T_q={T_q}, T_k={T_k}"
            f" (Q shape {Q.shape}, K shape {K.shape})"
        )
    offset = T_k - T_q
    dtype = np.result_type(Q, K, V)
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    out = np.empty((*batch, T_q, V.shape[-1]), dtype=dtype)
    for q0 in range(0, T_q, block_size):
        q_blk = Q[..., q0 : q0 + block_size, :]
        rows = np.arange(q0, q0 + q_blk.shape[-2])
        m = np.full((*batch, rows.size, 1), -np.inf, dtype=dtype)
        l = np.zeros((*batch, rows.size, 1), dtype=dtype)
        acc = np.zeros((*batch, rows.size, V.shape[-1]), dtype=dtype)
        k_end = min(T_k, rows[-1] + offset + 1) if causal else T_k
        for k0 in range(0, k_end, block_size):
            k_blk = K[..., k0 : k0 + block_size, :]
            tile = scaled_scores(q_blk, k_blk, s)
            if causal:
                cols = np.arange(k0, k0 + k_blk.shape[-2])
                tile = np.where(cols[None, :] <= rows[:, None] + offset, tile, -np.inf)
            # Key 0 is in every query's view, so after the first key block m_new is finite,
            # exp(m - m_new) is 0 for the initial m = -inf, and l >= 1 at the end.
            m_new = np.maximum(m, tile.max(axis=-1, keepdims=True))
            p = np.exp(tile - m_new)
            rescale = np.exp(m - m_new)
            l = rescale * l + p.sum(axis=-1, keepdims=True)
            acc = rescale * acc + p @ V[..., k0 : k0 + block_size, :]
            m = m_new
        out[..., q0 : q0 + rows.size, :] = acc / l
    return out
