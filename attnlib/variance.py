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

    Notes
    -----
    Pairs are drawn in chunks of about ``CHUNK_ELEMENTS / d_k`` rows, so memory stays near
    30 MB whatever ``n_pairs`` is (200,000 pairs at d_k = 1024 would otherwise need 3.3 GB).
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
    rows = max(1, CHUNK_ELEMENTS // d_k)
    out = np.empty(n_pairs)
    for start in range(0, n_pairs, rows):
        n = min(rows, n_pairs - start)
        q = rng.standard_normal((n, d_k))
        k = rng.standard_normal((n, d_k))
        out[start : start + n] = np.einsum("ij,ij->i", q, k)
    return out * (sigma_q * sigma_k)
