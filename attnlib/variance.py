"""Monte Carlo draws of dot products q . k, to check Var(q . k) = d_k sigma_q^2 sigma_k^2."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._validation import check_bytes, check_int, check_positive_real

#: Elements of q (and of k) drawn per chunk: 2**18 float32 numbers = 1 MiB each.
CHUNK_ELEMENTS = 2**18


def sample_dot_products(
    d_k: int,
    n_pairs: int,
    rng: np.random.Generator,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    workers: int | None = None,
) -> np.ndarray:
    r"""Draw ``n_pairs`` independent pairs q, k in R^{d_k} and return their dot products.

    Every entry of q is drawn from N(0, sigma_q^2) and every entry of k from N(0, sigma_k^2),
    all independent, so theory says :math:`E[q\cdot k] = 0` and
    :math:`\mathrm{Var}(q\cdot k) = d_k \sigma_q^2 \sigma_k^2`.

    Parameters
    ----------
    d_k : int
        Length of each vector (>= 1).
    n_pairs : int
        Number of (q, k) pairs (>= 1).
    rng : numpy.random.Generator
        Source of randomness, e.g. ``np.random.default_rng(0)``; the same seed gives the same
        draws.
    sigma_q, sigma_k : float, default 1.0
        Standard deviations of the entries of q and of k (> 0).
    workers : int, optional
        Threads drawing chunks at the same time; default: the number of CPU cores. The result
        does not depend on it.

    Returns
    -------
    ndarray of float64, shape (n_pairs,)
        ``q_i . k_i`` for each pair.

    Raises
    ------
    TypeError
        If ``d_k``, ``n_pairs`` or ``workers`` is not an integer, ``rng`` is not a Generator,
        or a sigma is not a real number.
    ValueError
        If ``d_k``, ``n_pairs`` or ``workers`` is < 1, a sigma is not finite and > 0, the
        dot products do not fit in float64 (``sigma_q = sigma_k = 1e200``, say), or the memory
        below would exceed ``attnlib._validation.MAX_BYTES`` (4 GiB).

    Notes
    -----
    The pairs are drawn in chunks of ``rows = max(1, CHUNK_ELEMENTS // d_k)`` pairs. Chunk
    ``c`` has its own generator, ``rng.spawn(n_chunks)[c]``, which draws the chunk's q rows,
    then its k rows, as float32 standard normals; each dot product is accumulated in float64
    and multiplied by ``sigma_q * sigma_k``. So a chunk can be reproduced by hand::

        g = rng.spawn(1)[0]  # for n_pairs <= rows: a single chunk
        q = g.standard_normal((n_pairs, d_k), dtype=np.float32)
        k = g.standard_normal((n_pairs, d_k), dtype=np.float32)
        x = np.einsum("ij,ij->i", q, k, dtype=np.float64) * (sigma_q * sigma_k)

    Because every chunk owns a generator, ``workers`` threads draw chunks at once (numpy's
    generators release the GIL while they fill an array) and the result is the same for any
    number of threads and any timing. Spawning leaves ``rng``'s own stream where it was, but
    the next call spawns new generators, so two calls give different draws.

    Memory: each thread reuses two buffers of ``CHUNK_ELEMENTS`` float32 numbers (1 MiB each),
    so the peak is about 2 MiB per thread plus the result (8 bytes per pair) and the chunks'
    generators: 4.5 MB with 1 thread and 6.7 MB with 2 for 200,000 pairs at d_k = 1024, as
    measured by ``benchmarks/sample_dot_products_memory.py``, where drawing all pairs at once
    would need 1.6 GB in float32 (3.3 GB in float64).
    """
    d_k = check_int(d_k, "d_k")
    n_pairs = check_int(n_pairs, "n_pairs")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); got"
            f" {type(rng).__name__}"
        )
    sigma_q = check_positive_real(sigma_q, "sigma_q")
    sigma_k = check_positive_real(sigma_k, "sigma_k")
    workers = (os.cpu_count() or 1) if workers is None else check_int(workers, "workers")
    sigma = sigma_q * sigma_k  # q.k scales by sigma_q * sigma_k when q and k do
    if not 0 < sigma < math.inf:
        raise ValueError(
            f"sigma_q * sigma_k = {sigma_q:.3g} * {sigma_k:.3g} is {sigma} in float64, so every"
            f" dot product would be {'infinite' if sigma else 0}; choose sigmas nearer to 1"
        )
    rows = max(1, CHUNK_ELEMENTS // d_k)
    n_chunks = -(-n_pairs // rows)
    workers = min(workers, n_chunks)
    # two float32 buffers of (rows, d_k) per thread, and the float64 result
    check_bytes(
        workers * 2 * rows * d_k * 4 + n_pairs * 8,
        f"sample_dot_products(d_k={d_k}, n_pairs={n_pairs}) with {workers} thread(s)",
    )
    generators = rng.spawn(n_chunks)
    out = np.empty(n_pairs)

    def draw_chunks(first: int) -> None:
        """Fill chunks first, first + workers, ...; two buffers reused for all of them."""
        q = np.empty((rows, d_k), dtype=np.float32)
        k = np.empty((rows, d_k), dtype=np.float32)
        for c in range(first, n_chunks, workers):
            start = c * rows
            n = min(rows, n_pairs - start)
            generators[c].standard_normal(out=q[:n], dtype=np.float32)
            generators[c].standard_normal(out=k[:n], dtype=np.float32)
            np.einsum("ij,ij->i", q[:n], k[:n], out=out[start : start + n], dtype=np.float64)

    if workers == 1:
        draw_chunks(0)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(draw_chunks, range(workers)))  # list() re-raises a worker's error
    with np.errstate(over="ignore"):
        out *= sigma
    if not np.isfinite(out).all():
        raise ValueError(
            f"the dot products overflowed float64 with sigma_q * sigma_k = {sigma:.3g}"
            f" (d_k={d_k}); choose sigmas nearer to 1"
        )
    return out
