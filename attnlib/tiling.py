r"""Attention computed in tiles with an online (streaming) softmax, as FlashAttention does.

For each query row the softmax needs the row's maximum :math:`m` and normaliser
:math:`l = \sum_j e^{s_j - m}` over *all* keys. The online softmax keeps both as running values
while the keys arrive one block at a time, together with the running weighted sum
:math:`\mathrm{acc} = \sum_j e^{s_j - m} v_j`. When a new block raises the maximum from
:math:`m_{old}` to :math:`m_{new}`, the old ``l`` and ``acc`` are multiplied by
:math:`e^{m_{old} - m_{new}}`, which turns every earlier :math:`e^{s_j - m_{old}}` into
:math:`e^{s_j - m_{new}}`. After the last block, ``acc / l`` is exactly the softmax-weighted sum.

:func:`tiled_attention_steps` yields the state after every tile (for notebooks and the tiling
lab); :func:`tiled_attention` runs the same kernel and keeps only the outputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_int, check_scale, working_dtype
from .attention import check_qkv, check_scores_size, scaled_scores

__all__ = ["TileStep", "tiled_attention", "tiled_attention_steps"]


@dataclass(frozen=True)
class TileStep:
    """The state of tiled attention right after one tile (query block x key block).

    Attributes
    ----------
    index : int
        Position of this tile in the schedule, from 0 (tiles skipped by the causal mask are not
        in the schedule).
    q_block, k_block : int
        Which query block and which key block (each ``block_size`` rows, the last may be shorter).
    rows : slice
        The query positions of the tile, ``q_block*block_size`` up to the block's end.
    cols : slice
        The key positions of the tile.
    scores : ndarray, shape (..., n_rows, n_cols)
        The tile's scaled scores; ``-inf`` where the causal mask forbids a pair.
    m : ndarray, shape (..., n_rows, 1)
        Running maximum of each query row's scores over the keys seen so far.
    l : ndarray, shape (..., n_rows, 1)
        Running normaliser, ``sum_j exp(s_j - m)`` over the keys seen so far.
    acc : ndarray, shape (..., n_rows, d_v)
        Running weighted sum, ``sum_j exp(s_j - m) v_j`` over the keys seen so far.
    rescale : ndarray, shape (..., n_rows, 1)
        ``exp(m_old - m)``, the factor this tile applied to the previous ``l`` and ``acc``
        (1 where the maximum did not grow, 0 at a query block's first tile).
    last : bool
        True for the query block's last key block: ``output`` is then final.
    """

    index: int
    q_block: int
    k_block: int
    rows: slice
    cols: slice
    scores: np.ndarray
    m: np.ndarray
    l: np.ndarray
    acc: np.ndarray
    rescale: np.ndarray
    last: bool

    @property
    def output(self) -> np.ndarray:
        """``acc / l``, shape (..., n_rows, d_v): the attention output over the keys seen so far.

        Equal to the full output of these query rows once ``last`` is True.
        """
        return self.acc / self.l


def _check_tiled_args(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    block_size: int,
    causal: bool,
    scale: float | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    """Validate the arguments of the tiled functions once, at the public door."""
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
    check_scores_size(Q, K, min(block_size, T_q), min(block_size, T_k))
    return Q, K, V, block_size, s


def _tile_steps(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, block_size: int, causal: bool, scale: float
) -> Iterator[TileStep]:
    """The kernel: one TileStep per computed tile, query block by query block (trusted inputs).

    The running state is kept in the working dtype: float32 for float16 inputs (as
    FlashAttention keeps it), since ``l`` sums up to T_k terms of at most 1.
    """
    T_q, T_k = Q.shape[-2], K.shape[-2]
    offset = T_k - T_q  # causal: query i sees keys j <= i + offset (bottom-right aligned)
    dtype = working_dtype(np.result_type(Q, K, V))
    Q, K, V = (a.astype(dtype, copy=False) for a in (Q, K, V))
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    index = 0
    for q_block, q0 in enumerate(range(0, T_q, block_size)):
        rows = np.arange(q0, min(q0 + block_size, T_q))
        q_blk = Q[..., rows[0] : rows[-1] + 1, :]
        m = np.full((*batch, rows.size, 1), -np.inf, dtype=dtype)
        l = np.zeros((*batch, rows.size, 1), dtype=dtype)
        acc = np.zeros((*batch, rows.size, V.shape[-1]), dtype=dtype)
        # Causal: key blocks entirely in the future of every row of this block are skipped.
        k_end = min(T_k, rows[-1] + offset + 1) if causal else T_k
        k_starts = range(0, k_end, block_size)
        for k_block, k0 in enumerate(k_starts):
            k1 = min(k0 + block_size, T_k)
            tile = scaled_scores(q_blk, K[..., k0:k1, :], scale)
            if causal:
                cols = np.arange(k0, k1)
                tile = np.where(cols[None, :] <= rows[:, None] + offset, tile, -np.inf)
            # Key 0 is in every query's view, so after the first key block m_new is finite,
            # exp(m - m_new) is 0 for the initial m = -inf, and l >= 1 at the end.
            m_new = np.maximum(m, tile.max(axis=-1, keepdims=True))
            p = np.exp(tile - m_new)
            rescale = np.exp(m - m_new)
            l = rescale * l + p.sum(axis=-1, keepdims=True)
            acc = rescale * acc + p @ V[..., k0:k1, :]
            m = m_new
            yield TileStep(
                index=index,
                q_block=q_block,
                k_block=k_block,
                rows=slice(int(rows[0]), int(rows[-1]) + 1),
                cols=slice(k0, k1),
                scores=tile,
                m=m,
                l=l,
                acc=acc,
                rescale=rescale,
                last=k_block == len(k_starts) - 1,
            )
            index += 1


def tiled_attention_steps(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    block_size: int = 128,
    causal: bool = False,
    scale: float | None = None,
) -> Iterator[TileStep]:
    r"""Run :func:`tiled_attention` one tile at a time, yielding the running state after each.

    The schedule is the one :func:`tiled_attention` follows: query block 0 against key blocks
    0, 1, ..., then query block 1, and so on. Each query block starts afresh with
    ``m = -inf``, ``l = 0``, ``acc = 0``.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    V : array_like, shape (..., T_k, d_v)
    block_size : int, default 128
        Rows per query block and per key block (>= 1).
    causal : bool, default False
        Apply :func:`attnlib.causal_mask` (bottom-right aligned when ``T_k > T_q``); key blocks
        entirely in a query block's future are skipped and yield no step.
    scale : float, optional
        Defaults to ``1/sqrt(d_k)``.

    Yields
    ------
    TileStep
        The tile's position, scores and the running ``m``, ``l``, ``acc`` of its query rows
        (in float32 for float16 inputs: ``l`` sums up to T_k terms, past float16's 65,504).
        The arrays are new for every step (a step is never changed afterwards), so the steps can
        be kept in a list.

    Raises
    ------
    ValueError, TypeError
        When the arguments are invalid: checked when this function is called, before the first
        step.

    Examples
    --------
    >>> import numpy as np
    >>> Q = K = V = np.eye(4)
    >>> steps = list(tiled_attention_steps(Q, K, V, block_size=2))
    >>> [(s.q_block, s.k_block, s.last) for s in steps]
    [(0, 0, False), (0, 1, True), (1, 0, False), (1, 1, True)]
    """
    Q, K, V, block_size, s = _check_tiled_args(Q, K, V, block_size, causal, scale)
    return _tile_steps(Q, K, V, block_size, causal, s)


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
    The tiles are those of :func:`tiled_attention_steps`.

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
    Q, K or V raises ValueError; float32 stays float32; integers become float64; float16 is
    computed in float32 and the output rounded to float16. A tile larger than
    ``attnlib._validation.MAX_BYTES`` (a huge ``block_size`` over long inputs) raises ValueError.
    """
    Q, K, V, block_size, s = _check_tiled_args(Q, K, V, block_size, causal, scale)
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    out = np.empty((*batch, Q.shape[-2], V.shape[-1]), dtype=np.result_type(Q, K, V))
    for step in _tile_steps(Q, K, V, block_size, causal, s):
        if step.last:
            out[..., step.rows, :] = step.output  # rounded to out's dtype (float16 stays so)
    return out
