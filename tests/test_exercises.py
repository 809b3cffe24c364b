"""attnlib.exercises: every check accepts its right answer and explains each typical mistake."""

from __future__ import annotations

import re
from pathlib import Path

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
    ShapeExercise,
    wrap,
)

FAST = settings(max_examples=30, deadline=None, database=None)

EXERCISES = [
    (f"{module.__name__.rsplit('.', 1)[1]}.{name}", getattr(module, name))
    for module in (getattr(ex, m) for m in ex.__all__)
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


def verdict(exercise: Exercise, answer) -> tuple[str, str]:
    feedback = exercise.evaluate(answer)
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


@pytest.mark.parametrize("answer", ["72", [72.0, 1.0], True, {"v": 72}])
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
    assert_wrong(ARRAY, [np.nan, 0.75], "contains NaN")


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
        "[-1000, -1001]",
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
        (plain_transpose, ["On a batch of 2 sequences", "np.swapaxes(K, -1, -2), not K.T"]),
        (zero_not_inf, ["masked scores set to 0 still get weight"]),
        (no_mask, ["ignore the mask"]),
        (unscaled, ["not scaled"]),
        (no_max_shift, ["with large scores", "NaN or inf", "subtract each row's maximum"]),
        (lambda Q, K, V, mask: masked(Q, K, V, mask)[0], ["return two arrays"]),
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
        (CACHE * ch08.N_HEADS // ch08.N_KV_HEADS, "the cache of plain multi-head attention"),
        (CACHE // 2, "keys AND values"),
        (CACHE // ch08.BYTES, "counts values, not bytes"),
        (CACHE // ch08.LAYERS, "That is one layer"),
        (CACHE / 2**20, "in MiB"),
        (CACHE / 2**30, "in GiB"),
    ],
)
def test_kv_cache_bytes_explains_typical_mistakes(answer: float, phrase: str) -> None:
    assert_wrong(ch08.kv_cache_bytes, answer, phrase)


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
        (make_step(rescale_acc=False), ["On a second block whose top score is above m",
                                        "acc was not rescaled", "exp(m - m_new)"]),
        (make_step(rescale_l=False), ["l was not rescaled"]),
        (make_step(rescale_l=False, rescale_acc=False), ["the old l and acc were not rescaled"]),
        (make_step(flip=True), ["On the first block", "exp(m_new - m)", "inf * 0 = NaN"]),
        (make_step(shift=False), ["the block's weights must be p = exp(s - m_new)"]),
        (make_step(norm=True), ["keep acc unnormalised"]),
        (make_step(m_new=lambda m, s: s.max()), ["m_new is the larger of m and the new"]),
        (lambda m, l, acc, s, v: step(m, l, acc, s, v)[:2], ["as a tuple (m, l, acc)"]),
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

RECALL_RIGHT = {
    "projection_shapes": {
        "X": (6, 16), "W_Q": (16, 8), "W_K": (16, 8), "W_V": (16, 2),
        "Q": (6, 8), "K": (6, 8), "V": (6, 2),
    },
    "three_projections": "b",
    "scale_denominator": np.sqrt(recall.D_K) * recall.SIGMA_Q * recall.SIGMA_K,
    "late_output": softmax(RAW_LATE / 2) @ V_ORDER,
    "equal_keys": "b",
    "unscaled_training": "b",
    "product_variance": recall.VAR_X * recall.VAR_Y,
    "head_shapes": {"split": (8, 10, 64), "scores": (8, 10, 10), "merged": (10, 512)},
    "gqa_cache": 2 * recall.LAYERS * recall.N_KV_HEADS * recall.D_HEAD * recall.T * recall.BYTES,
    "rescale_factor": np.exp(recall.M_OLD - recall.M_NEW),
    "mask_after_softmax": "b",
    "backward": recall.P * (recall.G - recall.P @ recall.G),
}  # fmt: skip

RECALL_WRONG = [
    ("projection_shapes", {**RECALL_RIGHT["projection_shapes"], "V": (6, 8)}, "own width d_v"),
    ("projection_shapes", {**RECALL_RIGHT["projection_shapes"], "W_Q": (8, 16)}, "wrong way"),
    ("three_projections", "a", "there is only one input"),
    ("three_projections", "c", "one projection fits the shapes fine"),
    ("three_projections", "d", "there are T keys whatever the projections"),
    ("scale_denominator", np.sqrt(recall.D_K), "exact only when sigma_q sigma_k = 1"),
    ("scale_denominator", recall.D_K * recall.SIGMA_Q**2 * recall.SIGMA_K**2, "the variance"),
    ("scale_denominator", np.sqrt(recall.D_K) * recall.SIGMA_Q**2 * recall.SIGMA_K**2,
     "multiplied by the variances"),
    ("late_output", softmax(RAW_LATE) @ V_ORDER, "uses the raw scores"),
    ("late_output", softmax(K_ORDER @ Q_ORDER[3] / 2) @ V_ORDER, "the query of 'it'"),
    ("late_output", softmax(RAW_LATE / 2), "the output is weights @ V"),
    ("equal_keys", "a", "their keys differ"),
    ("equal_keys", "c", "two equal keys give equal scores"),
    ("equal_keys", "d", "only equal scores give equal weights"),
    ("unscaled_training", "a", "nothing overflows at any d_k"),
    ("unscaled_training", "c", "the loss need not be large"),
    ("unscaled_training", "d", "it never grows with the scores"),
    ("product_variance", recall.VAR_X + recall.VAR_Y, "Variances add for a sum"),
    ("product_variance", np.sqrt(recall.VAR_X * recall.VAR_Y), "standard deviation"),
    ("product_variance", 0, "is the mean"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "split": (10, 8, 64)}, "transpose it"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "split": (8, 10, 512)}, "d_head = d_model"),
    ("head_shapes", {**RECALL_RIGHT["head_shapes"], "scores": (8, 10, 64)}, "(T, T)"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] * 4, "plain multi-head attention"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // 2, "Half the right size"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // 4, "A quarter of the right size"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] // recall.LAYERS, "That is one layer"),
    ("gqa_cache", RECALL_RIGHT["gqa_cache"] / 2**20, "in MiB"),
    ("rescale_factor", np.exp(recall.M_NEW - recall.M_OLD), "upside down"),
    ("rescale_factor", 1.0, "Without a rescale"),
    ("rescale_factor", recall.M_OLD - recall.M_NEW, "That is the exponent"),
    ("mask_after_softmax", "a", "the rows no longer sum to 1"),
    ("mask_after_softmax", "c", "cannot make NaN"),
    ("mask_after_softmax", "d", "the upper triangle is the future"),
    ("backward", recall.P * recall.G, "term is missing"),
    ("backward", recall.G - recall.P @ recall.G, "Multiply by p"),
    ("backward", -RECALL_RIGHT["backward"], "sign is flipped"),
]  # fmt: skip


def test_recall_has_a_right_answer_for_every_question() -> None:
    assert sorted(RECALL_RIGHT) == sorted(n for n in recall.__all__ if n != "NOTEBOOKS")


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

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
WITH_EXERCISES = sorted(
    p for p in NOTEBOOKS.glob("*.ipynb") if "attnlib.exercises" in p.read_text(encoding="utf-8")
)


def check_cells(path: Path) -> list[tuple[bool, str]]:
    """(hidden, printed text) of every code cell that calls an exercise's .check(...)."""
    cells = nbformat.read(path, as_version=4).cells
    return [
        (
            bool(cell.metadata.get("jupyter", {}).get("source_hidden")),
            "".join(out.get("text", "") for out in cell.outputs),
        )
        for cell in cells
        if cell.cell_type == "code" and ".check(" in cell.source
    ]


def test_notebook_10_has_exercises() -> None:
    assert NOTEBOOKS / "12_active_recall.ipynb" in WITH_EXERCISES


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=[p.stem for p in WITH_EXERCISES])
def test_exercise_cells_are_unanswered_and_their_hidden_solutions_pass(
    path: Path,
) -> None:
    cells = check_cells(path)
    assert cells, f"{path.name} imports attnlib.exercises but checks nothing"
    for (hidden, text), (next_hidden, next_text) in zip(cells[::2], cells[1::2]):
        assert not hidden and "Not answered yet." in text, text
        assert next_hidden and "Correct!" in next_text, next_text
    assert len(cells) % 2 == 0, f"{path.name}: an exercise cell has no solution cell"


def test_notebook_10_lists_the_options_of_every_choice_question() -> None:
    markdown = " ".join(
        cell.source
        for cell in nbformat.read(NOTEBOOKS / "12_active_recall.ipynb", as_version=4).cells
        if cell.cell_type == "markdown"
    )
    markdown = " ".join(markdown.split())
    for name in recall.__all__:
        exercise = getattr(recall, name)
        if isinstance(exercise, ChoiceExercise):
            for letter, (text, _) in exercise.options.items():
                opening = " ".join(text.split()[:4])
                assert f"**({letter})** {opening}" in markdown, (name, letter)


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
