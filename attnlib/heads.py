"""Multi-head attention: split the model width into heads, attend in each, merge, project."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_bool_mask,
    as_float_array,
    check_allocation,
    check_finite,
    check_int,
    check_scale,
    finite_result,
    working_dtype,
)
from .attention import _attention


def split_heads(x: ArrayLike, n_heads: int) -> np.ndarray:
    """Split the last axis into heads: ``(..., T, n_heads*d_head) -> (..., n_heads, T, d_head)``.

    Head ``i`` owns columns ``[i*d_head, (i+1)*d_head)`` of ``x``.

    Parameters
    ----------
    x : array_like, shape (..., T, n_heads * d_head)
    n_heads : int
        Must divide the last dimension of ``x``.

    Returns
    -------
    ndarray, shape (..., n_heads, T, d_head)
        A new array: writing to it never changes ``x``.
    """
    x = as_float_array(x, "x", min_ndim=2)
    n_heads = check_int(n_heads, "n_heads")
    width = x.shape[-1]
    if width % n_heads:
        raise ValueError(
            f"n_heads={n_heads} does not divide the last dimension of x ({width}; x shape"
            f" {x.shape}): every head needs the same width d_head = {width}/{n_heads}"
        )
    return _fresh(_split_heads(x, n_heads), x)


def _split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """The kernel of :func:`split_heads`: a view of ``x`` where numpy can make one."""
    d_head = x.shape[-1] // n_heads
    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_head), -3, -2)


def _fresh(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``result``, copied if it may share memory with ``source`` (so writes never leak back)."""
    return result.copy() if np.may_share_memory(result, source) else result


def merge_heads(x: ArrayLike) -> np.ndarray:
    """Concatenate heads, the inverse of :func:`split_heads`.

    Parameters
    ----------
    x : array_like, shape (..., n_heads, T, d_head)

    Returns
    -------
    ndarray, shape (..., T, n_heads * d_head)
        A new array: writing to it never changes ``x``.
    """
    x = as_float_array(x, "x", min_ndim=3)
    return _fresh(_merge_heads(x), x)


def _merge_heads(x: np.ndarray) -> np.ndarray:
    """The kernel of :func:`merge_heads`: a view of ``x`` where numpy can make one."""
    n_heads, T, d_head = x.shape[-3:]
    return np.swapaxes(x, -3, -2).reshape(*x.shape[:-3], T, n_heads * d_head)


def _check_weight(W: ArrayLike, name: str, rows: int, X_shape: tuple[int, ...]) -> np.ndarray:
    W = as_float_array(W, name)
    check_finite(W, name)
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix; got shape {W.shape}")
    if W.shape[0] != rows:
        raise ValueError(
            f"{name} has {W.shape[0]} rows but must have {rows} ({name} shape {W.shape},"
            f" X shape {X_shape})"
        )
    return W


def multi_head_attention(
    X: ArrayLike,
    W_q: ArrayLike,
    W_k: ArrayLike,
    W_v: ArrayLike,
    W_o: ArrayLike,
    n_heads: int,
    n_kv_heads: int | None = None,
    mask: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention, with multi-query and grouped-query variants.

    Parameters
    ----------
    X : array_like, shape (..., T, d_model)
        Input token vectors.
    W_q : array_like, shape (d_model, n_heads * d_head)
        Query projection; head ``i`` uses columns ``[i*d_head, (i+1)*d_head)``.
    W_k : array_like, shape (d_model, n_kv_heads * d_head)
        Key projection.
    W_v : array_like, shape (d_model, n_kv_heads * d_v)
        Value projection.
    W_o : array_like, shape (n_heads * d_v, d_out)
        Output projection applied to the concatenated heads (usually ``d_out = d_model``).
    n_heads : int
        Number of query heads.
    n_kv_heads : int, optional
        Number of key/value heads. None (default) means ``n_heads`` (standard multi-head
        attention); 1 is multi-query attention; otherwise grouped-query attention, where query
        head ``i`` reads KV head ``i // (n_heads // n_kv_heads)``. Must divide ``n_heads``.
    mask : array_like of bool, shape broadcastable to (..., T, T), optional
        True = may attend; shared by every head, so it has no head axis: ``...`` are the batch
        dimensions of ``X``, and ``padding_mask(lengths, T)`` of shape (B, 1, T) fits ``X`` of
        shape (B, T, d_model) as it is. A fully masked query row gets a zero head output (so its
        final output is zero too).

    Returns
    -------
    output : ndarray, shape (..., T, d_out)
    weights : ndarray, shape (..., n_heads, T, T)
        Each head's attention weights.

    Notes
    -----
    Each head uses the scale ``1/sqrt(d_head)``. NaN or infinity in X or in a weight matrix
    raises ValueError, and so does a projection or a score too large for the dtype (the message
    names X and the weight matrices), and weights beyond ``attnlib._validation.MAX_BYTES``
    (4 GiB). float16 is computed in float32 and the results rounded to float16. The arguments (the
    mask too) are checked once, here; the heads are then computed by the same kernel as
    :func:`attnlib.scaled_dot_product_attention`, without checking them again.
    """
    X = as_float_array(X, "X", min_ndim=2)
    check_finite(X, "X")
    T, d_model = X.shape[-2:]
    if T < 1:
        raise ValueError(f"X must hold at least one token (one row); got X shape {X.shape}")
    n_heads = check_int(n_heads, "n_heads")
    n_kv_heads = n_heads if n_kv_heads is None else check_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_heads={n_heads} is not a multiple of n_kv_heads={n_kv_heads}: each KV head must"
            f" serve the same number of query heads"
        )
    W_q = _check_weight(W_q, "W_q", d_model, X.shape)
    W_k = _check_weight(W_k, "W_k", d_model, X.shape)
    W_v = _check_weight(W_v, "W_v", d_model, X.shape)
    if W_q.shape[1] % n_heads or W_q.shape[1] == 0:
        raise ValueError(
            f"n_heads={n_heads} does not divide the query width {W_q.shape[1]} (W_q shape"
            f" {W_q.shape}, d_model={d_model}) into heads of one width d_head >= 1"
        )
    d_head = W_q.shape[1] // n_heads
    if W_k.shape[1] != n_kv_heads * d_head:
        raise ValueError(
            f"W_k must have n_kv_heads * d_head = {n_kv_heads} * {d_head} = {n_kv_heads * d_head}"
            f" columns; got W_k shape {W_k.shape} (W_q shape {W_q.shape}, n_heads={n_heads})"
        )
    if W_v.shape[1] % n_kv_heads:
        raise ValueError(
            f"n_kv_heads={n_kv_heads} does not divide the value width {W_v.shape[1]}"
            f" (W_v shape {W_v.shape})"
        )
    d_v = W_v.shape[1] // n_kv_heads
    W_o = as_float_array(W_o, "W_o")
    check_finite(W_o, "W_o")
    if W_o.ndim != 2 or W_o.shape[0] != n_heads * d_v:
        raise ValueError(
            f"W_o must have n_heads * d_v = {n_heads} * {d_v} = {n_heads * d_v} rows (one per"
            f" column of the concatenated heads); got W_o shape {W_o.shape}"
        )
    if mask is not None:
        mask = as_bool_mask(mask, (*X.shape[:-2], T, T), "mask", target="the scores (..., T, T)")
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]  # the same mask for every head
    dtype = np.result_type(X, W_q, W_k, W_v, W_o)
    check_allocation(
        (*X.shape[:-2], n_heads, T, T),
        working_dtype(dtype),
        f"the weights (..., n_heads, T, T) of X shape {X.shape} and n_heads={n_heads}",
    )
    # Checked once above; from here on the private kernels trust their inputs.
    X, W_q, W_k, W_v, W_o = (
        a.astype(working_dtype(dtype), copy=False) for a in (X, W_q, W_k, W_v, W_o)
    )
    group = n_heads // n_kv_heads
    Q = _split_heads(_project(X, "X", W_q, "W_q"), n_heads)  # (..., n_heads, T, d_head)
    K = np.repeat(_split_heads(_project(X, "X", W_k, "W_k"), n_kv_heads), group, axis=-3)
    V = np.repeat(_split_heads(_project(X, "X", W_v, "W_v"), n_kv_heads), group, axis=-3)
    heads, weights = _attention(Q, K, V, mask, check_scale(None, d_head), ("X @ W_q", "X @ W_k"))
    output = _project(_merge_heads(heads), "the merged heads", W_o, "W_o")
    return output.astype(dtype, copy=False), weights.astype(dtype, copy=False)


def _project(X: np.ndarray, x_name: str, W: np.ndarray, w_name: str) -> np.ndarray:
    """``X @ W`` for finite X and W, raising ValueError if the product overflows the dtype."""
    return finite_result(lambda: X @ W, f"{x_name} @ {w_name}", {x_name: X, w_name: W})


def _check_heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    n_heads = check_int(n_heads, "n_heads")
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}: each KV head must serve"
            f" the same number of query heads"
        )
    return n_heads, n_kv_heads


def kv_head_index(n_heads: int, n_kv_heads: int) -> np.ndarray:
    """The KV head each query head reads: ``i // (n_heads // n_kv_heads)``.

    Parameters
    ----------
    n_heads : int
        Number of query heads (>= 1).
    n_kv_heads : int
        Number of key/value heads; must divide ``n_heads``.

    Returns
    -------
    ndarray of int, shape (n_heads,)
        Entry ``i`` is the KV head of query head ``i``; non-decreasing, every KV head appears
        ``n_heads // n_kv_heads`` times.
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    check_allocation((n_heads,), np.intp, f"the KV head of each of n_heads={n_heads} query heads")
    return np.arange(n_heads) // (n_heads // n_kv_heads)


def attention_kind(n_heads: int, n_kv_heads: int) -> str:
    """``"MHA"`` (n_kv_heads == n_heads), ``"MQA"`` (n_kv_heads == 1) or ``"GQA"`` (between).

    A single head (``n_heads == n_kv_heads == 1``) counts as MHA.
    """
    n_heads, n_kv_heads = _check_heads(n_heads, n_kv_heads)
    if n_kv_heads == n_heads:
        return "MHA"
    return "MQA" if n_kv_heads == 1 else "GQA"
