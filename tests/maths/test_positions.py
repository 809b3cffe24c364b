"""attnlib.positions: the relative-position laws, norms, both RoPE pairings against independent
implementations, ALiBi's slopes against the paper, and clear errors for bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib.positions import (
    SCHEMES,
    alibi_bias,
    alibi_slopes,
    positioned_scores,
    relative_scores,
    rope,
    rope_frequencies,
    sinusoidal,
)

FAST = settings(max_examples=40, deadline=None, database=None)

widths = st.integers(1, 8).map(lambda n: 2 * n)
entries = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)
positions = st.integers(-2000, 2000)


def vectors(d: int):
    return arrays(np.float64, (d,), elements=entries)


# --- RoPE: the laws -----------------------------------------------------------------------------


def score(q: np.ndarray, k: np.ndarray, i: int, j: int, pairs: str) -> float:
    """The RoPE score of q at position i against k at position j."""
    return float(rope(q[None], [i], pairs=pairs)[0] @ rope(k[None], [j], pairs=pairs)[0])


@pytest.mark.parametrize("pairs", ["interleaved", "halves"])
@FAST
@given(data=st.data(), d=widths, i=positions, j=positions, shift=positions)
def test_rope_score_depends_on_the_offset_only(pairs, data, d, i, j, shift) -> None:
    q, k = data.draw(vectors(d)), data.draw(vectors(d))
    shifted = score(q, k, i + shift, j + shift, pairs)
    assert shifted == pytest.approx(score(q, k, i, j, pairs), rel=1e-9, abs=1e-9)


@FAST
@given(
    data=st.data(), d=widths, T=st.integers(1, 6), pairs=st.sampled_from(["interleaved", "halves"])
)
def test_rope_preserves_every_vectors_norm(data, d, T, pairs) -> None:
    x = data.draw(arrays(np.float64, (2, T, d), elements=entries))
    p = data.draw(arrays(np.int64, (T,), elements=positions))
    np.testing.assert_allclose(
        np.linalg.norm(rope(x, p, pairs=pairs), axis=-1), np.linalg.norm(x, axis=-1), atol=1e-9
    )


def test_rope_at_position_zero_is_the_identity() -> None:
    x = np.random.default_rng(0).normal(size=(3, 8))
    np.testing.assert_array_equal(rope(x, [0, 0, 0]), x)


def test_rope_matches_complex_multiplication_for_interleaved_pairs() -> None:
    rng = np.random.default_rng(1)
    T, d, base = 5, 12, 500.0
    x = rng.normal(size=(2, T, d))
    p = np.array([0, 3, 7, 100, 4096])
    z = x[..., 0::2] + 1j * x[..., 1::2]  # pair m = one complex number
    theta = base ** (-np.arange(d // 2) * 2.0 / d)
    rotated = z * np.exp(1j * p[:, None] * theta[None, :])
    expected = np.empty_like(x)
    expected[..., 0::2], expected[..., 1::2] = rotated.real, rotated.imag
    np.testing.assert_allclose(rope(x, p, base=base), expected, atol=1e-12)


def test_rope_halves_matches_rotate_half_code() -> None:
    """GPT-NeoX-style: x * cos + rotate_half(x) * sin, with cos and sin repeated over halves."""
    rng = np.random.default_rng(2)
    T, d = 6, 8
    x = rng.normal(size=(T, d))
    theta = 1.0 / 10000.0 ** (np.arange(0, d, 2) / d)
    angles = np.arange(T)[:, None] * np.concatenate([theta, theta])[None, :]  # (T, d)
    rotate_half = np.concatenate([-x[:, d // 2 :], x[:, : d // 2]], axis=-1)
    expected = x * np.cos(angles) + rotate_half * np.sin(angles)
    np.testing.assert_allclose(rope(x, pairs="halves"), expected, atol=1e-12)


def test_the_two_pairings_differ_until_the_columns_are_permuted() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 8))
    to_halves = np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)])  # (0,2,4,6,1,3,5,7)
    assert not np.allclose(rope(x), rope(x, pairs="halves"))
    np.testing.assert_allclose(rope(x)[:, to_halves], rope(x[:, to_halves], pairs="halves"))


def test_rope_default_positions_are_0_to_T_minus_1_and_offsets_shift_them() -> None:
    x = np.random.default_rng(4).normal(size=(4, 6))
    np.testing.assert_array_equal(rope(x), rope(x, np.arange(4)))
    full = rope(np.vstack([x, x]))  # positions 0..7
    np.testing.assert_allclose(rope(x, np.arange(4) + 4), full[4:])


def test_rope_keeps_float32() -> None:
    x = np.ones((2, 4), dtype=np.float32)
    assert rope(x).dtype == np.float32


# --- sinusoidal ---------------------------------------------------------------------------------


def test_sinusoidal_matches_the_papers_formula_entry_by_entry() -> None:
    T, d = 7, 6
    expected = [
        [
            np.sin(p / 10000 ** (c / d)) if c % 2 == 0 else np.cos(p / 10000 ** ((c - 1) / d))
            for c in range(d)
        ]
        for p in range(T)
    ]
    np.testing.assert_allclose(sinusoidal(T, d), expected, atol=1e-15)


@FAST
@given(d=widths, i=st.integers(0, 300), j=st.integers(0, 300), shift=st.integers(0, 300))
def test_sinusoidal_dot_product_depends_on_the_offset_only(d, i, j, shift) -> None:
    pe = sinusoidal(max(i, j) + shift + 1, d)
    assert pe[i + shift] @ pe[j + shift] == pytest.approx(pe[i] @ pe[j], abs=1e-9)


@FAST
@given(d=widths, p=st.integers(0, 200), k=st.integers(0, 50))
def test_sinusoidal_shift_is_a_rotation_per_pair(d, p, k) -> None:
    pe = sinusoidal(p + k + 1, d)
    angle = k * rope_frequencies(d)
    c, s = np.cos(angle), np.sin(angle)
    sin_p, cos_p = pe[p, 0::2], pe[p, 1::2]
    np.testing.assert_allclose(pe[p + k, 0::2], c * sin_p + s * cos_p, atol=1e-9)
    np.testing.assert_allclose(pe[p + k, 1::2], c * cos_p - s * sin_p, atol=1e-9)


def test_every_sinusoidal_row_has_norm_sqrt_d_over_2() -> None:
    np.testing.assert_allclose(np.linalg.norm(sinusoidal(50, 16), axis=1), np.sqrt(8))


# --- ALiBi --------------------------------------------------------------------------------------


def test_alibi_slopes_for_8_heads_are_the_papers_one_half_to_one_256th() -> None:
    paper = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    np.testing.assert_array_equal(alibi_slopes(8), paper)


def test_alibi_slopes_for_16_heads_start_at_one_over_root_two() -> None:
    paper = [2 ** (-h / 2) for h in range(1, 17)]  # 1/sqrt(2), 1/2, ..., 1/256
    np.testing.assert_allclose(alibi_slopes(16), paper, rtol=1e-15)


def test_alibi_slopes_for_12_heads_take_8_then_every_other_of_16() -> None:
    expected = [2.0**-h for h in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5]
    np.testing.assert_allclose(alibi_slopes(12), expected, rtol=1e-15)


def paper_slopes(n: int) -> list[float]:
    """The ALiBi paper's code (``get_slopes``), in plain Python lists."""
    if math.log2(n).is_integer():
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    below = 2 ** math.floor(math.log2(n))
    return paper_slopes(below) + paper_slopes(2 * below)[0::2][: n - below]


def test_alibi_slopes_follow_the_papers_code_for_every_head_count_to_300() -> None:
    for n in range(1, 301):
        np.testing.assert_allclose(alibi_slopes(n), paper_slopes(n), rtol=1e-15, err_msg=f"{n}")


@pytest.mark.parametrize("H", [1, 2, 3, 5, 6, 12, 20, 24, 40, 96])
def test_alibi_slopes_are_distinct_and_in_0_1(H: int) -> None:
    m = alibi_slopes(H)
    assert m.shape == (H,) and len(set(m)) == H
    assert ((m > 0) & (m < 1)).all()


def test_alibi_bias_is_minus_slope_times_distance() -> None:
    bias = alibi_bias(4, 5)
    m = alibi_slopes(4)
    for h in range(4):
        for i in range(5):
            for j in range(5):
                assert bias[h, i, j] == -m[h] * abs(i - j)


def test_alibi_bias_with_a_cache_places_the_queries_at_the_end() -> None:
    bias = alibi_bias(2, 2, 6)
    assert bias.shape == (2, 2, 6)
    np.testing.assert_array_equal(bias[:, 0, 4], 0.0)  # query 0 sits at position 4
    np.testing.assert_array_equal(bias[:, 1, 5], 0.0)
    np.testing.assert_array_equal(bias[:, 1], alibi_bias(2, 6)[:, 5])


def test_alibi_bias_diagonal_is_positive_zero() -> None:
    assert not np.signbit(np.diagonal(alibi_bias(3, 4), axis1=1, axis2=2)).any()


# --- relative_scores ----------------------------------------------------------------------------


def test_relative_scores_of_each_scheme() -> None:
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=8), rng.normal(size=8)
    off = np.arange(-3, 4)
    np.testing.assert_array_equal(relative_scores(q, k, off, "none"), np.full(7, q @ k))
    np.testing.assert_allclose(
        relative_scores(q, k, off, "ALiBi", slope=0.25), q @ k - 0.25 * abs(off)
    )
    rope_scores = [rope(q[None], [10 + o])[0] @ rope(k[None], [10])[0] for o in off]
    np.testing.assert_allclose(relative_scores(q, k, off, "RoPE", key_position=10), rope_scores)
    pe = sinusoidal(20, 8)
    sin_scores = [(q + pe[10 + o]) @ (k + pe[10]) for o in off]
    np.testing.assert_allclose(
        relative_scores(q, k, off, "sinusoidal", key_position=10), sin_scores
    )


def test_relative_rope_scores_do_not_depend_on_the_key_position() -> None:
    rng = np.random.default_rng(6)
    q, k = rng.normal(size=6), rng.normal(size=6)
    off = np.arange(-5, 6)
    np.testing.assert_allclose(
        relative_scores(q, k, off, key_position=0), relative_scores(q, k, off, key_position=77)
    )


# --- errors -------------------------------------------------------------------------------------


def test_rope_refuses_an_odd_width() -> None:
    with pytest.raises(ValueError, match=r"must be even.*shape \(3, 5\) \(d=5\)"):
        rope(np.ones((3, 5)))


@pytest.mark.parametrize("d", [3, 7])
def test_sinusoidal_refuses_an_odd_width(d: int) -> None:
    with pytest.raises(ValueError, match=rf"d must be even.*got d={d}"):
        sinusoidal(4, d)


@pytest.mark.parametrize(
    ("positions", "error", "phrase"),
    [
        ([0, 1], ValueError, r"shape \(3,\) for x with T=3; got shape \(2,\)"),
        ([[0, 1, 2]], ValueError, r"got shape \(1, 3\)"),
        ([0, np.nan, 2], ValueError, r"positions must be finite; got 1 NaN"),
        ([True, False, True], TypeError, r"positions must be a real numeric array.*bool"),
        (["a", "b", "c"], TypeError, r"positions must be a real numeric array"),
    ],
)
def test_rope_refuses_bad_positions(positions, error, phrase: str) -> None:
    with pytest.raises(error, match=phrase):
        rope(np.ones((3, 4)), positions)


def test_rope_refuses_an_unknown_pairing() -> None:
    with pytest.raises(ValueError, match=r"pairs must be one of \('interleaved', 'halves'\)"):
        rope(np.ones((3, 4)), pairs="neox")


def test_rope_refuses_a_single_vector_without_a_token_axis() -> None:
    with pytest.raises(ValueError, match=r"x must have at least 2 dimensions; got shape \(4,\)"):
        rope(np.ones(4))


@pytest.mark.parametrize(("n", "error"), [(0, ValueError), (-2, ValueError), (2.0, TypeError)])
def test_alibi_refuses_zero_or_non_integer_heads(n, error) -> None:
    with pytest.raises(error, match=r"n_heads"):
        alibi_slopes(n)
    with pytest.raises(error, match=r"n_heads"):
        alibi_bias(n, 3)


def test_alibi_bias_refuses_fewer_keys_than_queries() -> None:
    with pytest.raises(ValueError, match=r"T_k=2 is smaller than T_q=3"):
        alibi_bias(2, 3, 2)


def test_relative_scores_refuses_an_unknown_scheme_and_mismatched_vectors() -> None:
    with pytest.raises(ValueError, match=r"scheme must be one of"):
        relative_scores(np.ones(4), np.ones(4), [0], "T5")
    with pytest.raises(ValueError, match=r"shapes \(4,\) and \(6,\)"):
        relative_scores(np.ones(4), np.ones(6), [0])
    assert set(SCHEMES) == {"none", "sinusoidal", "RoPE", "ALiBi"}


def test_positioned_scores_of_each_scheme() -> None:
    rng = np.random.default_rng(7)
    X, W_Q, W_K = rng.normal(size=(5, 6)), rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    plain = (X @ W_Q) @ (X @ W_K).T / 2.0
    np.testing.assert_allclose(positioned_scores(X, W_Q, W_K, "none"), plain)
    np.testing.assert_allclose(
        positioned_scores(X, W_Q, W_K, "ALiBi", slope=0.25),
        plain - 0.25 * np.abs(np.subtract.outer(np.arange(5), np.arange(5))),
    )
    np.testing.assert_allclose(
        positioned_scores(X, W_Q, W_K, "RoPE"), rope(X @ W_Q) @ rope(X @ W_K).T / 2.0
    )
    Xp = X + sinusoidal(5, 6)
    np.testing.assert_allclose(
        positioned_scores(X, W_Q, W_K, "sinusoidal"), (Xp @ W_Q) @ (Xp @ W_K).T / 2.0
    )


def test_without_positions_the_scores_of_a_shuffled_sentence_are_shuffled() -> None:
    rng = np.random.default_rng(8)
    X, W_Q, W_K = rng.normal(size=(5, 6)), rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    perm = np.array([3, 0, 4, 1, 2])
    for scheme, shuffled_alike in [("none", True), ("RoPE", False), ("ALiBi", False)]:
        s, s_perm = (
            positioned_scores(X, W_Q, W_K, scheme),
            positioned_scores(X[perm], W_Q, W_K, scheme),
        )
        assert np.allclose(s_perm, s[perm][:, perm]) == shuffled_alike, scheme
