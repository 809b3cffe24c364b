"""attnlib.exercises: every check accepts its right answer and explains each typical mistake."""

from __future__ import annotations

import itertools
import math
import re
import signal
import threading
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlib
from attnlib import causal_mask, examples, softmax
from attnlib import exercises as ex
from attnlib.exercises import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch10, ch11, recall
from attnlib.exercises.checking import (
    WIDTH,
    ArrayExercise,
    ChoiceExercise,
    Exercise,
    NumberExercise,
    SetExercise,
    ShapeExercise,
    StepsExercise,
    complex_text,
    sentence,
    sentences,
    vec,
    wrap,
)
from attnlib.positions import rope

FAST = settings(max_examples=30, deadline=None, database=None)

MODULES = [getattr(ex, m) for m in ex.__all__ if isinstance(getattr(ex, m), ModuleType)]
EXERCISES = [
    (f"{module.__name__.rsplit('.', 1)[1]}.{name}", getattr(module, name))
    for module in MODULES
    for name in module.__all__
    if isinstance(getattr(module, name), Exercise)
]

#: The exercises whose answer is a function the student writes.
FUNCTIONS = {
    "ch04.softmax_jacobian",
    "ch05.stable_softmax",
    "ch06.masked_attention",
    "ch07.split_heads",
    "ch09.rope_score",
    "ch10.online_softmax_step",
    "ch11.softmax_backward",
}


#: A doubled full stop: two dots straight after a word ("one.."), or four and more (an ellipsis,
#: "...", is three; a range "1/2 .. 1/256" stands between spaces).
DOUBLED_STOP = re.compile(r"(?<=[^\s.])\.\.(?!\.)|\.{4,}")


def verdict(exercise: Exercise, answer) -> tuple[str, str]:
    """The status and message of ``exercise`` for ``answer``; every message any test here sees
    is also held to one full stop per sentence."""
    feedback = exercise.evaluate(answer)
    assert not DOUBLED_STOP.search(feedback.message), feedback.message
    return feedback.status, feedback.message


def assert_correct(exercise: Exercise, answer) -> None:
    status, message = verdict(exercise, answer)
    assert status == "correct", message


def assert_wrong(exercise: Exercise, answer, *phrases: str) -> str:
    status, message = verdict(exercise, answer)
    assert status == "incorrect", f"{status}: {message}"
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} not in:\n{message}"
    return message


def assert_unanswered(exercise: Exercise, answer) -> None:
    assert verdict(exercise, answer)[0] == "unanswered"


# --- the machinery ------------------------------------------------------------------------------


def test_every_exercise_is_named_as_the_student_calls_it() -> None:
    assert len(EXERCISES) >= 20
    for qualified, exercise in EXERCISES:
        assert exercise.name == qualified


def test_check_prints_the_verdict_of_evaluate(capsys) -> None:
    ch02.score_variance.check(1.0)
    printed = capsys.readouterr().out
    assert printed == str(ch02.score_variance.evaluate(1.0)) + "\n"
    assert printed.startswith("Not yet. You answered 1,")


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_hint_and_solution_print_short_lines(qualified: str, exercise: Exercise, capsys) -> None:
    exercise.hint()
    exercise.solution()
    out = capsys.readouterr().out
    assert out.startswith("Hint: ") and "\nSolution:\n" in out
    assert max(len(line) for line in out.splitlines()) <= WIDTH


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_the_placeholder_is_not_answered_yet(qualified: str, exercise: Exercise, capsys) -> None:
    def placeholder(*args):
        raise NotImplementedError

    answer = placeholder if qualified in FUNCTIONS else ...
    exercise.check(answer)
    assert capsys.readouterr().out.startswith("Not answered yet. Replace ")


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_none_is_not_answered_yet(qualified: str, exercise: Exercise) -> None:
    assert_unanswered(exercise, None)


def test_a_wrong_answer_points_to_the_hint() -> None:
    assert verdict(ch02.score_variance, 1.0)[1].endswith("Stuck? ch02.score_variance.hint()")


def test_a_verdict_never_prints_the_solution() -> None:
    for answer in (1.0, "x", ..., ch02.score_variance.expected):
        assert "Solution" not in str(ch02.score_variance.evaluate(answer))


@FAST
@given(st.lists(st.text("abxyz(),[]`.", min_size=1, max_size=12), min_size=1, max_size=60))
def test_wrap_keeps_every_word_and_the_line_width(words: list[str]) -> None:
    text = " ".join(words)
    wrapped = wrap(text)
    assert wrapped.split() == text.split()
    assert all(len(line) <= WIDTH for line in wrapped.splitlines())


def test_wrap_never_splits_a_shape() -> None:
    for pad in range(80):  # the groups land at every position of a line
        lines = wrap("x" * pad + " (B, T, d_model) and [0.25, 0.75]" + " y" * 60).splitlines()
        assert any("(B, T, d_model)" in line for line in lines)
        assert any("[0.25, 0.75]" in line for line in lines)


def test_wrap_leaves_indented_code_alone() -> None:
    code = "    " + "x = 1; " * 20
    assert wrap(code) == code.rstrip()


# --- numbers ------------------------------------------------------------------------------------

NUMBER = NumberExercise("t.number", 72.0, hint="h", solution="s", mistakes=[(32.0, "d_k alone")])


@FAST
@given(st.floats(-0.999e-3, 0.999e-3))
def test_a_number_is_accepted_within_the_relative_tolerance(rel: float) -> None:
    assert_correct(NUMBER, 72.0 * (1 + rel))


@FAST
@given(st.floats(0.1, 10.0) | st.floats(-10.0, -0.1))
def test_a_number_off_by_ten_percent_or_more_is_wrong(rel: float) -> None:
    assert_wrong(NUMBER, 72.0 * (1 + rel))


def test_a_number_may_be_an_int_or_a_numpy_scalar() -> None:
    assert_correct(NUMBER, 72)
    assert_correct(NUMBER, np.float32(72.0))
    assert_correct(NUMBER, np.array([72.0]))


def test_a_near_miss_is_told_to_carry_precision() -> None:
    assert_wrong(NUMBER, 71.0, "close, but not within the tolerance")


@pytest.mark.parametrize("answer", [[72.0, 1.0], True, {"v": 72}])
def test_a_number_answer_of_the_wrong_type_says_what_was_expected(answer) -> None:
    assert_wrong(NUMBER, answer, "should be a single number")


@pytest.mark.parametrize("answer", [float("nan"), float("inf")])
def test_a_number_answer_must_be_finite(answer: float) -> None:
    assert_wrong(NUMBER, answer, "finite number")


def test_a_listed_mistake_gets_its_message() -> None:
    assert_wrong(NUMBER, 32, "You answered 32. d_k alone")


# --- arrays -------------------------------------------------------------------------------------

ARRAY = ArrayExercise("t.array", [0.25, 0.75], what="The weights", hint="h", solution="s")


@pytest.mark.parametrize(
    "answer", [[0.25, 0.75], (0.25, 0.75), np.array([0.25, 0.75], dtype=np.float32)]
)
def test_an_array_answer_may_be_a_list_tuple_or_array(answer) -> None:
    assert_correct(ARRAY, answer)


def test_an_array_answer_of_the_wrong_shape_names_both_shapes() -> None:
    assert_wrong(ARRAY, [0.25, 0.5, 0.25], "should have shape (2,); yours has shape (3,)")


def test_a_wrong_array_answer_is_shown_back() -> None:
    assert_wrong(ARRAY, [0.5, 0.5], "Your answer [0.5, 0.5] is not right.")


def test_an_array_answer_with_nan_is_told_so() -> None:
    assert_wrong(ARRAY, [np.nan, 0.75], "should be finite")


@pytest.mark.parametrize("answer", ["0.25, 0.75", [[0.25], [0.75, 1.0]], ["a", "b"]])
def test_an_array_answer_that_is_not_numbers_says_so(answer) -> None:
    assert_wrong(ARRAY, answer, "The weights")


def test_an_array_answer_with_a_placeholder_left_is_not_answered_yet() -> None:
    assert_unanswered(ARRAY, [0.25, ...])


# --- shapes -------------------------------------------------------------------------------------

B, T, d_model, d_k, d_v = 2, 5, 12, 4, 3
RIGHT_SHAPES = {
    "W_Q": (d_model, d_k),
    "Q": (B, T, d_k),
    "K_T": (B, d_k, T),
    "scores": (B, T, T),
    "V": (B, T, d_v),
    "output": (B, T, d_v),
    "W_o": (d_v, d_model),
    "final": (B, T, d_model),
}


def test_projection_shapes_accepts_tuples_or_lists() -> None:
    assert_correct(ch01.projection_shapes, RIGHT_SHAPES)
    assert_correct(ch01.projection_shapes, {k: list(v) for k, v in RIGHT_SHAPES.items()})


@pytest.mark.parametrize(
    ("key", "shape", "phrases"),
    [
        ("W_Q", (d_k, d_model), ["you gave (4, 12) = (d_k, d_model)", "d_model rows"]),
        ("Q", (T, d_k), ["the leading B axis is missing"]),
        ("K_T", (d_k, T, B), ["That is K.T", "np.swapaxes(K, -1, -2)"]),
        ("scores", (B, T, d_k), ["one score per (query, key) pair"]),
        ("scores", (B, d_k, d_k), ["K^T Q would give (d_k, d_k)"]),
        ("output", (B, T, d_k), ["the values' width d_v"]),
        ("W_o", (d_model, d_v), ["back to the model width"]),
        ("final", (T, B, d_model), ["the right sizes, in the wrong order"]),
        ("V", (B, T, 7), ["you gave (2, 5, 7) = (B, T, 7)"]),
    ],
)
def test_projection_shapes_explains_a_wrong_shape_in_symbols(key, shape, phrases) -> None:
    assert_wrong(ch01.projection_shapes, {**RIGHT_SHAPES, key: shape}, *phrases)


def test_projection_shapes_checks_what_is_filled_in_and_lists_the_rest() -> None:
    partly = dict.fromkeys(RIGHT_SHAPES, ...) | {"W_Q": (d_model, d_k)}
    assert_wrong(ch01.projection_shapes, partly, "are right. Still to fill in: Q, K_T")
    assert_wrong(ch01.projection_shapes, partly | {"W_Q": (d_k, d_model)}, "W_Q should have")


def test_projection_shapes_with_every_entry_a_placeholder_is_not_answered_yet() -> None:
    assert_unanswered(ch01.projection_shapes, dict.fromkeys(RIGHT_SHAPES, ...))


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        ((B, T, d_k), "should be a dict of shapes"),
        ({"W_Q": (d_model, d_k)}, "needs an entry for Q, K_T"),
        ({**RIGHT_SHAPES, "Q": np.zeros((B, T, d_k))}, "give a shape, not an array"),
        ({**RIGHT_SHAPES, "Q": "B, T, d_k"}, "a shape is a tuple of whole numbers"),
        ({**RIGHT_SHAPES, "Q": (2.0, 5.0, 4.0)}, "a shape is a tuple of whole numbers"),
    ],
)
def test_a_malformed_shape_answer_says_what_was_expected(answer, phrase: str) -> None:
    assert_wrong(ch01.projection_shapes, answer, phrase)


def test_shape_sizes_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="distinct"):
        ShapeExercise("t.s", {"T": 4, "d_k": 4}, {"Q": ("T", "d_k")}, hint="h", solution="s")


# --- choices ------------------------------------------------------------------------------------

CHOICE = ChoiceExercise(
    "t.choice", {"a": ("A.", "no, because x."), "b": ("B.", "yes, because y.")}, "b",
    hint="h", solution="s",
)  # fmt: skip


@pytest.mark.parametrize("answer", ["b", "B", " b ", "(b)"])
def test_a_choice_accepts_the_letter_in_any_usual_spelling(answer: str) -> None:
    assert verdict(CHOICE, answer) == ("correct", "Yes, because y.")


def test_a_wrong_choice_gets_the_reason_of_the_option_picked() -> None:
    assert_wrong(CHOICE, "a", "(a) is not it: no, because x.")


@pytest.mark.parametrize(("answer", "phrase"), [("c", "pick one of 'a', 'b'"), (1, "letter")])
def test_a_choice_that_is_no_option_lists_the_options(answer, phrase: str) -> None:
    assert_wrong(CHOICE, answer, phrase)


def test_a_choice_answer_must_be_one_of_the_options() -> None:
    with pytest.raises(ValueError, match="not one of the options"):
        ChoiceExercise("t.c", {"a": ("A", "x")}, "b", hint="h", solution="s")


# --- ch02 ---------------------------------------------------------------------------------------

MU_X, SD_X, MU_Y, SD_Y = ch02.MU_X, ch02.SD_X, ch02.MU_Y, ch02.SD_Y


def test_product_variance_accepts_the_general_formula() -> None:
    assert_correct(
        ch02.product_variance,
        MU_X**2 * SD_Y**2 + MU_Y**2 * SD_X**2 + SD_X**2 * SD_Y**2,
    )


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (SD_X**2 * SD_Y**2, "only when both means are zero"),
        ((SD_X**2 + MU_X**2) * (SD_Y**2 + MU_Y**2), "subtracts (E[XY])^2"),
        (MU_X**2 * SD_Y**2 + MU_Y**2 * SD_X**2, "Var(X) Var(Y), is missing"),
        (SD_X**2 + SD_Y**2, "not for a product"),
    ],
)
def test_product_variance_explains_typical_mistakes(answer: float, phrase: str) -> None:
    assert_wrong(ch02.product_variance, answer, phrase)


DK, SQ, SK = ch02.D_K, ch02.SIGMA_Q, ch02.SIGMA_K


def test_score_variance_accepts_d_k_sigma_q2_sigma_k2() -> None:
    assert_correct(ch02.score_variance, DK * SQ**2 * SK**2)


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (DK, "d_k alone"),
        (DK * SQ * SK, "the variances multiply"),
        (np.sqrt(DK) * SQ * SK, "the question asks for the variance"),
        (SQ**2 * SK**2, "the variance of one term"),
        (DK * (SQ**2 + SK**2), "they add only across the d_k terms"),
    ],
)
def test_score_variance_explains_typical_mistakes(answer: float, phrase: str) -> None:
    assert_wrong(ch02.score_variance, answer, phrase)


# --- ch03 ---------------------------------------------------------------------------------------

Q_ORDER = examples.ORDER_X @ examples.ORDER_W_Q
K_ORDER = examples.ORDER_X @ examples.ORDER_W_K
V_ORDER = examples.ORDER_X @ examples.ORDER_W_V
RAW_LATE = K_ORDER @ Q_ORDER[2]


def test_late_weights_accepts_the_four_decimal_weights() -> None:
    assert_correct(ch03.late_weights, np.round(softmax(RAW_LATE / 2), 4).tolist())


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (softmax(RAW_LATE), "divide the scores by sqrt(d_k) = 2"),
        (softmax(RAW_LATE / 4), "You divided the scores by d_k = 4"),
        (RAW_LATE / 2, "the weights are their softmax"),
        (RAW_LATE, "Those are the raw scores"),
        (softmax(K_ORDER @ Q_ORDER[3] / 2), "the query of 'it'"),
        (softmax(Q_ORDER @ K_ORDER.T / 2, axis=0)[:, 2], "softmax taken down the columns"),
        ([0.5, 0.5, 0.5, 0.5], "yours sum to 2.0000"),
    ],
)
def test_late_weights_explains_typical_mistakes(answer, phrase: str) -> None:
    assert_wrong(ch03.late_weights, answer, phrase)


# --- ch04 ---------------------------------------------------------------------------------------


def test_softmax_jacobian_accepts_diag_minus_outer() -> None:
    assert_correct(ch04.softmax_jacobian, lambda p: np.diag(p) - np.outer(p, p))


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (lambda p: np.diag(p * (1 - p)), "only the diagonal"),
        (lambda p: p * (1 - p), "the Jacobian is an (n, n) matrix"),
        (lambda p: np.diag(p), "the -p p^T part is missing"),
        (lambda p: -np.outer(p, p), "the diag(p) part is missing"),
        (lambda p: np.diag(p) + np.outer(p, p), "the sign of p p^T is wrong"),
        (lambda p: np.outer(p, p) - np.diag(p), "opposite sign"),
        (lambda p: np.eye(p.size), "differs from diag(p) - p p^T"),
    ],
)
def test_softmax_jacobian_explains_typical_mistakes(func, phrase: str) -> None:
    assert_wrong(ch04.softmax_jacobian, func, phrase)


def test_a_student_function_that_raises_gets_the_case_and_the_error_not_a_traceback() -> None:
    def broken(p):
        return p.foo

    message = assert_wrong(ch04.softmax_jacobian, broken, "On p = softmax([1, 2, 3])")
    assert "raised AttributeError: 'numpy.ndarray' object has no attribute 'foo'" in message
    assert "Traceback" not in message


def test_a_student_function_that_returns_nothing_is_asked_about_return() -> None:
    def forgot(p):
        np.diag(p) - np.outer(p, p)

    assert_wrong(ch04.softmax_jacobian, forgot, "returned None: did you forget `return`?")


def test_passing_the_result_instead_of_the_function_is_explained() -> None:
    assert_wrong(ch04.softmax_jacobian, np.eye(3), "Pass your function itself")


# --- ch05 ---------------------------------------------------------------------------------------


def stable(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_stable_softmax_accepts_max_subtraction() -> None:
    assert_correct(ch05.stable_softmax, stable)


def test_stable_softmax_accepts_a_function_that_changes_its_input_in_place() -> None:
    def in_place(x):
        x -= x.max(axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=-1, keepdims=True)
        return x

    assert_correct(ch05.stable_softmax, in_place)


def naive(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def min_shift(x):
    e = np.exp(x - x.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def no_keepdims(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


def columns(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def whole_sum(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def axis_one(x):
    axis = 1 if x.ndim > 1 else 0
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize(
    ("func", "phrases"),
    [
        (naive, ["On the large scores x = [1000, 1001]", "[nan, nan]", "subtract each row's"
                 " maximum"]),
        (min_shift, ["On the wide spread x = [0, 1000]", "subtract each row's maximum"]),
        (no_keepdims, ["could not be broadcast", "keepdims=True"]),
        (columns, ["normalised each column (axis 0)", "axis=-1"]),
        (global_max, ["the maximum of the whole array", "x.max(axis=-1, keepdims=True)"]),
        (whole_sum, ["your whole result sums to 1, not each row"]),
        (axis_one, ["ran along axis 1", "use axis=-1 so that batches work"]),
        (lambda x: np.ones_like(x) / x.shape[-1], ["differ from softmax(x)"]),
    ],
)  # fmt: skip
def test_stable_softmax_explains_typical_mistakes(func, phrases: list[str]) -> None:
    assert_wrong(ch05.stable_softmax, func, *phrases)


def test_stable_softmax_names_underflow_on_very_negative_scores() -> None:
    assert_wrong(
        ch05.stable_softmax,
        lambda x: stable(x) if x.max() > -500 else naive(x),
        "[-20000, -20001]",
        "every e^x underflows to 0",
    )


# --- ch06 ---------------------------------------------------------------------------------------


def rows(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scaled(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def masked(Q, K, V, mask):
    w = rows(np.where(mask, scaled(Q, K), -np.inf))
    return w @ V, w


def test_masked_attention_accepts_minus_inf_before_the_softmax() -> None:
    assert_correct(ch06.masked_attention, masked)


def after_softmax(Q, K, V, mask):
    w = np.where(mask, rows(scaled(Q, K)), 0.0)
    return w @ V, w


def wrong_way_round(Q, K, V, mask):
    w = rows(np.where(mask, -np.inf, scaled(Q, K)))
    return w @ V, w


def over_queries(Q, K, V, mask):
    w = rows(np.where(mask, scaled(Q, K), -np.inf), axis=-2)
    return w @ V, w


def plain_transpose(Q, K, V, mask):
    w = rows(np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf))
    return w @ V, w


def zero_not_inf(Q, K, V, mask):
    w = rows(np.where(mask, scaled(Q, K), 0.0))
    return w @ V, w


def no_mask(Q, K, V, mask):
    w = rows(scaled(Q, K))
    return w @ V, w


def unscaled(Q, K, V, mask):
    w = rows(np.where(mask, Q @ np.swapaxes(K, -1, -2), -np.inf))
    return w @ V, w


def no_max_shift(Q, K, V, mask):
    e = np.exp(np.where(mask, scaled(Q, K), -np.inf))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w


@pytest.mark.parametrize(
    ("func", "phrases"),
    [
        (after_softmax, ["applied the mask after the softmax", "no longer sum to 1"]),
        (wrong_way_round, ["wrong way round", "True means 'may attend'"]),
        (over_queries, ["not 1: the softmax ran along axis -2", "axis=-1"]),
        (plain_transpose, ["On a batch of 2 sequences", "np.swapaxes(K, -1, -2): K.T reverses"]),
        (zero_not_inf, ["a finite fill value (0, -100, ...) still gets weight"]),
        (no_mask, ["ignore the mask"]),
        (unscaled, ["not scaled"]),
        (no_max_shift, ["with large scores", "NaN or inf", "subtract each row's maximum"]),
        (
            lambda Q, K, V, mask: masked(Q, K, V, mask)[0],
            ["return 2 things, (output, weights), as a tuple"],
        ),
        (lambda Q, K, V, mask: (V, masked(Q, K, V, mask)[1]), ["output is not weights @ V"]),
    ],
)
def test_masked_attention_explains_typical_mistakes(func, phrases: list[str]) -> None:
    assert_wrong(ch06.masked_attention, func, *phrases)


def test_kv_cache_mask_accepts_bools_or_ones_and_zeros() -> None:
    right = np.arange(5)[None, :] <= np.arange(2)[:, None] + 3
    assert_correct(ch06.kv_cache_mask, right)
    assert_correct(ch06.kv_cache_mask, right.astype(int).tolist())


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (np.tril(np.ones((2, 5), dtype=bool)), "aligned top-left"),
        (~causal_mask(2, 5), "True and False are the wrong way round"),
        (np.triu(np.ones((2, 5), dtype=bool), k=3), "keeps the future"),
        (causal_mask(5), "should have shape (2, 5)"),
        ([[1, 1, 1, 1, 0], [1, 1, 1, 1, 2]], "True/False (or 1/0)"),
    ],
)
def test_kv_cache_mask_explains_typical_mistakes(answer, phrase: str) -> None:
    assert_wrong(ch06.kv_cache_mask, answer, phrase)


# --- ch07 ---------------------------------------------------------------------------------------


def split(x, n_heads):
    T, width = x.shape
    return x.reshape(T, n_heads, width // n_heads).transpose(1, 0, 2)


def test_split_heads_accepts_reshape_then_transpose() -> None:
    assert_correct(ch07.split_heads, split)


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (lambda x, n: x.reshape(x.shape[0], n, -1), "put the head axis first"),
        (lambda x, n: x.reshape(n, x.shape[0], -1), "reshaped x straight to"),
        (lambda x, n: x.reshape(x.shape[0], -1, n).transpose(2, 0, 1), "every n_heads-th"),
        (lambda x, n: split(x, n)[:, ::-1], "head 0 should be columns 0 to 1"),
        (lambda x, n: x[None], "expected (2, 3, 2)"),
    ],
)
def test_split_heads_explains_typical_mistakes(func, phrase: str) -> None:
    assert_wrong(ch07.split_heads, func, phrase)


CACHE = 2 * ch08.LAYERS * ch08.N_KV_HEADS * ch08.D_HEAD * ch08.T * ch08.BYTES


def test_kv_cache_bytes_accepts_the_grouped_query_cache() -> None:
    assert_correct(ch08.kv_cache_bytes, CACHE)


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (CACHE * ch08.N_HEADS // ch08.N_KV_HEADS, "cached all 24 query heads"),
        (CACHE // 2, "keys AND values"),
        (CACHE // ch08.BYTES, "counted numbers, not bytes"),
        (CACHE // ch08.LAYERS, "That is one layer"),
        (CACHE / 2**10, "in KiB"),
        (CACHE / 2**20, "in MiB"),
        (CACHE / 2**30, "in GiB"),
        (CACHE / 1e6, "in MB (10^6 bytes)"),
    ],
)
def test_kv_cache_bytes_explains_typical_mistakes(answer: float, phrase: str) -> None:
    assert_wrong(ch08.kv_cache_bytes, answer, phrase)


def test_kv_cache_bytes_names_every_mistake_of_a_combination() -> None:
    all_heads_and_numbers = CACHE * ch08.N_HEADS // ch08.N_KV_HEADS // ch08.BYTES
    assert_wrong(
        ch08.kv_cache_bytes, all_heads_and_numbers, "2 mistakes", "all 24 query heads",
        "counted numbers, not bytes",
    )  # fmt: skip


def test_a_large_wrong_number_is_printed_with_thousands_separators() -> None:
    assert_wrong(ch08.kv_cache_bytes, CACHE // 2, f"You answered {CACHE // 2:,}.")


# --- ch10 ---------------------------------------------------------------------------------------


def step(m, l, acc, s, v):
    m_new = max(m, s.max())
    p = np.exp(s - m_new)
    r = np.exp(m - m_new)
    return m_new, r * l + p.sum(), r * acc + p @ v


def test_online_softmax_step_accepts_the_rescaled_update() -> None:
    status, message = verdict(ch10.online_softmax_step, step)
    assert status == "correct"
    assert "equals softmax(all scores) @ values" in message


def make_step(m_new=None, rescale_l=True, rescale_acc=True, flip=False, shift=True, norm=False):
    def student(m, l, acc, s, v):
        new_m = max(m, s.max()) if m_new is None else m_new(m, s)
        p = np.exp(s - new_m) if shift else np.exp(s)
        r = np.exp(new_m - m) if flip else np.exp(m - new_m)
        new_l = (r if rescale_l else 1.0) * l + p.sum()
        new_acc = (r if rescale_acc else 1.0) * acc + p @ v
        return new_m, new_l, new_acc / new_l if norm else new_acc

    return student


@pytest.mark.parametrize(
    ("func", "phrases"),
    [
        (make_step(rescale_acc=False), ["a block whose top score is above m",
                                        "acc was not rescaled", "exp(m - m_new)"]),
        (make_step(rescale_l=False), ["l was not rescaled"]),
        (make_step(rescale_l=False, rescale_acc=False), ["the old l and acc were not rescaled"]),
        (make_step(flip=True), ["On the first block", "exp(m_new - m)", "inf * 0 = NaN"]),
        (make_step(shift=False), ["the block's weights must be p = exp(s - m_new)"]),
        (make_step(norm=True), ["keep acc unnormalised"]),
        (make_step(m_new=lambda m, s: s.max()), ["m_new is the larger of m and the new"]),
        (lambda m, l, acc, s, v: step(m, l, acc, s, v)[:2], ["(m, l, acc), as a tuple"]),
        (lambda m, l, acc, s, v: step(m, l, acc, s, v)[:2] + (acc,), ["should be ("]),
    ],
)  # fmt: skip
def test_online_softmax_step_explains_typical_mistakes(func, phrases: list[str]) -> None:
    assert_wrong(ch10.online_softmax_step, func, *phrases)


def test_online_softmax_step_names_overflow_on_large_scores() -> None:
    def overflows(m, l, acc, s, v):
        if s.max() > 500:
            return step(m, l, acc, s - s + np.inf, v)
        return step(m, l, acc, s, v)

    assert_wrong(ch10.online_softmax_step, overflows, "large scores", "exp(s - m_new)")


# --- ch11 ---------------------------------------------------------------------------------------


def backward(p, g):
    return p * (g - (p * g).sum(axis=-1, keepdims=True))


def test_softmax_backward_accepts_p_times_g_minus_its_mean() -> None:
    assert_correct(ch11.softmax_backward, backward)


@pytest.mark.parametrize(
    ("func", "phrase"),
    [
        (lambda p, g: p * g, "the -sum_j p_j g_j term is missing"),
        (lambda p, g: g - (p * g).sum(axis=-1, keepdims=True), "multiply by p"),
        (lambda p, g: -backward(p, g), "the sign is flipped"),
        (lambda p, g: p * (g - (p * g).sum()), "summed p * g over the whole array"),
        (lambda p, g: p * (g - (p * g).sum(axis=-1)), "keepdims=True"),
        (lambda p, g: np.zeros_like(p), "your dL/ds is [0, 0, 0]"),
    ],
)
def test_softmax_backward_explains_typical_mistakes(func, phrase: str) -> None:
    assert_wrong(ch11.softmax_backward, func, phrase)


# --- recall (notebook 12) -----------------------------------------------------------------------

STEPS_RIGHT = {
    "E[q_m k_m]": 0,
    "Var(q_m k_m)": 1,
    "Var(q . k)": 36,
    "std(q . k)": 6,
    "Var(q . k / sqrt(d_k))": 1,
}
RECALL_RIGHT = {
    "projection_shapes": {
        "X": (6, 16), "W_Q": (16, 8), "W_K": (16, 8), "W_V": (16, 2),
        "Q": (6, 8), "K": (6, 8), "V": (6, 2),
    },
    "projection_parameters": 12 * 4 + 12 * 4 + 12 * 3,
    "score_variance_steps": STEPS_RIGHT,
    "late_output": softmax(RAW_LATE / 2) @ V_ORDER,
    "equal_keys": ["late", "it"],
    "saturated_gradient": np.exp(-30.0),
    "scale_denominator": np.sqrt(recall.D_K) * recall.SIGMA_Q * recall.SIGMA_K,
    "product_variance": recall.VAR_X * recall.VAR_Y,
    "head_shapes": {"split": (8, 10, 64), "scores": (8, 10, 10), "merged": (10, 512)},
    "head_scale": 8,
    "gqa_cache": 2 * recall.LAYERS * recall.N_KV_HEADS * recall.D_HEAD * recall.T * recall.BYTES,
    "decode_keys": [1, 1, 1, 1, 1, 0],
    "mask_after_softmax": float(softmax(np.array([1.0, 2.0, 3.0]))[:2].sum()),
    "word_order": [0, 3, 2, 1],
    "tile_scores": 128 * 128,
    "loss_gradients": {"cross-entropy": 0.98, "through the Jacobian": 0.98 * 0.01},
    "overflow_and_spread": float(softmax(np.array([996.0, 1000.0, 1004.0]) / 8)[-1]),
    "rope_offset": 8,
}  # fmt: skip

RECALL_WRONG = [
    ("projection_shapes", {**RECALL_RIGHT["projection_shapes"], "V": (6, 8)}, "own width d_v"),
    ("projection_shapes", {**RECALL_RIGHT["projection_shapes"], "W_Q": (8, 16)}, "wrong way"),
    ("projection_parameters", 132 + 60, "numbers of X too"),
    ("projection_parameters", 3 * 48, "gave W_V the width d_k"),
    ("projection_parameters", 48, "That is one matrix"),
    ("projection_parameters", 84, "as if Q and K shared W"),
    ("score_variance_steps", {**STEPS_RIGHT, "E[q_m k_m]": 1}, "both means are 0"),
    ("score_variance_steps", {**STEPS_RIGHT, "Var(q_m k_m)": 2}, "Variances add for a sum"),
    ("score_variance_steps", {**STEPS_RIGHT, "Var(q . k)": 6}, "standard deviation"),
    ("score_variance_steps", {**STEPS_RIGHT, "std(q . k)": 36}, "its square root"),
    ("score_variance_steps", {**STEPS_RIGHT, "Var(q . k / sqrt(d_k))": 6}, "by c^2, not c"),
    ("score_variance_steps", {**STEPS_RIGHT, "std(q . k)": ...}, "Still to fill in: 'std"),
    ("late_output", softmax(RAW_LATE) @ V_ORDER, "uses the raw scores"),
    ("late_output", softmax(RAW_LATE / 4) @ V_ORDER, "divides the scores by d_k = 4"),
    ("late_output", softmax(K_ORDER @ Q_ORDER[3] / 2) @ V_ORDER, "the query of 'it'"),
    ("late_output", softmax(RAW_LATE / 2), "the output is weights @ V"),
    ("equal_keys", ["Order", "was"], "Their keys differ"),
    ("equal_keys", [], "the same vector"),
    ("equal_keys", ["order", "was", "late", "it"], "only equal keys give equal scores"),
    ("equal_keys", ["late", "cat"], "'cat' is not one of the items"),
    ("saturated_gradient", 0.25, "two equal scores"),
    ("saturated_gradient", np.exp(30), "That is e^30"),
    ("saturated_gradient", 0, "Not exactly 0"),
    ("scale_denominator", np.sqrt(recall.D_K), "exact only when sigma_q sigma_k = 1"),
    ("scale_denominator", recall.D_K * recall.SIGMA_Q**2 * recall.SIGMA_K**2, "the variance"),
    ("scale_denominator", np.sqrt(recall.D_K) * recall.SIGMA_Q**2 * recall.SIGMA_K**2,
     "multiplied by the variances"),
    ("product_variance", recall.VAR_X + recall.VAR_Y, "Variances add for a sum"),
    ("product_variance", np.sqrt(recall.VAR_X * recall.VAR_Y), "standard deviation"),
    ("product_variance", 0, "is the mean"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "split": (10, 8, 64)}, "transpose it"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "split": (8, 10, 512)}, "d_head = d_model"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "scores": (8, 10, 64)}, "(T, T)"),
    ("head_scale", np.sqrt(512), "sqrt(d_model)"),
    ("head_scale", 64, "d_head itself"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] * 5, "all 40 query heads"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // 2, "keys AND values"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // 4, "counted numbers, not bytes"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] * 5 // 8, "3 mistakes"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // recall.LAYERS, "That is one layer"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] / 2**20, "in MiB"),
    ("decode_keys", [1, 1, 1, 1, 0, 0], "Off by one"),
    ("decode_keys", [1, 1, 1, 1, 1, 1], "does not exist yet"),
    ("decode_keys", [0, 0, 0, 0, 1, 0], "not only the newest"),
    ("mask_after_softmax", 1.0, "before the softmax"),
    ("mask_after_softmax", 0.6652, "the weight that was zeroed"),
    ("word_order", [0, 1, 2, 3], "Each word keeps its own output"),
    ("tile_scores", 4096**2, "the full T x T score matrix"),
    ("tile_scores", 128 * 4096, "a whole strip"),
    ("tile_scores", 128 * 128 * 4, "counts bytes"),
    ("loss_gradients", {"cross-entropy": -0.99, "through the Jacobian": ...}, "s_1"),
    ("loss_gradients", {"cross-entropy": 0.98, "through the Jacobian": 0.98}, "skips the"),
    ("loss_gradients", {"cross-entropy": 0.98, "through the Jacobian": -0.0098}, "sign"),
    ("overflow_and_spread", float(softmax(np.array([996.0, 1000.0, 1004.0]))[-1]), "raw scores"),
    ("overflow_and_spread", float(softmax(np.array([996.0, 1000.0, 1004.0]) / 64)[-1]), "d_k = 64"),
    ("overflow_and_spread", 0.186, "first key"),
    ("overflow_and_spread", 0.307, "middle key"),
    ("overflow_and_spread", 1 / 3, "does not make the scores equal"),
    ("rope_offset", 3, "absolute position"),
    ("rope_offset", 4, "offset m - n = 4 itself"),
    ("rope_offset", 16, "4 after the query"),
]  # fmt: skip


def test_recall_has_a_right_answer_for_every_question() -> None:
    assert sorted(RECALL_RIGHT) == sorted(n for n in recall.__all__ if n != "NOTEBOOKS")


def test_recall_asks_for_recall_not_recognition() -> None:
    assert not any(isinstance(getattr(recall, n), ChoiceExercise) for n in RECALL_RIGHT)


def test_recall_accepts_pencil_and_paper_precision_for_the_late_output() -> None:
    assert_correct(recall.late_output, np.round(RECALL_RIGHT["late_output"], 2))


def test_recall_accepts_the_late_output_from_weights_carried_to_three_decimals() -> None:
    weights = np.round(softmax(RAW_LATE / 2), 3)  # as question 4 asks: three decimals
    assert_correct(recall.late_output, np.round(weights @ V_ORDER, 2))


@pytest.mark.parametrize("name", sorted(RECALL_RIGHT))
def test_recall_accepts_the_right_answer(name: str) -> None:
    assert_correct(getattr(recall, name), RECALL_RIGHT[name])


@pytest.mark.parametrize(("name", "answer", "phrase"), RECALL_WRONG)
def test_recall_explains_a_typical_mistake_and_names_the_notebook(name, answer, phrase) -> None:
    exercise = getattr(recall, name)
    message = assert_wrong(exercise, answer, phrase)
    stem = re.search(r"Revisit notebook (\d\d_\w+) \(", message)
    assert stem, message
    assert stem.group(1) in recall.NOTEBOOKS
    assert f'"{recall.NOTEBOOKS[stem.group(1)]}"' in message


def test_every_recall_question_is_wrong_somewhere_in_the_tests() -> None:
    assert {name for name, _, _ in RECALL_WRONG} == set(RECALL_RIGHT)


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_every_verdict_line_is_short(qualified: str, exercise: Exercise) -> None:
    answers = [None, "?"] + [a for n, a, _ in RECALL_WRONG if f"recall.{n}" == qualified]
    for answer in answers:
        lines = str(exercise.evaluate(answer)).splitlines()
        assert max(len(line) for line in lines) <= WIDTH


# --- the exercises inside the notebooks ---------------------------------------------------------

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WITH_EXERCISES = sorted(
    p for p in NOTEBOOKS.glob("*.ipynb") if "attnlib.exercises" in p.read_text(encoding="utf-8")
)


SOLUTION_FIRST_LINE = "# solution (click to expand)"
CALLED = re.compile(r"\b(ch\d\d|recall)\.(\w+)\.(check|check_solution)\(")


def check_cells(path: Path) -> list[tuple[bool, str, str, str]]:
    """(hidden, first source line, exercise called, printed text) of every code cell that
    calls an exercise's .check(...) or .check_solution(...)."""
    cells = nbformat.read(path, as_version=4).cells
    found = []
    for cell in cells:
        called = CALLED.search(cell.source) if cell.cell_type == "code" else None
        if called:
            jupyter = cell.metadata.get("jupyter", {})
            found.append(
                (
                    bool(jupyter.get("source_hidden")) and bool(jupyter.get("outputs_hidden")),
                    cell.source.splitlines()[0],
                    f"{called.group(1)}.{called.group(2)}",
                    "".join(out.get("text", "") for out in cell.outputs),
                )
            )
    return found


def test_notebook_12_has_exercises() -> None:
    assert NOTEBOOKS / "12_active_recall.ipynb" in WITH_EXERCISES


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=[p.stem for p in WITH_EXERCISES])
def test_exercise_cells_are_unanswered_and_their_hidden_solutions_pass(path: Path) -> None:
    cells = check_cells(path)
    assert cells, f"{path.name} imports attnlib.exercises but checks nothing"
    assert len(cells) % 2 == 0, f"{path.name}: an exercise cell has no solution cell"
    for (hidden, _, called, text), (next_hidden, _, next_called, next_text) in zip(
        cells[::2], cells[1::2]
    ):
        assert not hidden and "Not answered yet." in text, text
        assert next_hidden and next_called == called and next_text.startswith("Correct!\n")


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=[p.stem for p in WITH_EXERCISES])
def test_a_collapsed_solution_shows_a_comment_and_prints_only_its_verdict(path: Path) -> None:
    exercises = dict(EXERCISES)
    for _, first_line, called, text in check_cells(path)[1::2]:
        assert first_line == SOLUTION_FIRST_LINE, (path.name, first_line)
        verdict_text = wrap(f"Correct!\n{exercises[called].correct_message}".rstrip())
        assert text == verdict_text + "\n", f"{path.name}, {called} prints more:\n{text}"


def test_exercise_cells_call_check_and_solution_cells_check_solution() -> None:
    for path in WITH_EXERCISES:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.source.startswith(SOLUTION_FIRST_LINE):
                assert ".check(" not in cell.source, (path.name, cell.source)
            else:
                assert ".check_solution(" not in cell.source, (path.name, cell.source)


def answer_texts(exercise: Exercise) -> list[str]:
    """How the right answer of ``exercise`` would look if a message printed it."""
    if isinstance(exercise, ArrayExercise) and exercise.expected.dtype != bool:
        return [vec(exercise.expected), vec(exercise.expected, 2)]
    if isinstance(exercise, NumberExercise):
        values = [exercise.expected]
    elif isinstance(exercise, StepsExercise):
        values = [s.expected for s in exercise.steps.values() if s.expected not in (0, 1)]
    else:
        values = []
    return [
        text for v in values for text in (f"{v:,.0f}" if v == int(v) else f"{v:.3g}", f"{v:.4g}")
    ]


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_the_praise_for_a_right_answer_does_not_state_the_answer(qualified, exercise) -> None:
    for text in answer_texts(exercise):
        assert text not in exercise.correct_message, (qualified, text)


@pytest.mark.parametrize(
    ("exercise", "reference"),
    [
        (ch04.softmax_jacobian, attnlib.softmax_jacobian),
        (ch05.stable_softmax, attnlib.softmax),
        (ch06.masked_attention, lambda Q, K, V, mask: attnlib.scaled_dot_product_attention(
            Q, K, V, mask=mask)),
        (ch07.split_heads, attnlib.split_heads),
        (ch11.softmax_backward, lambda p, g: (attnlib.softmax_jacobian(p) @ g[..., None])[..., 0]),
    ],
    ids=["softmax_jacobian", "stable_softmax", "masked_attention", "split_heads", "backward"],
)  # fmt: skip
def test_every_coding_check_accepts_attnlibs_own_function(exercise, reference) -> None:
    assert_correct(exercise, reference)


# --- every number exercise: no combination of its mistakes lands on the right answer -------------


def number_exercises() -> list[tuple[str, NumberExercise]]:
    """Every NumberExercise, the steps of every StepsExercise included."""
    found = []
    for qualified, exercise in EXERCISES:
        if isinstance(exercise, NumberExercise):
            found.append((qualified, exercise))
        elif isinstance(exercise, StepsExercise):
            found += [(f"{qualified}[{k!r}]", step) for k, step in exercise.steps.items()]
    return found


NUMBERS = number_exercises()


def mistake_combinations(exercise: NumberExercise) -> list[tuple[float, int]]:
    """(value, number of mistakes) of every combination: at most one factor per group, and at
    most one listed wrong value (a wrong formula), taken as its ratio to the right answer."""
    groups = [[f for f, _ in group] for group in exercise.factors]
    if exercise.expected != 0 and exercise.mistakes:  # one wrong formula, compounded by factors
        groups.append([v / exercise.expected for v, _ in exercise.mistakes])
    values = []
    for pick in itertools.product(*[[None, *g] for g in groups]):
        chosen = [f for f in pick if f is not None]
        if chosen:
            values.append((exercise.expected * math.prod(chosen), len(chosen)))
    if exercise.expected == 0:
        values += [(v, 1) for v, _ in exercise.mistakes]
    return values


@pytest.mark.parametrize(("qualified", "exercise"), NUMBERS, ids=[q for q, _ in NUMBERS])
def test_no_combination_of_listed_mistakes_is_accepted_as_right(qualified, exercise) -> None:
    combos = mistake_combinations(exercise)
    assert combos, f"{qualified} lists no mistakes"
    for value, n in combos:
        assert not exercise.close_to(value, exercise.expected), (qualified, value, n)
        assert exercise.evaluate(value).status == "incorrect", (qualified, value, n)


@pytest.mark.parametrize(("qualified", "exercise"), NUMBERS, ids=[q for q, _ in NUMBERS])
def test_every_combination_of_compounding_mistakes_gets_its_own_diagnosis(
    qualified, exercise
) -> None:
    combos = exercise.combinations()
    values = [exercise.expected * math.prod(f for f, _ in c) for c in combos]
    values += [v for v, _ in exercise.mistakes]
    for (i, a), (j, b) in itertools.combinations(enumerate(values), 2):
        assert not exercise.close_to(a, b), (qualified, i, j, a, b)
    for combo, value in zip(combos, values):
        message = verdict(exercise, value)[1]
        assert all(m in message for _, m in combo), (qualified, combo)


def test_the_enumeration_covers_every_number_exercise() -> None:
    counts = {q: len(mistake_combinations(e)) for q, e in NUMBERS}
    assert len(counts) >= 20 and min(counts.values()) >= 1
    print(f"\n{sum(counts.values())} combinations over {len(counts)} number exercises:", counts)


# --- inputs that break each listed mistake ------------------------------------------------------


def mean_shift(x):
    e = np.exp(x - x.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def naive_long_double(x):
    e = np.exp(np.asarray(x, dtype=np.longdouble))
    return e / e.sum(axis=-1, keepdims=True)


def mean_shift_long_double(x):
    return mean_shift(np.asarray(x, dtype=np.longdouble))


@pytest.mark.parametrize("func", [mean_shift, naive_long_double, mean_shift_long_double])
def test_stable_softmax_refuses_every_shift_but_the_maximum(func) -> None:
    assert_wrong(ch05.stable_softmax, func, "NaN or inf", "subtract each row's maximum")


def fill(value):
    def student(Q, K, V, mask):
        w = rows(np.where(mask, scaled(Q, K), value))
        return w @ V, w

    return student


@pytest.mark.parametrize("value", [-100.0, -50.0])
def test_masked_attention_refuses_a_finite_fill_on_every_run(value: float) -> None:
    message = assert_wrong(ch06.masked_attention, fill(value))
    assert "every allowed score near -170" in message


def test_masked_attention_accepts_a_fill_below_every_score() -> None:
    assert_correct(ch06.masked_attention, fill(-1e30))


def test_online_softmax_step_refuses_a_step_that_recomputes_from_blocks_it_kept() -> None:
    seen_s, seen_v = [], []

    def recompute(m, l, acc, s, v):  # keeps every block and ignores the state it is handed
        seen_s.append(s)
        seen_v.append(v)
        all_s, all_v = np.concatenate(seen_s), np.concatenate(seen_v)
        m_new = all_s.max()
        p = np.exp(all_s - m_new)
        return m_new, p.sum(), p @ all_v

    assert_wrong(ch10.online_softmax_step, recompute, "a state from 6 earlier scores")


def test_online_softmax_step_names_a_step_that_ignores_the_old_state() -> None:
    def block_only(m, l, acc, s, v):
        p = np.exp(s - s.max())
        return s.max(), p.sum(), p @ v

    assert_wrong(ch10.online_softmax_step, block_only, "the block's alone")


# --- results in every reasonable form, and none that is wrong -----------------------------------

REFERENCES = {
    "ch04.softmax_jacobian": attnlib.softmax_jacobian,
    "ch05.stable_softmax": attnlib.softmax,
    "ch06.masked_attention": lambda Q, K, V, mask: attnlib.scaled_dot_product_attention(
        Q, K, V, mask=mask
    ),
    "ch07.split_heads": attnlib.split_heads,
    "ch09.rope_score": lambda q, k, i, j: float(rope(q[None], [i])[0] @ rope(k[None], [j])[0]),
    "ch10.online_softmax_step": step,
    "ch11.softmax_backward": backward,
}


def converted(func, convert):
    def student(*args):
        result = func(*args)
        if isinstance(result, tuple):
            return tuple(convert(r) for r in result)
        return convert(result)

    return student


def float32(r):
    return np.float32(r) if np.ndim(r) == 0 else np.asarray(r, dtype=np.float32)


def test_every_function_exercise_has_a_reference_here() -> None:
    assert set(REFERENCES) == FUNCTIONS


@pytest.mark.parametrize("qualified", sorted(REFERENCES))
def test_a_float32_result_is_held_to_float32_precision(qualified: str) -> None:
    assert_correct(dict(EXERCISES)[qualified], converted(REFERENCES[qualified], float32))


@pytest.mark.parametrize("qualified", sorted(REFERENCES))
def test_a_complex_result_is_refused(qualified: str) -> None:
    as_complex = converted(REFERENCES[qualified], lambda r: np.asarray(r) + 0j)
    assert_wrong(dict(EXERCISES)[qualified], as_complex, "complex numbers")


def test_a_result_as_nested_lists_is_accepted() -> None:
    assert_correct(ch07.split_heads, lambda x, n: split(x, n).tolist())
    assert_correct(ch06.masked_attention, lambda *a: [r.tolist() for r in masked(*a)])


class DuckTensor:
    """What the checker sees of a PyTorch tensor that requires grad: .detach().cpu().numpy()."""

    def __init__(self, value) -> None:
        self.value = np.asarray(value)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.value

    def __array__(self, *args, **kwargs):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad.")

    def __float__(self):
        raise RuntimeError("a Tensor with grad cannot be read directly")


@pytest.mark.parametrize(
    "answer",
    [Decimal("72"), Fraction(144, 2), DuckTensor(72.0), np.float32(72), np.array(72.0)],
    ids=["Decimal", "Fraction", "0-d tensor", "float32", "0-d array"],
)
def test_a_number_answer_may_take_any_exact_or_tensor_form(answer) -> None:
    assert_correct(NUMBER, answer)


def test_a_real_torch_tensor_requiring_grad_is_read() -> None:
    torch = pytest.importorskip("torch")
    assert_correct(NUMBER, torch.tensor(72.0, requires_grad=True))
    assert_correct(ARRAY, torch.tensor([0.25, 0.75], requires_grad=True))


@pytest.mark.parametrize(
    "answer",
    [
        [Fraction(1, 4), Fraction(3, 4)],
        [Decimal("0.25"), Decimal("0.75")],
        DuckTensor([0.25, 0.75]),
    ],
    ids=["Fractions", "Decimals", "tensor"],
)
def test_an_array_answer_may_hold_exact_numbers_or_be_a_tensor(answer) -> None:
    assert_correct(ARRAY, answer)


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (10**400, "larger than any float"),
        (72 + 0j, "real number"),
        ("72", "without quotes"),
        (Decimal("1e400"), "larger than any float"),
    ],
)
def test_a_number_answer_out_of_range_or_form_is_explained(answer, phrase: str) -> None:
    assert_wrong(NUMBER, answer, phrase)


def test_an_array_answer_of_complex_numbers_is_refused() -> None:
    assert_wrong(ARRAY, [0.25 + 1j, 0.75], "complex numbers")


def test_an_array_answer_with_nan_reads_as_english() -> None:
    assert_wrong(ARRAY, [np.nan, 0.75], "The weights should be finite; yours has NaN")


def test_a_shape_given_as_quoted_text_is_told_to_drop_the_quotes() -> None:
    assert_wrong(ch01.projection_shapes, {**RIGHT_SHAPES, "Q": "(B, T, d_k)"}, "without quotes")


@pytest.fixture
def numpy_raises_on_everything():
    old = np.seterr(all="raise")
    yield
    np.seterr(**old)


@pytest.mark.parametrize("qualified", sorted(REFERENCES))
def test_a_notebook_that_made_numpy_raise_does_not_break_the_checker(
    qualified: str, numpy_raises_on_everything
) -> None:
    assert_correct(dict(EXERCISES)[qualified], REFERENCES[qualified])
    assert_wrong(dict(EXERCISES)[qualified], lambda *a: np.full(3, np.nan))


# --- the checker under stress -------------------------------------------------------------------


def endless(*args):
    while True:
        pass


def test_an_endless_loop_is_stopped_after_the_time_limit(monkeypatch) -> None:
    monkeypatch.setattr(ch05.stable_softmax, "time_limit", 0.2)
    message = assert_wrong(ch05.stable_softmax, endless, "still running after 0.2 s")
    assert "passes" not in message  # grading stops: no other case is tried


def test_an_endless_loop_is_stopped_outside_the_main_thread_too(monkeypatch) -> None:
    monkeypatch.setattr(ch05.stable_softmax, "time_limit", 0.2)
    box = {}
    worker = threading.Thread(target=lambda: box.update(v=verdict(ch05.stable_softmax, endless)))
    worker.start()
    worker.join(5)
    assert box["v"][0] == "incorrect" and "still running after 0.2 s" in box["v"][1]


def test_an_endless_loop_is_stopped_where_there_is_no_sigalrm_as_on_windows(monkeypatch) -> None:
    monkeypatch.setattr(ch05.stable_softmax, "time_limit", 0.2)
    monkeypatch.delattr(signal, "setitimer")  # Windows' signal module has none
    before = set(threading.enumerate())
    message = assert_wrong(ch05.stable_softmax, endless, "still running after 0.2 s")
    assert "passes" not in message
    assert [t for t in threading.enumerate() if t not in before] == []  # its thread was ended


def test_an_endless_loop_stopped_outside_the_main_thread_does_not_run_on(monkeypatch) -> None:
    """The helper thread that ran it is ended, not abandoned: a loop left spinning would take a
    core and the GIL for the rest of the kernel's life (it slowed this suite's later tests 6x)."""
    monkeypatch.setattr(ch05.stable_softmax, "time_limit", 0.2)
    before = set(threading.enumerate())
    worker = threading.Thread(target=lambda: verdict(ch05.stable_softmax, endless))
    worker.start()
    worker.join(5)
    assert [t for t in threading.enumerate() if t not in before] == []


def test_an_endless_loop_that_catches_exceptions_is_stopped_too(monkeypatch) -> None:
    def stubborn(x):
        while True:
            try:
                while True:
                    pass
            except Exception:
                pass

    monkeypatch.setattr(ch05.stable_softmax, "time_limit", 0.2)
    assert_wrong(ch05.stable_softmax, stubborn, "still running")


@pytest.mark.parametrize(("qualified", "exercise"), EXERCISES, ids=[q for q, _ in EXERCISES])
def test_check_without_an_answer_says_how_to_call_it(qualified, exercise, capsys) -> None:
    exercise.check()
    out = " ".join(capsys.readouterr().out.split())
    assert (
        out
        == f"Not answered yet. Pass your answer to the check, like {qualified}.check(your_answer)."
    )


def test_a_function_unfinished_for_some_cases_is_wrong_not_unanswered() -> None:
    def partial(x):
        if x.ndim > 1:
            raise NotImplementedError
        return stable(x)

    assert_wrong(ch05.stable_softmax, partial, "raised NotImplementedError", "passes 6 of 9")


def test_a_wrong_function_is_told_how_many_cases_it_passes() -> None:
    message = assert_wrong(ch05.stable_softmax, naive)
    assert "It passes 3 of 9 cases; it fails on the large scores x = [1000, 1001];" in message
    assert "; and 3 more." in message


def test_a_function_that_changes_its_input_in_place_gets_a_note() -> None:
    def in_place(x):
        x -= x.max(axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=-1, keepdims=True)
        return x

    status, message = verdict(ch05.stable_softmax, in_place)
    assert status == "correct" and "changed its input arrays in place" in message


def test_a_rounded_array_answer_is_told_to_carry_more_decimals() -> None:
    rounded = np.round(softmax(RAW_LATE / 2), 2)
    assert_wrong(ch03.late_weights, rounded, "carry more decimals")


def test_an_all_nan_softmax_is_not_blamed_on_underflow() -> None:
    message = assert_wrong(ch05.stable_softmax, lambda x: np.full_like(x, np.nan))
    assert "underflow" not in message.split("\n")[0]


def test_a_two_axis_einsum_is_told_about_einsum_not_k_transpose() -> None:
    def einsum_2d(Q, K, V, mask):
        w = rows(np.where(mask, np.einsum("qd,kd->qk", Q, K) / np.sqrt(Q.shape[-1]), -np.inf))
        return w @ V, w

    message = assert_wrong(ch06.masked_attention, einsum_2d, "one sequence at a time", "'...")
    assert "K.T reverses" not in message


def test_a_one_row_backward_is_told_to_handle_a_batch_not_to_keep_dims() -> None:
    def one_row(p, g):
        return (np.diag(p) - np.outer(p, p)) @ g

    message = assert_wrong(ch11.softmax_backward, one_row, "one row at a time")
    assert "Keep the summed axis" not in message


def test_masked_attention_names_d_k_instead_of_its_square_root() -> None:
    def by_d_k(Q, K, V, mask):
        w = rows(np.where(mask, Q @ np.swapaxes(K, -1, -2) / Q.shape[-1], -np.inf))
        return w @ V, w

    assert_wrong(ch06.masked_attention, by_d_k, "divided the scores by d_k = 3")


def test_kv_cache_mask_names_an_off_by_one() -> None:
    assert_wrong(ch06.kv_cache_mask, np.tril(np.ones((2, 5), dtype=bool), k=2), "Off by one")


# --- progress -----------------------------------------------------------------------------------


def fresh(exercise: Exercise, monkeypatch) -> Exercise:
    monkeypatch.setattr(exercise, "record", type(exercise.record)())
    return exercise


def test_progress_lists_what_was_answered_hinted_or_revealed(monkeypatch, capsys) -> None:
    for _, exercise in EXERCISES:
        fresh(exercise, monkeypatch)
    ch02.score_variance.check(1.0)
    ch02.score_variance.check(ch02.score_variance.expected)
    ch02.product_variance.hint()
    ch02.product_variance.solution()
    capsys.readouterr()
    ex.progress()
    assert capsys.readouterr().out == (
        "ch02\n"
        "  product_variance  not answered (hint seen, solution shown)\n"
        "  score_variance    answered correctly (2 checks)\n"
    )


def test_progress_does_not_count_the_hidden_solution_cells(monkeypatch, capsys) -> None:
    for _, exercise in EXERCISES:
        fresh(exercise, monkeypatch)
    ch02.score_variance.check_solution(ch02.score_variance.expected)
    ch02.score_variance.check(...)
    capsys.readouterr()
    ex.progress()
    assert capsys.readouterr().out.startswith("No exercise checked")


# --- one full stop per sentence, whatever message a sentence is joined to -----------------------


@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        (("On x, it raised ValueError: bad shape.", "Keep the axis."), "On x, it raised"
         " ValueError: bad shape. Keep the axis."),
        (("no full stop", "Keep the axis."), "no full stop. Keep the axis."),
        (("Is it?", "no stop"), "Is it? no stop."),
        (("(a remark in brackets.)", "Next."), "(a remark in brackets.) Next."),
        (("you gave [1, 2, ...", "Next"), "you gave [1, 2, ... Next."),
        (("ends in a space. ", "", "Next."), "ends in a space. Next."),
    ],
)  # fmt: skip
def test_sentences_end_each_part_with_exactly_one_full_stop(parts, joined: str) -> None:
    assert sentences(*parts) == joined
    assert not DOUBLED_STOP.search(joined)


def test_a_truncated_answer_is_not_given_a_fourth_dot() -> None:
    assert sentence("you gave 'aaaa...") == "you gave 'aaaa..."
    assert_wrong(NUMBER, "x" * 200, "not text")  # verdict() checks the dots


def listed_mistake_answers(exercise: Exercise) -> list:
    """An answer for every mistake ``exercise`` lists (every combination, for numbers)."""
    if isinstance(exercise, NumberExercise):
        return [value for value, _ in mistake_combinations(exercise)]
    if isinstance(exercise, StepsExercise):
        right = {key: step.expected for key, step in exercise.steps.items()}
        return [
            {**right, key: value}
            for key, step in exercise.steps.items()
            for value in listed_mistake_answers(step)
        ]
    if isinstance(exercise, (ArrayExercise, SetExercise)):
        return [
            value if isinstance(exercise, ArrayExercise) else set(value)
            for value, _ in exercise.mistakes
        ]
    if isinstance(exercise, ChoiceExercise):
        return [letter for letter in exercise.options if letter != exercise.answer]
    if isinstance(exercise, ShapeExercise):
        right = {key: exercise.numeric(symbols) for key, symbols in exercise.expected.items()}
        return [
            {**right, key: tuple(exercise.sizes.get(s) or int(s) for s in given)}
            for key, notes in exercise.notes.items()
            for given in notes
        ]
    return []  # a function exercise: its mistakes are the student functions tested above


LISTED = [(q, e) for q, e in EXERCISES if listed_mistake_answers(e)]


@pytest.mark.parametrize(("qualified", "exercise"), LISTED, ids=[q for q, _ in LISTED])
def test_no_listed_mistake_gets_a_doubled_full_stop(qualified: str, exercise: Exercise) -> None:
    for answer in listed_mistake_answers(exercise):
        status, message = verdict(exercise, answer)  # verdict() checks the dots
        assert status == "incorrect", (qualified, answer, message)


def test_the_listed_mistakes_cover_every_exercise_that_is_not_a_function() -> None:
    assert {q for q, _ in LISTED} == {q for q, _ in EXERCISES} - FUNCTIONS


#: The number of dimensions of one row (or one sequence) of each function's first argument.
ONE_ROW = {"ch06.masked_attention": 2, "ch07.split_heads": 2}


@pytest.mark.parametrize("error", [ValueError, NotImplementedError])
@pytest.mark.parametrize("qualified", sorted(REFERENCES))
def test_a_function_whose_own_error_ends_a_sentence_gets_no_doubled_full_stop(
    qualified: str, error: type[Exception]
) -> None:
    def one_row_only(*args):
        if np.ndim(args[0]) > ONE_ROW.get(qualified, 1):
            raise error("This function takes one row at a time.")
        return REFERENCES[qualified](*args)

    def never(*args):
        raise ValueError("Nothing is supported yet.")

    exercise = dict(EXERCISES)[qualified]
    status, message = verdict(exercise, one_row_only)  # verdict() checks the dots
    if qualified in ("ch05.stable_softmax", "ch06.masked_attention", "ch11.softmax_backward"):
        assert status == "incorrect", message
        assert re.search(r"[a-z]\. Your function works on one (row|sequence) at a time", message)
    assert verdict(exercise, never)[0] == "incorrect"


@pytest.mark.parametrize(
    ("z", "text"),
    [
        (0.09 + 0j, "0.09+0j"),
        (1 - 2.5j, "1-2.5j"),
        (complex(0.5, -0.0), "0.5-0j"),
        (-3j, "-0-3j"),
        (0.25 + 1e-9j, "0.25+1e-09j"),
    ],
)
def test_a_complex_number_is_shown_as_a_student_writes_it(z: complex, text: str) -> None:
    assert complex_text(z) == text


def test_a_complex_result_is_shown_without_brackets() -> None:
    message = assert_wrong(
        ch05.stable_softmax, lambda x: softmax(x) + 0j, "complex numbers (like 0.09+0j)"
    )
    assert "[" not in message.split("like", 1)[1].split(")", 1)[0], message
