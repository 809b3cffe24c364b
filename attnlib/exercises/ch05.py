"""Exercises for notebook 05, the overflow misconception: ``ch05.stable_softmax``.

The cases break each typical mistake on purpose: spreads far beyond the exponent limits of
float64 (709) and of the 80-bit ``np.longdouble`` (11356) catch a shift by the row mean or
minimum and a shift-free softmax computed in long double; batches catch a wrong axis.
"""

from __future__ import annotations

import numpy as np

from .. import softmax
from .checking import FunctionExercise, StudentRun, Wrong, close, result_array, sentences, vec

__all__ = ["stable_softmax"]

_ROW_MAX = (
    "subtract each row's maximum before np.exp, `x - x.max(axis=-1, keepdims=True)`: the largest"
    " exponent is then e^0 = 1 and the denominator is at least 1."
)


def _cases() -> list[tuple[str, tuple]]:
    rng = np.random.default_rng(5)
    return [
        ("x = [1, 2, 3]", (np.array([1.0, 2.0, 3.0]),)),
        ("the large scores x = [1000, 1001]", (np.array([1000.0, 1001.0]),)),
        ("the huge scores x = [20000, 20001]", (np.array([20000.0, 20001.0]),)),
        ("the very negative scores x = [-20000, -20001]", (np.array([-20000.0, -20001.0]),)),
        ("the wide spread x = [0, 1000]", (np.array([0.0, 1000.0]),)),
        ("the very wide spread x = [0, 0, 0, 30000]", (np.array([0.0, 0.0, 0.0, 30000.0]),)),
        ("a (3, 4) array of scores, one row per query", (rng.standard_normal((3, 4)),)),
        (
            "the rows [[0, 1], [1000, 1001]], far apart",
            (np.array([[0.0, 1.0], [1000.0, 1001.0]]),),
        ),
        ("a batch of shape (2, 3, 4)", (rng.standard_normal((2, 3, 4)),)),
    ]


def _not_finite(x: np.ndarray) -> str:
    """Why a softmax of ``x`` came out NaN or inf, in words."""
    if x.min() < -745 and x.max() < -745:
        return "every e^x underflows to 0, and 0 / 0 is NaN"
    if x.max() > 709 and x.max() - x.min() < 10:
        return "e^x overflows to inf for these large scores, and inf / inf is NaN"
    if x.max() - x.min() > 709:
        return (
            "after your shift some exponent is still far above 709, where e^x overflows; a"
            " shift by the row's mean or minimum leaves exponents up to the spread of the row"
        )
    return "on ordinary scores, so the arithmetic itself goes wrong somewhere"


def _np_shape(shape: tuple[int, ...]) -> str:
    """A shape as numpy's messages print it: ``(3,)``, ``(3,4)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _works_row_by_row(run: StudentRun, case: str, x: np.ndarray) -> bool:
    """True if the student's function gives each row's softmax when called on the rows alone."""
    try:
        return all(close(run(case, row), softmax(row)) for row in x.reshape(-1, x.shape[-1]))
    except Wrong:
        return False


def _check(run: StudentRun, case: str, x: np.ndarray) -> None:
    try:
        result = run(case, x)
    except Wrong as wrong:
        keepdims_lost = f"{_np_shape(x.shape)} {_np_shape(x.shape[:-1])}"
        if "broadcast" in str(wrong) and keepdims_lost in str(wrong):
            raise Wrong(
                sentences(
                    str(wrong),
                    "Keep the summed axis, e.sum(axis=-1, keepdims=True), so that each row is"
                    " divided by its own sum.",
                )
            ) from None
        if x.ndim > 1 and _works_row_by_row(run, case, x):
            raise Wrong(
                sentences(
                    str(wrong),
                    "Your function works on one row at a time but not on an array of rows:"
                    " reduce along the last axis, with axis=-1 and keepdims=True.",
                )
            ) from None
        raise
    w = result_array(result, case, x.shape)
    if close(w, softmax(x)):
        return
    if not np.isfinite(w).all():
        if x.ndim == 2 and x[1, 0] == 1000 and not np.isfinite(w[0]).all():
            raise Wrong(
                f"On {case}, the first row came out as {vec(w[0])}: you subtracted the maximum"
                f" of the whole array, so the first row's exponents e^-1000 underflow to 0."
                f" Subtract each row's own maximum: x.max(axis=-1, keepdims=True)."
            )
        raise Wrong(
            f"On {case}, your function returned {vec(w)} (NaN or inf: {_not_finite(x)})."
            f" Fix: {_ROW_MAX}"
        )
    sums = w.sum(axis=-1)
    if x.ndim > 1 and close(w, softmax(x, axis=0)):
        raise Wrong(
            f"On {case}, each row of your result sums to {vec(sums)}, not 1: your"
            f" softmax normalised each column (axis 0). It must run along the last axis,"
            f" axis=-1: one row of weights per query."
        )
    if x.ndim > 1 and np.isclose(w.sum(), 1):
        raise Wrong(
            f"On {case}, your whole result sums to 1, not each row: sum each row with"
            f" e.sum(axis=-1, keepdims=True)."
        )
    if x.ndim > 2 and close(w, softmax(x, axis=1)):
        raise Wrong(
            f"On {case}, your softmax ran along axis 1, which is the last axis only for 2-D"
            f" input; use axis=-1 so that batches work too."
        )
    if not np.allclose(sums, 1):
        raise Wrong(f"On {case}, the rows of your result sum to {vec(sums)}, not 1.")
    raise Wrong(f"On {case}, your weights {vec(w)} differ from softmax(x) = {vec(softmax(x))}.")


stable_softmax = FunctionExercise(
    "ch05.stable_softmax",
    _cases,
    _check,
    correct_message="Subtracting the row maximum changes no weight (softmax ignores a shift)"
    " and makes overflow impossible, at any spread and in any precision. It does nothing about"
    " the spread of the scores, which is what 1/sqrt(d_k) is for.",
    hint="Shift first: `s = x - x.max(axis=-1, keepdims=True)`. Then e = np.exp(s) and divide"
    " by e.sum(axis=-1, keepdims=True).",
    solution="""
    def stable_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # largest exponent is e^0 = 1
        return e / e.sum(axis=-1, keepdims=True)  # each row sums to 1""",
)
