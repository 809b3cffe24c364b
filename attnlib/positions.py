"""Positions in attention: sinusoidal encodings, rotary embeddings (RoPE) and ALiBi biases.

Attention without positions is permutation-equivariant: shuffle the tokens and the outputs
shuffle with them. Three ways real models put word order back:

* :func:`sinusoidal` (Vaswani et al. 2017, section 3.5): a fixed table added to the token
  embeddings; ``PE(p + k)`` is a rotation of ``PE(p)`` per frequency pair, so ``PE(i) . PE(j)``
  depends on ``i - j`` only.
* :func:`rope` (Su et al. 2021, RoFormer): rotate each pair of coordinates of the queries and the
  keys by an angle proportional to the position; then ``rope(q)_i . rope(k)_j`` depends on the
  contents and on ``i - j`` only. Two pairings are in use, ``"interleaved"`` (the paper's
  ``(2m, 2m + 1)``) and ``"halves"`` (``(m, m + d/2)``, GPT-NeoX-style code).
* :func:`alibi_bias` (Press et al. 2022, ALiBi): no change to q or k; a bias ``-m_h |i - j|``
  added to the scores of head ``h``, with the slopes of :func:`alibi_slopes`.

Position interpolation (Chen et al. 2023) runs RoPE at fractional positions ``p * L / L'`` to
stretch a model trained on length ``L`` to ``L'``: :func:`rope` accepts real positions for that.

:func:`relative_scores` is the picture behind the chapter and its lab: the score of one fixed
(q, k) pair placed at every relative offset ``i - j``, under each scheme.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import (
    as_float_array,
    check_allocation,
    check_bytes,
    check_finite,
    check_int,
    check_positive_real,
)

__all__ = [
    "PAIRINGS",
    "SCHEMES",
    "alibi_bias",
    "alibi_slopes",
    "positioned_scores",
    "relative_scores",
    "rope",
    "rope_frequencies",
    "sinusoidal",
]

#: The two ways of pairing the coordinates that :func:`rope` rotates together.
PAIRINGS: tuple[str, ...] = ("interleaved", "halves")

#: The position schemes :func:`relative_scores` (and the positions lab) compare.
SCHEMES: tuple[str, ...] = ("none", "sinusoidal", "RoPE", "ALiBi")


def _check_even_width(d: object, name: str) -> int:
    d = check_int(d, name, minimum=2)
    if d % 2:
        raise ValueError(
            f"{name} must be even: the coordinates are rotated in pairs (one angle per pair);"
            f" got {name}={d}"
        )
    return d


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """The angle per position of each coordinate pair: ``theta_m = base ** (-2m / d)``.

    Parameters
    ----------
    d : int
        The width of the vectors (even, >= 2).
    base : float, default 10000.0
        The longest wavelength is about ``2 pi base``.

    Returns
    -------
    ndarray, shape (d // 2,)
        ``theta_0 = 1`` (radians per position) down to ``base ** (-(d - 2) / d)``. The same
        frequencies as :func:`sinusoidal`.

    Raises
    ------
    ValueError
        If ``d`` is odd or < 2, ``base`` is not > 0, or the frequencies would exceed
        ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    d = _check_even_width(d, "d")
    base = check_positive_real(base, "base")
    check_allocation((d // 2,), np.float64, f"the frequencies (d // 2,) of rope_frequencies(d={d})")
    return base ** (-np.arange(0, d, 2) / d)


def sinusoidal(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position table of Vaswani et al. (2017, section 3.5).

    ``PE[p, 2m] = sin(p theta_m)`` and ``PE[p, 2m + 1] = cos(p theta_m)`` with
    ``theta_m = base ** (-2m / d)`` (:func:`rope_frequencies`).

    Parameters
    ----------
    T : int
        Number of positions, 0 to T - 1 (>= 1).
    d : int
        Width of the model (even, >= 2).
    base : float, default 10000.0

    Returns
    -------
    ndarray, shape (T, d)
        Each row has norm ``sqrt(d / 2)`` (one sin^2 + cos^2 = 1 per pair), and
        ``PE[i] . PE[j] = sum_m cos((i - j) theta_m)`` depends on ``i - j`` only.

    Raises
    ------
    ValueError
        If ``T < 1``, ``d`` is odd or < 2, or the table would exceed
        ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    T = check_int(T, "T")
    d = _check_even_width(d, "d")
    check_bytes(_sin_cos_bytes(T, d), f"the sinusoidal table (T, d) of sinusoidal(T={T}, d={d})")
    theta = rope_frequencies(d, base)
    return _sin_cos(np.arange(T, dtype=np.float64), theta)


def _check_positions(positions: ArrayLike | None, T: int) -> np.ndarray:
    if positions is None:
        return np.arange(T, dtype=np.float64)
    p = as_float_array(positions, "positions")
    if p.shape != (T,):
        raise ValueError(
            f"positions must be 1-D with one position per token, shape ({T},) for x with T={T};"
            f" got shape {p.shape}"
        )
    check_finite(p, "positions")
    return p


def rope(
    x: ArrayLike,
    positions: ArrayLike | None = None,
    base: float = 10000.0,
    pairs: str = "interleaved",
) -> np.ndarray:
    """Rotary position embedding (Su et al. 2021): rotate each pair of coordinates of ``x``.

    The pair ``m`` of the vector at position ``p`` is rotated by the angle ``p theta_m``
    (``theta_m = base ** (-2m / d)``, :func:`rope_frequencies`)::

        (a, b) -> (a cos(p theta_m) - b sin(p theta_m),  a sin(p theta_m) + b cos(p theta_m))

    which is the complex product ``(a + i b) e^{i p theta_m}``. Applied to queries and keys, the
    score ``rope(q)_i . rope(k)_j`` then depends on q, k and ``i - j`` only.

    Parameters
    ----------
    x : array_like, shape (..., T, d)
        Queries or keys; d even. Leading dimensions (batch, heads) are rotated alike.
    positions : array_like, shape (T,), optional
        The position of each of the T vectors; default ``0, 1, ..., T - 1``. Any finite
        numbers: offsets (``np.arange(T) + n_cached`` for new tokens after a KV cache of
        ``n_cached``) and fractions (position interpolation, ``np.arange(T) * L / L_new``).
    base : float, default 10000.0
    pairs : {"interleaved", "halves"}, default "interleaved"
        Which coordinates turn together: ``"interleaved"`` pairs ``(2m, 2m + 1)``, as in the
        paper (and the complex-number form); ``"halves"`` pairs ``(m, m + d/2)``, as in
        GPT-NeoX-style code (``rotate_half``). The two give different numbers for the same
        weights unless the weights' columns are permuted to match.

    Returns
    -------
    ndarray, shape (..., T, d)
        A new float array; every vector keeps its norm.

    Raises
    ------
    ValueError
        If d is odd, x holds no token, ``positions`` does not match, or the result and its
        angle table would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB): possible for a
        broadcast view ``x`` that takes far less memory than its shape says.
    """
    if pairs not in PAIRINGS:
        raise ValueError(f"pairs must be one of {PAIRINGS}; got pairs={pairs!r}")
    arr = as_float_array(x, "x", min_ndim=2)
    T, d = arr.shape[-2:]
    if d % 2:
        raise ValueError(
            f"the last axis of x (d) must be even: RoPE rotates the coordinates in pairs;"
            f" got x of shape {arr.shape} (d={d})"
        )
    if d == 0 or T == 0:
        raise ValueError(f"x must have at least one token and d >= 2; got shape {arr.shape}")
    # the result (..., T, d); the positions (T,) and angles (T, d/2) in float64, cos and sin
    check_bytes(
        arr.size * arr.itemsize + 8 * T + T * (d // 2) * (8 + 2 * arr.itemsize),
        f"the result (..., T, d) of rope(x) for x shape {arr.shape}",
    )
    p = _check_positions(positions, T)
    angles = p[:, None] * rope_frequencies(d, base)[None, :]  # (T, d/2)
    cos, sin = np.cos(angles).astype(arr.dtype), np.sin(angles).astype(arr.dtype)
    if pairs == "interleaved":
        a, b = arr[..., 0::2], arr[..., 1::2]
    else:
        a, b = arr[..., : d // 2], arr[..., d // 2 :]
    out = np.empty_like(arr)
    if pairs == "interleaved":
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
    else:
        out[..., : d // 2] = a * cos - b * sin
        out[..., d // 2 :] = a * sin + b * cos
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """The ALiBi slope of each head (Press et al. 2022).

    For ``H`` a power of two, ``m_h = 2 ** (-8 h / H)`` for ``h = 1..H``: a geometric sequence
    from ``2 ** (-8 / H)`` down to ``2 ** -8``. Otherwise, as in the paper's code: the slopes of
    the largest power of two ``n < H``, then every other slope of ``2n`` heads (the ones not
    already taken), until there are ``H``.

    Parameters
    ----------
    n_heads : int
        Number of heads H (>= 1).

    Returns
    -------
    ndarray, shape (n_heads,)
        For 8 heads ``1/2, 1/4, ..., 1/256``; for 12 heads those eight, then ``2 ** -0.5``,
        ``2 ** -1.5``, ``2 ** -2.5``, ``2 ** -3.5``.

    Raises
    ------
    ValueError
        If ``n_heads < 1``, or the slopes would exceed ``attnlib._validation.MAX_BYTES``
        (4 GiB).
    """
    n_heads = check_int(n_heads, "n_heads")
    check_allocation((n_heads,), np.float64, f"the slopes of alibi_slopes(n_heads={n_heads})")
    return _slopes(n_heads)


def _slopes(n: int) -> np.ndarray:
    """The slopes of ``n`` heads: those of the largest power of two ``below <= n``, then the
    odd-numbered slopes ``h = 1, 3, 5, ...`` of ``2 * below`` heads (the paper's recursion)."""
    below = 1 << (n.bit_length() - 1)  # the largest power of two <= n
    slopes = 2.0 ** (-8.0 * np.arange(1, below + 1) / below)
    if below == n:
        return slopes
    extra = 2.0 ** (-8.0 * np.arange(1, 2 * (n - below), 2) / (2 * below))
    return np.concatenate([slopes, extra])


def alibi_bias(n_heads: int, T_q: int, T_k: int | None = None) -> np.ndarray:
    """The ALiBi bias added to each head's scores: ``-m_h |i - j|``.

    The queries are the last ``T_q`` of the ``T_k`` positions (new tokens after a KV cache, as
    in :func:`attnlib.causal_mask`), so query ``i`` sits at position ``i + T_k - T_q`` and the
    bias is 0 where a query meets its own key.

    Parameters
    ----------
    n_heads : int
        Number of heads (>= 1); head h gets slope ``alibi_slopes(n_heads)[h]``.
    T_q : int
        Number of queries (>= 1).
    T_k : int, optional
        Number of keys (>= T_q); default ``T_q``.

    Returns
    -------
    ndarray, shape (n_heads, T_q, T_k)
        ``bias[h, i, j] = -m_h |i + T_k - T_q - j|``: for keys at or before the query, the
        paper's ``-m_h (i - j)``, a penalty growing with the distance. For later keys it holds
        the mirror image ``-m_h (j - i)``: the bidirectional (encoder) variant. A decoder adds a
        causal mask as well, which removes those keys. Add the bias to the scaled scores
        before the softmax, as an additive mask. (The paper's code adds ``m_h j`` instead,
        which differs from ``-m_h (i - j)`` by ``m_h i``, a constant along each row that the
        softmax ignores.)

    Raises
    ------
    ValueError
        If a size is < 1, ``T_k < T_q``, or the bias would exceed
        ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    n_heads = check_int(n_heads, "n_heads")
    T_q = check_int(T_q, "T_q")
    T_k = T_q if T_k is None else check_int(T_k, "T_k")
    if T_k < T_q:
        raise ValueError(
            f"T_k={T_k} is smaller than T_q={T_q}: the queries are the last T_q positions of the"
            f" keys' sequence, so there must be at least as many keys as queries"
        )
    # the float64 bias (n_heads, T_q, T_k), and the int64 distances (T_q, T_k) and their negation
    check_bytes(
        8 * n_heads * T_q * T_k + 16 * T_q * T_k,
        f"the bias (n_heads, T_q, T_k) of alibi_bias(n_heads={n_heads}, T_q={T_q}, T_k={T_k})",
    )
    slopes = alibi_slopes(n_heads)
    distance = np.abs(np.arange(T_q)[:, None] + (T_k - T_q) - np.arange(T_k)[None, :])
    return slopes[:, None, None] * -distance[None, :, :]  # -distance: no "-0." on the diagonal


def relative_scores(
    q: ArrayLike,
    k: ArrayLike,
    offsets: ArrayLike,
    scheme: str = "RoPE",
    *,
    base: float = 10000.0,
    slope: float = 0.5,
    key_position: int = 0,
) -> np.ndarray:
    """The score of one fixed (q, k) pair with the query ``i - j`` positions after the key.

    The key sits at ``key_position``, the query at ``key_position + offset``. The score is the
    unscaled dot product after the scheme has had its say:

    * ``"none"``: ``q . k`` at every offset (attention cannot tell the offsets apart);
    * ``"sinusoidal"``: ``(q + PE(i)) . (k + PE(j))``, the encoding added to both vectors (as
      to the embeddings; with the projections left out, so the picture shows the table);
    * ``"RoPE"``: ``rope(q)_i . rope(k)_j``, a function of the offset only;
    * ``"ALiBi"``: ``q . k - slope |i - j|``.

    Parameters
    ----------
    q, k : array_like, shape (d,)
        One query and one key (d even for the sinusoidal and RoPE schemes).
    offsets : array_like, shape (n,)
        The relative offsets ``i - j`` to evaluate (integers, or any finite numbers).
    scheme : {"none", "sinusoidal", "RoPE", "ALiBi"}, default "RoPE"
    base : float, default 10000.0
        The frequency base of the sinusoidal and RoPE schemes.
    slope : float, default 0.5
        The ALiBi slope m_h (> 0).
    key_position : int, default 0
        The key's absolute position (RoPE's score does not depend on it; the sinusoidal one
        does, through the cross terms ``q . PE(j)``).

    Returns
    -------
    ndarray, shape (n,)
        The score at each offset.

    Raises
    ------
    ValueError
        If the inputs are malformed, or (sinusoidal and RoPE) the ``(n, d)`` tables of the n
        offsets would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got scheme={scheme!r}")
    q_arr = as_float_array(q, "q")
    k_arr = as_float_array(k, "k")
    if q_arr.ndim != 1 or k_arr.shape != q_arr.shape or q_arr.size == 0:
        raise ValueError(
            f"q and k must be two 1-D vectors of the same length; got shapes {q_arr.shape}"
            f" and {k_arr.shape}"
        )
    check_finite(q_arr, "q")
    check_finite(k_arr, "k")
    off = as_float_array(offsets, "offsets")
    if off.ndim != 1:
        raise ValueError(f"offsets must be 1-D; got shape {off.shape}")
    check_finite(off, "offsets")
    key_position = check_int(key_position, "key_position", minimum=0)
    base = check_positive_real(base, "base")
    slope = check_positive_real(slope, "slope")
    d = q_arr.size
    if scheme in ("sinusoidal", "RoPE") and d % 2:
        raise ValueError(f"scheme={scheme!r} needs an even width; got q and k of length {d}")
    if scheme in ("sinusoidal", "RoPE"):
        # a position table (n, d) with its angles; then q + PE(i), or the rotated queries
        check_bytes(
            _sin_cos_bytes(off.size, d) + 8 * off.size * d,
            f"the tables (n, d) of relative_scores(scheme={scheme!r}) for offsets shape"
            f" {off.shape} and q, k of length {d}",
        )
    content = float(q_arr @ k_arr)
    if scheme == "none":
        return np.full(off.shape, content)
    if scheme == "ALiBi":
        return content - slope * np.abs(off)
    theta = rope_frequencies(d, base)
    i = key_position + off  # (n,) query positions
    if scheme == "RoPE":
        q_rot = rope(np.broadcast_to(q_arr, (off.size, d)), i, base)
        k_rot = rope(k_arr[None, :], [key_position], base)
        return q_rot @ k_rot[0]
    pe_i = _sin_cos(i, theta)  # (n, d)
    pe_j = _sin_cos(np.array([float(key_position)]), theta)[0]
    return (q_arr + pe_i) @ (k_arr + pe_j)


def positioned_scores(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    scheme: str = "RoPE",
    *,
    base: float = 10000.0,
    slope: float = 0.5,
) -> np.ndarray:
    """Scaled self-attention scores of a sentence, with word order entered by ``scheme``.

    * ``"none"``: ``Q K^T / sqrt(d_k)`` with ``Q = X W_Q``, ``K = X W_K``;
    * ``"sinusoidal"``: the same, with ``X + sinusoidal(T, d_model)`` in place of X;
    * ``"RoPE"``: ``rope(Q) rope(K)^T / sqrt(d_k)``;
    * ``"ALiBi"``: the plain scores plus ``-slope |i - j|`` (one head of :func:`alibi_bias`).

    Parameters
    ----------
    X : array_like, shape (T, d_model)
        Token embeddings (d_model even for the sinusoidal scheme).
    W_Q, W_K : array_like, shape (d_model, d_k)
        Projections (d_k even for RoPE).
    scheme : {"none", "sinusoidal", "RoPE", "ALiBi"}, default "RoPE"
    base : float, default 10000.0
        The frequency base of the sinusoidal and RoPE schemes.
    slope : float, default 0.5
        The ALiBi slope (> 0).

    Returns
    -------
    ndarray, shape (T, T)
        Row = query, column = key; no mask (add one for a decoder).

    Raises
    ------
    ValueError
        If the shapes do not fit, or the scores (with the ALiBi bias) would exceed
        ``attnlib._validation.MAX_BYTES`` (4 GiB).
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got scheme={scheme!r}")
    X = as_float_array(X, "X")
    W_Q, W_K = as_float_array(W_Q, "W_Q"), as_float_array(W_K, "W_K")
    if X.ndim != 2 or W_Q.ndim != 2 or W_Q.shape != W_K.shape or W_Q.shape[0] != X.shape[1]:
        raise ValueError(
            f"X must be (T, d_model) and W_Q, W_K both (d_model, d_k); got X {X.shape},"
            f" W_Q {W_Q.shape}, W_K {W_K.shape}"
        )
    for name, arr in (("X", X), ("W_Q", W_Q), ("W_K", W_K)):
        check_finite(arr, name)
    base = check_positive_real(base, "base")
    slope = check_positive_real(slope, "slope")
    T, d_k = X.shape[0], W_Q.shape[1]
    n_tables = 3 if scheme == "ALiBi" else 1  # ALiBi: the scores, the distances and the bias
    check_bytes(
        n_tables * 8 * T * T,
        f"the scores (T, T){' and the ALiBi bias' if scheme == 'ALiBi' else ''} of"
        f" positioned_scores for X shape {X.shape}",
    )
    if scheme == "sinusoidal":
        X = X + sinusoidal(T, X.shape[1], base)
    Q, K = X @ W_Q, X @ W_K
    if scheme == "RoPE":
        Q, K = rope(Q, base=base), rope(K, base=base)
    scores = Q @ K.T / math.sqrt(d_k)
    if scheme == "ALiBi":
        scores = scores - slope * np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])
    return scores


def _sin_cos_bytes(n: int, d: int) -> int:
    """The bytes :func:`_sin_cos` takes for ``n`` positions and width ``d``: the float64 table
    (n, d) and its angles (n, d/2), and the positions themselves."""
    return 8 * n * d + 8 * n * (d // 2) + 8 * n


def _sin_cos(positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The sinusoidal table at any (real) positions: sin on even, cos on odd coordinates."""
    angles = positions[:, None] * theta[None, :]
    table = np.empty((positions.size, 2 * theta.size))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table
