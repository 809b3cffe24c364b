"""ch14 (induction heads): every check accepts its right answer and names each typical mistake,
and the right answers are what attnlib.induction computes."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib import exercises
from attnlib.exercises import ch14
from attnlib.exercises.checking import WIDTH, Exercise
from attnlib.induction import pattern_scores

EXERCISES = [getattr(ch14, name) for name in ch14.__all__]


def verdict(exercise: Exercise, answer) -> tuple[str, str]:
    feedback = exercise.evaluate(answer)
    return feedback.status, feedback.message


def assert_wrong(exercise: Exercise, answer, *phrases: str) -> None:
    status, message = verdict(exercise, answer)
    assert status == "incorrect", f"{status}: {message}"
    for phrase in phrases:
        assert phrase in " ".join(message.split()), f"{phrase!r} not in:\n{message}"


# --- the family contract ------------------------------------------------------------------------


def test_ch14_is_registered_with_the_other_chapters() -> None:
    assert "ch14" in exercises.__all__


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_each_exercise_is_named_as_the_student_calls_it_and_prints_short_lines(
    exercise: Exercise, capsys
) -> None:
    assert exercise.name.startswith("ch14.")
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
    wrong = {"ch14.composition": "a"}
    message = verdict(exercise, wrong.get(exercise.name, 99.0))[1]
    assert "Revisit 14_induction_heads." in message and f"Stuck? {exercise.name}.hint()" in message


# --- induction_target ---------------------------------------------------------------------------


def test_induction_target_is_the_position_after_the_earlier_copy_of_the_query_token() -> None:
    seq, i = ch14.SEQUENCE, ch14.QUERY
    earlier = [j for j in range(i) if seq[j] == seq[i]]
    assert len(earlier) == 1  # one earlier copy: the answer is unambiguous
    assert verdict(ch14.induction_target, earlier[0] + 1)[0] == "correct"
    assert seq[earlier[0] + 1] == seq[i + 1]  # and it copies the right next token


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (2, "the same token, V, stood before"),
        (6, "the previous position"),
        (8, "in the future"),
        (7, "the query's own position"),
        (5, "not the value asked for"),
    ],
)
def test_induction_target_names_each_mistake(answer: int, phrase: str) -> None:
    assert_wrong(ch14.induction_target, answer, phrase)


# --- induction_score ----------------------------------------------------------------------------


def test_the_pattern_is_a_causal_attention_matrix() -> None:
    A = ch14.ATTENTION
    np.testing.assert_allclose(A.sum(axis=1), 1.0)
    assert (A[np.triu_indices(6, 1)] == 0).all() and (A >= 0).all()


def test_induction_score_accepts_what_attnlib_induction_computes() -> None:
    expected = pattern_scores(ch14.ATTENTION)["induction"]
    assert verdict(ch14.induction_score, expected)[0] == "correct"
    assert verdict(ch14.induction_score, 0.7)[0] == "correct"  # (0.70 + 0.80 + 0.60) / 3


def test_induction_score_accepts_the_printed_solution() -> None:
    namespace = {"np": np, "ch14": ch14}
    *lines, last = ch14.induction_score._solution.strip().splitlines()
    exec("\n".join(lines), namespace)
    assert verdict(ch14.induction_score, eval(last, namespace))[0] == "correct"


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        ((0.10 + 0.05 + 0.10) / 3, "the earlier copy of the same token"),
        ((0.05 + 0.05 + 0.20) / 3, "the previous position"),
        (
            pattern_scores(ch14.ATTENTION)["previous_token"],
            "That is the previous-token score",
        ),
        (2.1, "their mean"),
        ((0.20 + 0.70 + 0.80 + 0.60) / 4, "row h - 1 = 2"),
        (2.1 / 6, "divided by all 2h = 6 rows"),
        (0.69, "close, but not within the tolerance"),
    ],
)
def test_induction_score_names_each_mistake(answer: float, phrase: str) -> None:
    assert_wrong(ch14.induction_score, answer, phrase)


# --- composition --------------------------------------------------------------------------------


def test_composition_accepts_k_composition_and_explains_the_others() -> None:
    assert verdict(ch14.composition, "b")[0] == "correct"
    assert_wrong(ch14.composition, "a", "embedding already")
    assert_wrong(ch14.composition, "c", "decide what is copied, not where the head looks")
