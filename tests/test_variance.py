"""sample_dot_products: shape, determinism, chunking, and Var(q.k) = d_k sigma_q^2 sigma_k^2."""

from __future__ import annotations

import numpy as np
import pytest

import attnlib.variance
from attnlib import sample_dot_products


def test_returns_one_float64_dot_product_per_pair() -> None:
    x = sample_dot_products(8, 1000, np.random.default_rng(0))
    assert x.shape == (1000,) and x.dtype == np.float64


def test_the_same_seed_gives_the_same_draws() -> None:
    a = sample_dot_products(16, 500, np.random.default_rng(7))
    b = sample_dot_products(16, 500, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)


def test_different_seeds_give_different_draws() -> None:
    a = sample_dot_products(16, 500, np.random.default_rng(7))
    b = sample_dot_products(16, 500, np.random.default_rng(8))
    assert not np.array_equal(a, b)


def test_chunks_are_the_dot_products_of_consecutive_draws(monkeypatch) -> None:
    # 64 elements per chunk at d_k = 8: chunks of 8 pairs, the last one partial (20 = 8 + 8 + 4);
    # each chunk draws its q rows, then its k rows, from the one generator
    monkeypatch.setattr(attnlib.variance, "CHUNK_ELEMENTS", 64)
    got = sample_dot_products(8, 20, np.random.default_rng(5), sigma_q=2.0, sigma_k=0.5)
    rng = np.random.default_rng(5)
    expected = []
    for n in (8, 8, 4):
        q, k = rng.standard_normal((n, 8)), rng.standard_normal((n, 8))
        expected += [sum(q[i, m] * k[i, m] for m in range(8)) * (2.0 * 0.5) for i in range(n)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_sigmas_multiply_every_draw_by_sigma_q_sigma_k() -> None:
    unit = sample_dot_products(4, 100, np.random.default_rng(3))
    scaled = sample_dot_products(4, 100, np.random.default_rng(3), sigma_q=2.0, sigma_k=3.0)
    np.testing.assert_allclose(scaled, 6.0 * unit, rtol=1e-15)


@pytest.mark.parametrize(
    ("d_k", "sigma_q", "sigma_k"), [(1, 1.0, 1.0), (16, 1.0, 1.0), (64, 0.5, 3.0)]
)
def test_mean_is_near_zero_and_variance_near_d_k_sigma_q2_sigma_k2(d_k, sigma_q, sigma_k) -> None:
    n = 20_000
    x = sample_dot_products(d_k, n, np.random.default_rng(11), sigma_q, sigma_k)
    var = d_k * sigma_q**2 * sigma_k**2
    # q.k is a sum of d_k terms q_m k_m with variance s^2 = (sigma_q sigma_k)^2 and fourth
    # moment 9 s^4, so E[(q.k)^4] = (3 d_k^2 + 6 d_k) s^4. The sample mean then has standard
    # error sqrt(var / n), and the sample variance sqrt((2 d_k^2 + 6 d_k) s^4 / n). Five
    # standard errors: a correct sampler fails with probability below 1e-6.
    se_mean = np.sqrt(var / n)
    se_var = np.sqrt((2 * d_k**2 + 6 * d_k) * (sigma_q * sigma_k) ** 4 / n)
    assert abs(x.mean()) < 5 * se_mean
    assert abs(x.var() - var) < 5 * se_var, f"variance {x.var():.4g}, theory {var:.4g}"
