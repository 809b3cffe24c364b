"""Exercises for notebook 09, positions: ``ch09.rope_pair``, ``ch09.rope_score``,
``ch09.alibi_slopes_8``, ``ch09.alibi_slopes_12``, ``ch09.pairing``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import positions
from .checking import (
    ArrayExercise,
    ChoiceExercise,
    FunctionExercise,
    Wrong,
    as_number,
    call_student,
    fmt,
)

__all__ = ["alibi_slopes_8", "alibi_slopes_12", "pairing", "rope_pair", "rope_score"]

REVISIT = "09_positions"

# --- rotate one pair ----------------------------------------------------------------------------

#: The pair, its position and its frequency (radians per position) in ``ch09.rope_pair``.
PAIR, POSITION, THETA = (1.0, 2.0), 3, 0.5


def _rotated(pair: tuple[float, float], angle: float) -> np.ndarray:
    a, b = pair
    return np.array([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)])


rope_pair = ArrayExercise(
    "ch09.rope_pair",
    _rotated(PAIR, POSITION * THETA),
    what="The rotated pair",
    mistakes=[
        (
            _rotated(PAIR, -POSITION * THETA),
            "You rotated clockwise, by -p theta. RoPE turns the pair (a, b) like the complex"
            " number a + ib times e^{i p theta}: (a cos - b sin, a sin + b cos).",
        ),
        (
            _rotated(PAIR, THETA),
            "You rotated by theta alone: the angle is the position times the frequency,"
            f" p theta = {POSITION} x {THETA}.",
        ),
        (
            _rotated(PAIR, POSITION),
            "You rotated by the position alone: the angle is p theta, the position times the"
            " frequency of this pair.",
        ),
        (
            _rotated(PAIR, np.deg2rad(POSITION * THETA)),
            "You read p theta as degrees: numpy's cos and sin take radians, and so does RoPE.",
        ),
        (
            np.array(PAIR),
            "That is the pair unrotated: turn it by the angle p theta.",
        ),
        (
            _rotated(PAIR[::-1], POSITION * THETA),
            "You rotated (b, a) instead of (a, b): the first coordinate is a.",
        ),
    ],
    hint="The angle is p * theta = 1.5 radians. (a, b) -> (a cos(angle) - b sin(angle),"
    " a sin(angle) + b cos(angle)).",
    solution="""angle = 3 * 0.5                      # position times frequency, in radians
a, b = 1.0, 2.0
[a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)]
# = [-1.9242, 1.1390]; its length is still sqrt(1 + 4) = 2.2361""",
    correct_message="A rotation: the pair keeps its length, sqrt(5), and turned by 1.5 radians.",
    revisit=REVISIT,
)

# --- the score of a rotated pair ----------------------------------------------------------------


def _reference_score(q: np.ndarray, k: np.ndarray, i: int, j: int) -> float:
    return float(positions.rope(q[None], [i])[0] @ positions.rope(k[None], [j])[0])


def _score_cases() -> list[tuple[str, np.ndarray, np.ndarray, int, int]]:
    rng = np.random.default_rng(9)
    q2, k2 = rng.standard_normal(2), rng.standard_normal(2)
    q8, k8 = rng.standard_normal(8), rng.standard_normal(8)
    return [
        ("d = 2, query at i = 3, key at j = 1", q2, k2, 3, 1),
        ("d = 8, query at i = 5, key at j = 2", q8, k8, 5, 2),
        ("d = 8, query at i = 105, key at j = 102 (the same offset, 3)", q8, k8, 105, 102),
        ("d = 8, query at i = 2, key at j = 6 (a key after the query)", q8, k8, 2, 6),
    ]


def _score_mistakes(q: np.ndarray, k: np.ndarray, i: int, j: int) -> list[tuple[float, str]]:
    d = q.size
    rot = positions.rope
    slow = 10000.0 ** (-np.arange(d // 2) / d)  # base ** (-m / d): the 2 forgotten

    def rotated_with(theta: np.ndarray, x: np.ndarray, p: int) -> np.ndarray:
        z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * p * theta)
        out = np.empty(d)
        out[0::2], out[1::2] = z.real, z.imag
        return out

    return [
        (float(q @ k), "your score ignores the positions: rotate q by i and k by j first."),
        (
            float(rot(q[None], [i])[0] @ k),
            "you rotated q only: rotate the key too, by its own position j. Then the score"
            " depends on i - j; with q alone it depends on i.",
        ),
        (
            float(rot(q[None], [i])[0] @ rot(k[None], [-j])[0]),
            "you rotated k by -j: each vector turns by its own position (k by +j), and the"
            " dot product of the two turned vectors keeps only the difference i - j.",
        ),
        (
            float(rot(q[None], [i], pairs="halves")[0] @ rot(k[None], [j], pairs="halves")[0]),
            "you paired coordinate m with m + d/2 (the 'halves' pairing); this exercise uses"
            " the paper's interleaved pairs (2m, 2m + 1).",
        ),
        (
            float(rotated_with(slow, q, i) @ rotated_with(slow, k, j)),
            "your frequencies are base ** (-m / d); RoPE's are base ** (-2m / d), one per pair"
            " m = 0 .. d/2 - 1.",
        ),
    ]


def _grade_score(func: Callable) -> str:
    for case, q, k, i, j in _score_cases():
        result = call_student(func, case, q, k, i, j)
        if result is None:
            raise Wrong(f"On {case}, your function returned None: did you forget `return`?")
        try:
            value = as_number(result)
        except Wrong:
            raise Wrong(
                f"On {case}, your function should return one number (the score); it returned"
                f" {type(result).__name__}."
            ) from None
        expected = _reference_score(q, k, i, j)
        if abs(value - expected) <= 1e-6 * max(1.0, abs(expected)):
            continue
        for wrong, message in _score_mistakes(q, k, i, j):
            if abs(value - wrong) <= 1e-6 * max(1.0, abs(wrong)):
                raise Wrong(f"On {case}, {message}")
        raise Wrong(f"On {case}, your score is {fmt(value)}; the RoPE score is not that.")
    return (
        "Your scores at (5, 2) and at (105, 102) agree: a hundred positions later, the same"
        " offset gives the same score, because the rotations by i and by j leave only i - j."
    )


rope_score = FunctionExercise(
    "ch09.rope_score",
    _grade_score,
    hint="Rotate q at position i and k at position j with interleaved pairs: pair m is"
    " (x[2m], x[2m+1]), turned by the angle p * 10000 ** (-2m / d). Then return their dot"
    " product. (attnlib.positions.rope(x[None], [p])[0] does the rotation, if you want to"
    " write the law first and the rotation second.)",
    solution="""
    def rope_score(q, k, i, j):
        d = q.shape[-1]
        theta = 10000.0 ** (-np.arange(0, d, 2) / d)  # one per pair

        def rotate(x, p):
            a, b = x[0::2], x[1::2]  # interleaved pairs (2m, 2m + 1)
            c, s = np.cos(p * theta), np.sin(p * theta)
            out = np.empty(d)
            out[0::2], out[1::2] = a * c - b * s, a * s + b * c
            return out

        return rotate(q, i) @ rotate(k, j)""",
    revisit=REVISIT,
)

# --- ALiBi's slopes -----------------------------------------------------------------------------

_SLOPE_HINT = (
    "For H a power of two, m_h = 2 ** (-8 h / H) for h = 1 .. H. For other H, the paper"
    " takes the slopes of the largest power of two below H, then every other slope of twice"
    " that many heads (the ones not yet taken), until it has H."
)

alibi_slopes_8 = ArrayExercise(
    "ch09.alibi_slopes_8",
    positions.alibi_slopes(8),
    what="The 8 slopes",
    mistakes=[
        (
            2.0 ** -np.arange(0, 8),
            "Your first slope is 1 = 2 ** 0: h counts from 1 to H, so the first is 2 ** -1.",
        ),
        (
            2.0 ** (-np.arange(1, 9) / 8),
            "Your exponents are -h / H: the rule is 2 ** (-8 h / H), so for H = 8 the slopes"
            " are 2 ** -h.",
        ),
        (
            positions.alibi_slopes(8)[::-1],
            "The right slopes, in reverse order: head 1 gets the largest slope, 1/2.",
        ),
    ],
    hint=_SLOPE_HINT,
    solution="""2.0 ** (-8 * np.arange(1, 9) / 8)   # 1/2, 1/4, ..., 1/256""",
    correct_message="A geometric sequence from 1/2 to 1/256: each head halves the previous one.",
    revisit=REVISIT,
)

_EIGHT = positions.alibi_slopes(8)
_SIXTEEN = positions.alibi_slopes(16)

alibi_slopes_12 = ArrayExercise(
    "ch09.alibi_slopes_12",
    positions.alibi_slopes(12),
    what="The 12 slopes",
    mistakes=[
        (
            2.0 ** (-8 * np.arange(1, 13) / 12),
            "You used 2 ** (-8 h / 12): the paper keeps that rule for powers of two only. For"
            " 12 heads it takes the 8 slopes of 8 heads, then 4 of the 16-head slopes.",
        ),
        (
            np.concatenate([_EIGHT, _SIXTEEN[:4]]),
            "The first 8 are right, but the last 4 repeat two of them (1/2 and 1/4 are among"
            " the first 16-head slopes): take every other 16-head slope, 2 ** -0.5, 2 ** -1.5,"
            " ..., the ones the 8 heads do not have.",
        ),
        (
            np.concatenate([_EIGHT, 2.0 ** -np.arange(9, 13)]),
            "You continued the 8-head sequence past 1/256: the paper stays within 1/2 .. 1/256"
            " and fills in between, with every other 16-head slope.",
        ),
        (
            np.sort(positions.alibi_slopes(12))[::-1],
            "The right 12 numbers, sorted; the paper's order is the 8 slopes of 8 heads first,"
            " then the 4 new ones.",
        ),
    ],
    hint=_SLOPE_HINT + " For 12: the 8 slopes of 8 heads, then 4 of the 16-head slopes.",
    solution="""eight = 2.0 ** -np.arange(1, 9)                  # 1/2 .. 1/256
sixteen = 2.0 ** (-8 * np.arange(1, 17) / 16)       # 2 ** -0.5, 2 ** -1, ...
np.concatenate([eight, sixteen[0::2][:4]])         # + 2 ** -0.5, -1.5, -2.5, -3.5""",
    correct_message="The 8 powers of 1/2, then the 4 half-way slopes 2 ** -0.5 .. 2 ** -3.5.",
    revisit=REVISIT,
)

# --- which pairing? -----------------------------------------------------------------------------

#: The snippet of ``ch09.pairing`` (printed in the notebook).
SNIPPET = """\
def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return np.concatenate([-x2, x1], axis=-1)

freqs = np.concatenate([theta, theta])        # theta: one frequency per pair, (d/2,)
angles = positions[:, None] * freqs[None, :]  # (T, d)
q_rot = q * np.cos(angles) + rotate_half(q) * np.sin(angles)"""

pairing = ChoiceExercise(
    "ch09.pairing",
    {
        "a": (
            "the interleaved pairs (2m, 2m + 1), as in the RoFormer paper",
            "interleaved code takes x[..., 0::2] and x[..., 1::2]; this one slices the first"
            " and the second half.",
        ),
        "b": (
            "the halves (m, m + d/2), as in GPT-NeoX-style code",
            "yes: rotate_half pairs coordinate m with m + d/2 (the new first half is -x2, the"
            " second x1), so (x_m, x_{m+d/2}) turns by theta_m, which freqs repeats twice.",
        ),
        "c": (
            "neither: it is not a rotation",
            "it is one: for each m, (x_m, x_{m+d/2}) becomes (x_m cos - x_{m+d/2} sin,"
            " x_{m+d/2} cos + x_m sin), a rotation of that pair.",
        ),
    },
    "b",
    hint="Which two coordinates does rotate_half mix? Follow x[0]: it meets -x2[0] = -x[d/2].",
    solution="(b), the halves. rotate_half(x) = [-x2, x1], so output coordinate m is"
    " x_m cos - x_{m+d/2} sin and output m + d/2 is x_{m+d/2} cos + x_m sin: the pair"
    " (m, m + d/2), turned by theta_m (freqs repeats theta over both halves). Weights trained"
    " with this code give other scores under the interleaved code unless their columns are"
    " permuted.",
    revisit=REVISIT,
)
