"""Boolean attention masks: True = this query may attend to this key."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_bytes, check_int


def causal_mask(T_q: int, T_k: int | None = None) -> np.ndarray:
    """Lower-triangular mask: query i may attend to keys 0..i and no key after it.

    Parameters
    ----------
    T_q : int
        Number of queries (>= 1).
    T_k : int, optional
        Number of keys (>= T_q); defaults to ``T_q``. When ``T_k > T_q`` the queries are the last
        ``T_q`` positions of the sequence (new tokens at the end of a KV cache), so the mask is
        aligned to the bottom right: the last query sees every key.

    Returns
    -------
    ndarray of bool, shape (T_q, T_k)
        ``mask[i, j]`` is True where ``j <= i + (T_k - T_q)``.

    Raises
    ------
    ValueError
        If ``T_k < T_q``, or the mask would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    T_q = check_int(T_q, "T_q")
    T_k = T_q if T_k is None else check_int(T_k, "T_k")
    if T_k < T_q:
        raise ValueError(
            f"T_k={T_k} is smaller than T_q={T_q}: the queries are the last T_q positions of the"
            f" keys' sequence, so there must be at least as many keys as queries"
        )
    # the (T_q, T_k) mask and the two int64 position vectors it is made from
    check_bytes(T_q * T_k + 8 * (T_q + T_k), f"causal_mask(T_q={T_q}, T_k={T_k})")
    offset = T_k - T_q
    return np.arange(T_k)[None, :] <= np.arange(T_q)[:, None] + offset


def padding_mask(lengths: ArrayLike, T: int) -> np.ndarray:
    """Key mask that hides the padding at the end of each sequence in a batch.

    Parameters
    ----------
    lengths : array_like of int, shape (B,)
        True length of each sequence, ``0 <= lengths[b] <= T``; at least one sequence.
    T : int
        Padded length of the batch (>= 1).

    Returns
    -------
    ndarray of bool, shape (B, 1, T)
        ``mask[b, 0, j]`` is True where ``j < lengths[b]``. The middle axis of length 1
        broadcasts over queries, so it masks scores of shape (B, T_q, T) as it is.

    Notes
    -----
    Per-head scores have one more axis, (B, H, T_q, T): give the mask a head axis too,
    ``padding_mask(lengths, T)[:, None]`` of shape (B, 1, 1, T). Passing the (B, 1, T) mask
    itself raises ValueError, because numpy aligns shapes from the right and would pair B with
    the head axis H: an error when B != H, and silently the wrong mask when B == H.
    :func:`attnlib.multi_head_attention` adds the head axis itself: give it the (B, 1, T) mask.
    """
    T = check_int(T, "T")
    arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise ValueError(f"lengths must be 1-D, one length per sequence; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(
            "lengths is empty: a batch needs at least one sequence, so give one length per"
            " sequence, e.g. lengths=[5, 3]"
        )
    if arr.dtype.kind not in "iu":
        raise TypeError(f"lengths must hold integers; got dtype {arr.dtype}: {arr!r}")
    if (arr < 0).any() or (arr > T).any():
        raise ValueError(f"lengths must lie in [0, T={T}]; got lengths={arr.tolist()}")
    check_bytes(arr.size * T + 8 * T, f"padding_mask of {arr.size} lengths and T={T}")
    return (np.arange(T)[None, :] < arr[:, None])[:, None, :]
