"""sample_dot_products: determinism, chunks, threads, and Var(q.k) = d_k sigma_q^2 sigma_k^2."""

from __future__ import annotations

from fractions import Fraction

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


def test_each_chunk_draws_q_then_k_in_float32_from_its_own_spawned_generator(monkeypatch) -> None:
    # 64 elements per chunk at d_k = 8: chunks of 8 pairs, the last one partial (20 = 8 + 8 + 4);
    # chunk c draws its q rows, then its k rows, from rng.spawn(3)[c]
    monkeypatch.setattr(attnlib.variance, "CHUNK_ELEMENTS", 64)
    got = sample_dot_products(8, 20, np.random.default_rng(5), sigma_q=2.0, sigma_k=0.5)
    expected = []
    for n, g in zip((8, 8, 4), np.random.default_rng(5).spawn(3)):
        q = g.standard_normal((n, 8), dtype=np.float32)
        k = g.standard_normal((n, 8), dtype=np.float32)
        expected += [
            sum(float(q[i, m]) * float(k[i, m]) for m in range(8)) * (2.0 * 0.5) for i in range(n)
        ]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("workers", [2, 3, 8])
def test_the_result_does_not_depend_on_the_number_of_threads(monkeypatch, workers) -> None:
    monkeypatch.setattr(attnlib.variance, "CHUNK_ELEMENTS", 256)  # 64 chunks of 16 pairs
    one = sample_dot_products(16, 1024, np.random.default_rng(9), workers=1)
    many = sample_dot_products(16, 1024, np.random.default_rng(9), workers=workers)
    np.testing.assert_array_equal(many, one)


def test_each_call_with_the_same_generator_gives_new_draws() -> None:
    rng = np.random.default_rng(4)
    assert not np.array_equal(sample_dot_products(4, 100, rng), sample_dot_products(4, 100, rng))


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


def test_a_fraction_sigma_is_the_same_as_its_float() -> None:
    exact = sample_dot_products(4, 50, np.random.default_rng(2), sigma_q=Fraction(1, 2))
    approx = sample_dot_products(4, 50, np.random.default_rng(2), sigma_q=0.5)
    np.testing.assert_array_equal(exact, approx)


def test_sigmas_whose_product_overflows_raise_instead_of_returning_infinity() -> None:
    with pytest.raises(ValueError, match=r"sigma_q \* sigma_k = 1e\+200 \* 1e\+200 is inf"):
        sample_dot_products(4, 10, np.random.default_rng(0), sigma_q=1e200, sigma_k=1e200)


def test_dot_products_that_overflow_float64_raise_instead_of_returning_infinity() -> None:
    # sigma_q * sigma_k = 1e308 is finite, but |q.k| > 1.8 for some pair, and 1.8e308 is not
    with pytest.raises(ValueError, match=r"dot products overflowed float64"):
        sample_dot_products(4, 1000, np.random.default_rng(0), sigma_q=1e154, sigma_k=1e154)


def test_sigmas_whose_product_underflows_to_zero_raise() -> None:
    with pytest.raises(ValueError, match=r"is 0.0 in float64"):
        sample_dot_products(4, 10, np.random.default_rng(0), sigma_q=1e-200, sigma_k=1e-200)
