"""The KV cache: keep every past token's keys and values, so each new token costs one step.

When a decoder generates text, the keys and values of the tokens it has already read do not
change, so it keeps them. Each step projects only the newest token, appends its K and V to the
cache, and lets the newest query attend to everything in the cache. The cache holds only the past
and the present, so no causal mask is needed, and the result equals full causal attention.

* :func:`kv_cache_bytes`: how much memory the cache of a whole model takes.
* :func:`decode_step_bytes`: what one decoding step reads: the parameters once, every cache.
* :class:`KVCache`: one layer's cache, in buffers allocated once.
* :func:`decode_with_kv_cache`: causal MHA / GQA / MQA computed token by token with a KVCache.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ._validation import (
    as_float_array,
    check_allocation,
    check_finite,
    check_int,
    check_scale,
    finite_result,
)
from .attention import _attention

__all__ = ["KVCache", "decode_step_bytes", "decode_with_kv_cache", "kv_cache_bytes"]


def _check_dtype(dtype: DTypeLike, default: DTypeLike, name: str = "dtype") -> np.dtype:
    """``dtype`` as a numpy dtype; None means ``default`` (not numpy's float64)."""
    try:
        dt = np.dtype(default if dtype is None else dtype)
    except TypeError as err:
        raise TypeError(f"{name} must be a numpy dtype such as 'float16'; got {dtype!r}") from err
    if dt.kind not in "iuf":
        raise TypeError(f"{name} must be an integer or floating dtype; got {dt} ({dtype!r})")
    return dt


def kv_cache_bytes(
    n_tokens: int,
    n_layers: int,
    n_kv_heads: int,
    d_head: int,
    dtype: DTypeLike = np.float16,
    batch_size: int = 1,
) -> int:
    """Bytes of the KV cache of a whole model: ``2 * batch * layers * kv_heads * tokens * d_head``.

    The 2 counts K and V (both of width ``d_head``); each entry takes ``dtype``'s item size.
    The number of *query* heads does not appear: only the K/V heads are cached.

    Parameters
    ----------
    n_tokens : int
        Tokens held in the cache (>= 0), e.g. the context length.
    n_layers : int
        Attention layers, each with its own cache.
    n_kv_heads : int
        Key/value heads per layer (``n_heads`` for MHA, 1 for MQA).
    d_head : int
        Width of one head's key (and value) vectors.
    dtype : numpy dtype, default float16
        Storage type of the cache; ``np.dtype(dtype).itemsize`` bytes per entry. None means
        the default, float16.
    batch_size : int, default 1
        Sequences cached at once.

    Returns
    -------
    int
        The exact number of bytes (a Python int, so it never overflows).
    """
    n_tokens = check_int(n_tokens, "n_tokens", minimum=0)
    n_layers = check_int(n_layers, "n_layers")
    n_kv_heads = check_int(n_kv_heads, "n_kv_heads")
    d_head = check_int(d_head, "d_head")
    batch_size = check_int(batch_size, "batch_size")
    itemsize = _check_dtype(dtype, default=np.float16).itemsize
    return 2 * batch_size * n_layers * n_kv_heads * n_tokens * d_head * itemsize


def decode_step_bytes(
    n_parameters: int,
    n_tokens: int,
    n_layers: int,
    n_kv_heads: int,
    d_head: int,
    dtype: DTypeLike = np.float16,
    batch_size: int = 1,
) -> int:
    """Bytes one decoding step reads from memory: ``parameters + batch_size * cache``.

    A decoder that generates the next token of ``batch_size`` sequences at once reads every
    parameter once (the batch shares them) and each sequence's whole KV cache (its own):

    ``n_parameters * itemsize + kv_cache_bytes(n_tokens, ..., batch_size=batch_size)``.

    Both are stored in ``dtype``. This is the traffic that sets the speed of decoding, which is
    memory-bound: divided by a memory bandwidth (bytes per second) it gives a lower bound on the
    seconds per step. Left out, because they are small next to these two: the activations, and
    the new token's key and value written to the cache.

    Parameters
    ----------
    n_parameters : int
        Parameters of the whole model (>= 1), e.g. 6_738_415_616 for Llama-2-7B.
    n_tokens : int
        Tokens each sequence holds in its cache (>= 0): the context so far.
    n_layers, n_kv_heads, d_head : int
        The cache's shape, as in :func:`kv_cache_bytes`.
    dtype : numpy dtype, default float16
        Storage type of the parameters and the cache; None means float16.
    batch_size : int, default 1
        Sequences decoded together, each with its own cache.

    Returns
    -------
    int
        Bytes read per step (a Python int, exact).

    Examples
    --------
    >>> decode_step_bytes(1000, n_tokens=10, n_layers=2, n_kv_heads=1, d_head=4, batch_size=3)
    2960
    """
    n_parameters = check_int(n_parameters, "n_parameters")
    itemsize = _check_dtype(dtype, default=np.float16).itemsize
    cache = kv_cache_bytes(n_tokens, n_layers, n_kv_heads, d_head, dtype, batch_size)
    return n_parameters * itemsize + cache


class KVCache:
    """One layer's keys and values of the tokens seen so far, in buffers allocated once.

    Parameters
    ----------
    max_tokens : int
        Capacity: how many tokens the cache can hold.
    n_kv_heads : int
        Number of key/value heads.
    d_head : int
        Width of a key.
    d_v : int, optional
        Width of a value; defaults to ``d_head``.
    batch_shape : tuple of int, default ()
        Leading (batch) dimensions of the cached arrays.
    dtype : floating numpy dtype, default float64
        None means the default, float64. Entries appended are rounded to it; one too large
        for it (1e5 in float16) raises ValueError instead of being stored as inf.

    Raises
    ------
    ValueError
        If a size is < 1, or the buffers would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB).

    Attributes
    ----------
    length : int
        Tokens stored so far.
    max_tokens : int

    Examples
    --------
    >>> cache = KVCache(max_tokens=4, n_kv_heads=2, d_head=3)
    >>> keys, values = cache.append(np.ones((2, 1, 3)), np.ones((2, 1, 3)))
    >>> keys.shape, cache.length
    ((2, 1, 3), 1)
    """

    def __init__(
        self,
        max_tokens: int,
        n_kv_heads: int,
        d_head: int,
        d_v: int | None = None,
        batch_shape: tuple[int, ...] = (),
        dtype: DTypeLike = np.float64,
    ) -> None:
        self.max_tokens = check_int(max_tokens, "max_tokens")
        n_kv_heads = check_int(n_kv_heads, "n_kv_heads")
        d_head = check_int(d_head, "d_head")
        d_v = d_head if d_v is None else check_int(d_v, "d_v")
        try:
            batch_shape = tuple(check_int(b, "batch_shape entries") for b in batch_shape)
        except TypeError as err:
            raise TypeError(f"batch_shape must be a tuple of ints; got {batch_shape!r}") from err
        dt = _check_dtype(dtype, default=np.float64)
        if dt.kind != "f":
            raise TypeError(f"dtype must be a floating dtype; got {dt}")
        check_allocation(
            (*batch_shape, n_kv_heads, self.max_tokens, d_head + d_v),
            dt,
            f"the KVCache's keys and values (max_tokens={self.max_tokens},"
            f" n_kv_heads={n_kv_heads}, d_head={d_head}, d_v={d_v}, batch_shape={batch_shape})",
        )
        self._keys = np.zeros((*batch_shape, n_kv_heads, self.max_tokens, d_head), dt)
        self._values = np.zeros((*batch_shape, n_kv_heads, self.max_tokens, d_v), dt)
        self.length = 0

    def _check(self, x: ArrayLike, name: str, buffer: np.ndarray) -> np.ndarray:
        x = as_float_array(x, name, min_ndim=2)
        expected = (*buffer.shape[:-2], "t", buffer.shape[-1])
        if x.shape[:-2] != buffer.shape[:-2] or x.shape[-1] != buffer.shape[-1] or not x.shape[-2]:
            raise ValueError(
                f"{name} must have shape (..., n_kv_heads, t, width) ="
                f" {expected} with t >= 1 new tokens; got {name} shape {x.shape}"
            )
        check_finite(x, name)
        what = f"storing {name} in the cache's {buffer.dtype}"
        return finite_result(lambda: x.astype(buffer.dtype, copy=False), what, {name: x})

    def append(self, k: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Store the keys and values of ``t`` new tokens after the ones already cached.

        Parameters
        ----------
        k : array_like, shape (*batch_shape, n_kv_heads, t, d_head)
        v : array_like, shape (*batch_shape, n_kv_heads, t, d_v)

        Returns
        -------
        keys : ndarray, shape (*batch_shape, n_kv_heads, length, d_head)
        values : ndarray, shape (*batch_shape, n_kv_heads, length, d_v)
            Everything cached so far, the new tokens last (read-only views, no copy).
        """
        k = self._check(k, "k", self._keys)
        v = self._check(v, "v", self._values)
        t = k.shape[-2]
        if v.shape[-2] != t:
            raise ValueError(
                f"k and v must hold the same number of new tokens; got k shape {k.shape},"
                f" v shape {v.shape}"
            )
        if self.length + t > self.max_tokens:
            raise ValueError(
                f"the cache is full: it holds {self.length} of max_tokens={self.max_tokens} tokens"
                f" and cannot take {t} more"
            )
        self._keys[..., self.length : self.length + t, :] = k
        self._values[..., self.length : self.length + t, :] = v
        self.length += t
        return self.keys, self.values

    @property
    def keys(self) -> np.ndarray:
        """The cached keys, shape (*batch_shape, n_kv_heads, length, d_head), read-only."""
        view = self._keys[..., : self.length, :]
        view.flags.writeable = False
        return view

    @property
    def values(self) -> np.ndarray:
        """The cached values, shape (*batch_shape, n_kv_heads, length, d_v), read-only."""
        view = self._values[..., : self.length, :]
        view.flags.writeable = False
        return view

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values stored so far (the buffers hold ``max_tokens``)."""
        return self.keys.nbytes + self.values.nbytes


def decode_with_kv_cache(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[np.ndarray, KVCache]:
    """Causal multi-head attention, one token at a time, keys and values taken from a KVCache.

    Step ``t`` appends key ``t`` and value ``t`` to the cache, then query ``t`` of every head
    attends to the cached keys ``0..t`` of its KV head (query head ``i`` reads KV head
    ``i // (n_heads // n_kv_heads)``), with the scale ``1/sqrt(d_head)``. No mask is needed: the
    cache holds no future token. The result equals full causal attention.

    Parameters
    ----------
    Q : array_like, shape (..., n_heads, T, d_head)
        Every step's queries, one per head.
    K : array_like, shape (..., n_kv_heads, T, d_head)
        Every step's keys; ``n_kv_heads`` must divide ``n_heads`` (1 = MQA, n_heads = MHA).
    V : array_like, shape (..., n_kv_heads, T, d_v)
        Every step's values.

    Returns
    -------
    output : ndarray, shape (..., n_heads, T, d_v)
        Row ``t`` of head ``i`` is the attention output of query ``t`` over keys ``0..t``.
    cache : KVCache
        The cache after the last step (``cache.length == T``).

    Notes
    -----
    Each step runs the kernel of :func:`attnlib.scaled_dot_product_attention`: scores too large
    for the dtype raise ValueError, and float16 is computed in float32 (the cache stays float16).
    """
    Q = as_float_array(Q, "Q", min_ndim=3)
    K = as_float_array(K, "K", min_ndim=3)
    V = as_float_array(V, "V", min_ndim=3)
    shapes = f"(Q shape {Q.shape}, K shape {K.shape}, V shape {V.shape})"
    if not Q.shape[:-3] == K.shape[:-3] == V.shape[:-3]:
        raise ValueError(f"Q, K and V must have the same leading (batch) dimensions {shapes}")
    n_heads, T, d_head = Q.shape[-3:]
    n_kv_heads = K.shape[-3]
    if K.shape[-2:] != (T, d_head) or V.shape[-3:-1] != (n_kv_heads, T):
        raise ValueError(
            "K must have shape (..., n_kv_heads, T, d_head) and V (..., n_kv_heads, T, d_v),"
            f" with the T and d_head of Q (..., n_heads, T, d_head) {shapes}"
        )
    if min(n_heads, T, d_head, n_kv_heads, V.shape[-1]) < 1:
        raise ValueError(f"Q, K and V must have no empty dimension {shapes}")
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads={n_kv_heads} (K.shape[-3]) does not divide n_heads={n_heads}"
            f" (Q.shape[-3]): each KV head must serve the same number of query heads {shapes}"
        )
    for name, arr in (("Q", Q), ("K", K), ("V", V)):
        check_finite(arr, name)

    batch, group, d_v = Q.shape[:-3], n_heads // n_kv_heads, V.shape[-1]
    dtype = np.result_type(Q, K, V)
    cache = KVCache(T, n_kv_heads, d_head, d_v, batch_shape=batch, dtype=dtype)
    output = np.empty((*batch, n_heads, T, d_v), dtype=dtype)
    # query head i = j * group + r reads KV head j: group the query heads by KV head
    q_grouped = Q.reshape(*batch, n_kv_heads, group, T, d_head)
    scale = check_scale(None, d_head)
    for t in range(T):
        keys, values = cache.append(K[..., t : t + 1, :], V[..., t : t + 1, :])  # (.., t+1, d)
        q = q_grouped[..., t, :]  # (..., n_kv_heads, group, d_head)
        # the kernel of scaled_dot_product_attention: the same overflow guard, float16 in float32
        out, _ = _attention(q, keys, values, None, scale)  # (..., n_kv, group, d_v)
        output[..., t, :] = out.reshape(*batch, n_heads, d_v)
    return output, cache
