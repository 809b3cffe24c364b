"""Monte Carlo draws of dot products q . k, to check Var(q . k) = d_k sigma_q^2 sigma_k^2."""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import check_int

#: Elements of q (and of k) drawn per chunk: 2**20 float64 numbers = 8 MiB each.
CHUNK_ELEMENTS = 2**20


def sample_dot_products(
    d_k: int,
    n_pairs: int,
    rng: np.random.Generator,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
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

    Returns
    -------
    ndarray of float64, shape (n_pairs,)
        ``q_i . k_i`` for each pair.

    Raises
    ------
    TypeError
        If ``d_k`` or ``n_pairs`` is not an integer, ``rng`` is not a Generator, or a sigma is
        not a real number.
    ValueError
        If ``d_k`` or ``n_pairs`` is < 1, or a sigma is not finite and > 0.

    Notes
    -----
    Pairs are drawn in chunks of ``CHUNK_ELEMENTS // d_k`` rows into two reused buffers of
    ``CHUNK_ELEMENTS`` float64 numbers (8 MiB each; one row when d_k is larger), so memory is
    about 17 MB plus the result (8 bytes per pair): 18 MB for 200,000 pairs at d_k = 1024, as
    measured by ``benchmarks/sample_dot_products_memory.py``, where drawing all pairs at once
    would need 3.3 GB. The same seed, ``d_k`` and ``n_pairs`` give the same draws.
    """
    d_k = check_int(d_k, "d_k")
    n_pairs = check_int(n_pairs, "n_pairs")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); got"
            f" {type(rng).__name__}"
        )
    for name, sigma in (("sigma_q", sigma_q), ("sigma_k", sigma_k)):
        if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real):
            raise TypeError(f"{name} must be a real number; got {sigma!r}")
        if not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"{name} must be a finite number > 0; got {name}={sigma!r}")
    rows = max(1, min(n_pairs, CHUNK_ELEMENTS // d_k))
    q = np.empty((rows, d_k))  # two buffers, refilled for every chunk
    k = np.empty((rows, d_k))
    out = np.empty(n_pairs)
    for start in range(0, n_pairs, rows):
        n = min(rows, n_pairs - start)
        rng.standard_normal(out=q[:n])
        rng.standard_normal(out=k[:n])
        np.einsum("ij,ij->i", q[:n], k[:n], out=out[start : start + n])
    out *= sigma_q * sigma_k  # q.k scales by sigma_q * sigma_k when q and k do
    return out
