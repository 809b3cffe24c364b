"""ch09 (positions): every check accepts its right answer and names each typical mistake."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from attnlib import exercises
from attnlib.exercises import ch09
from attnlib.exercises.checking import WIDTH, Exercise
from attnlib.positions import alibi_slopes, rope

EXERCISES = [getattr(ch09, name) for name in ch09.__all__]


def verdict(exercise: Exercise, answer) -> tuple[str, str]:
    feedback = exercise.evaluate(answer)
    return feedback.status, feedback.message


def assert_wrong(exercise: Exercise, answer, *phrases: str) -> None:
    status, message = verdict(exercise, answer)
    assert status == "incorrect", f"{status}: {message}"
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} not in:\n{message}"


# --- the family contract ------------------------------------------------------------------------


def test_ch09_is_registered_with_the_other_chapters() -> None:
    assert "ch09" in exercises.__all__


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_each_exercise_is_named_as_the_student_calls_it_and_prints_short_lines(
    exercise: Exercise, capsys
) -> None:
    assert exercise.name.startswith("ch09.")
    exercise.hint()
    exercise.solution()
    out = capsys.readouterr().out
    assert all(len(line) <= WIDTH for line in out.splitlines()), out


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_each_placeholder_is_not_answered_yet(exercise: Exercise) -> None:
    assert verdict(exercise, ...)[0] == "unanswered"
    assert verdict(exercise, None)[0] == "unanswered"


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_each_wrong_answer_sends_back_to_the_chapter(exercise: Exercise) -> None:
    wrong = {"ch09.pairing": "a", "ch09.rope_score": lambda q, k, i, j: 0.0}
    message = verdict(exercise, wrong.get(exercise.name, [0.0]))[1]
    assert "Revisit 09_positions." in message and f"Stuck? {exercise.name}.hint()" in message


# --- rope_pair ----------------------------------------------------------------------------------


def test_rope_pair_accepts_attnlibs_rotation() -> None:
    a, b = ch09.PAIR
    # with d = 2 the one frequency is base ** 0 = 1, so "position" p * theta turns by p * theta
    answer = rope(np.array([[a, b]]), [ch09.POSITION * ch09.THETA])[0]
    assert verdict(ch09.rope_pair, answer)[0] == "correct"
    assert verdict(ch09.rope_pair, [-1.9242, 1.1390])[0] == "correct"  # rounded as printed


@pytest.mark.parametrize(
    ("angle", "phrase"),
    [(-1.5, "clockwise"), (0.5, "theta alone"), (3.0, "position alone"), (0.0, "unrotated")],
)
def test_rope_pair_names_a_wrong_angle(angle: float, phrase: str) -> None:
    a, b = ch09.PAIR
    turned = [a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)]
    assert_wrong(ch09.rope_pair, turned, phrase)


def test_rope_pair_names_degrees_and_a_swapped_pair() -> None:
    angle = np.deg2rad(1.5)
    a, b = ch09.PAIR
    assert_wrong(
        ch09.rope_pair,
        [a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)],
        "degrees",
    )
    swapped = [b * np.cos(1.5) - a * np.sin(1.5), b * np.sin(1.5) + a * np.cos(1.5)]
    assert_wrong(ch09.rope_pair, swapped, "(b, a)")


# --- rope_score ---------------------------------------------------------------------------------


def reference(q, k, i, j):
    return rope(q[None], [i])[0] @ rope(k[None], [j])[0]


def test_rope_score_accepts_attnlibs_rope_and_the_printed_solution() -> None:
    assert verdict(ch09.rope_score, reference)[0] == "correct"
    namespace: dict = {"np": np}
    exec(textwrap.dedent(ch09.rope_score._solution), namespace)  # the solution the student is shown
    assert verdict(ch09.rope_score, namespace["rope_score"])[0] == "correct"


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (lambda q, k, i, j: q @ k, "ignores the positions"),
        (lambda q, k, i, j: rope(q[None], [i])[0] @ k, "you rotated q only"),
        (lambda q, k, i, j: reference(q, k, i, -j), "you rotated k by -j"),
        (
            lambda q, k, i, j: (
                rope(q[None], [i], pairs="halves")[0] @ rope(k[None], [j], pairs="halves")[0]
            ),
            "'halves' pairing",
        ),
        (lambda q, k, i, j: reference(q, k, i, j) + 1.0, "the RoPE score is not that"),
    ],
    ids=["no rotation", "q only", "k by -j", "halves", "other"],
)
def test_rope_score_names_each_mistake(func, phrase: str) -> None:
    assert_wrong(ch09.rope_score, func, phrase)


def test_rope_score_names_the_frequencies_without_the_two() -> None:
    def slow(q, k, i, j):
        d = q.size
        theta = 10000.0 ** (-np.arange(d // 2) / d)

        def turn(x, p):
            z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * p * theta)
            return np.ravel(np.column_stack([z.real, z.imag]))

        return turn(q, i) @ turn(k, j)

    assert_wrong(ch09.rope_score, slow, "base ** (-m / d)")


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (lambda q, k, i, j: None, "forget `return`"),
        (lambda q, k, i, j: np.ones(3), "one number"),
        (lambda q, k, i, j: q[10], "raised IndexError"),
    ],
)
def test_rope_score_reports_a_malformed_function_in_words(func, phrase: str) -> None:
    assert_wrong(ch09.rope_score, func, phrase)


def test_rope_score_placeholder_function_is_not_answered_yet() -> None:
    def placeholder(q, k, i, j):
        raise NotImplementedError

    assert verdict(ch09.rope_score, placeholder)[0] == "unanswered"


# --- alibi slopes -------------------------------------------------------------------------------


def test_alibi_slopes_accept_the_papers_values() -> None:
    assert verdict(ch09.alibi_slopes_8, [1 / 2**h for h in range(1, 9)])[0] == "correct"
    twelve = [1 / 2**h for h in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5]
    assert verdict(ch09.alibi_slopes_12, twelve)[0] == "correct"


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (2.0 ** -np.arange(0, 8), "h counts from 1"),
        (2.0 ** (-np.arange(1, 9) / 8), "-h / H"),
        (alibi_slopes(8)[::-1], "reverse order"),
        (alibi_slopes(8)[:4], "shape (8,)"),
    ],
)
def test_alibi_slopes_8_names_each_mistake(answer, phrase: str) -> None:
    assert_wrong(ch09.alibi_slopes_8, answer, phrase)


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (2.0 ** (-8 * np.arange(1, 13) / 12), "powers of two only"),
        (np.concatenate([alibi_slopes(8), alibi_slopes(16)[:4]]), "every other"),
        (np.concatenate([alibi_slopes(8), 2.0 ** -np.arange(9, 13)]), "past 1/256"),
        (np.sort(alibi_slopes(12))[::-1], "sorted"),
    ],
)
def test_alibi_slopes_12_names_each_mistake(answer, phrase: str) -> None:
    assert_wrong(ch09.alibi_slopes_12, answer, phrase)


# --- pairing ------------------------------------------------------------------------------------


def test_pairing_accepts_halves_and_explains_the_others() -> None:
    assert verdict(ch09.pairing, "b")[0] == "correct"
    assert_wrong(ch09.pairing, "a", "0::2")
    assert_wrong(ch09.pairing, "c", "it is one")


def test_the_snippet_is_the_halves_pairing_when_run() -> None:
    """The snippet, executed, rotates as rope(..., pairs="halves") does: the answer is true."""
    rng = np.random.default_rng(0)
    T, d = 5, 8
    namespace = {
        "np": np,
        "q": rng.normal(size=(T, d)),
        "theta": 10000.0 ** (-np.arange(0, d, 2) / d),
        "positions": np.arange(T),
    }
    exec(ch09.SNIPPET, namespace)
    np.testing.assert_allclose(namespace["q_rot"], rope(namespace["q"], pairs="halves"))
    assert not np.allclose(namespace["q_rot"], rope(namespace["q"]))
