"""Exercises for notebook 05, the overflow misconception: ``ch05.stable_softmax``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import softmax
from .checking import FunctionExercise, Wrong, call_student, close, result_array, vec

__all__ = ["stable_softmax"]

_ROW_MAX = (
    "subtract each row's maximum before np.exp, `x - x.max(axis=-1, keepdims=True)`: the largest"
    " exponent is then e^0 = 1 and the denominator is at least 1."
)


def _cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(5)
    return [
        ("x = [1, 2, 3]", np.array([1.0, 2.0, 3.0])),
        ("the large scores x = [1000, 1001]", np.array([1000.0, 1001.0])),
        ("the very negative scores x = [-1000, -1001]", np.array([-1000.0, -1001.0])),
        ("the wide spread x = [0, 1000]", np.array([0.0, 1000.0])),
        ("a (3, 4) array of scores, one row per query", rng.standard_normal((3, 4))),
        ("the rows [[0, 1], [1000, 1001]], far apart", np.array([[0.0, 1.0], [1000.0, 1001.0]])),
        ("a batch of shape (2, 3, 4)", rng.standard_normal((2, 3, 4))),
    ]


def _diagnose(case: str, x: np.ndarray, w: np.ndarray) -> str:
    """The message for a wrong result ``w`` on scores ``x``."""
    if not np.isfinite(w).all():
        why = "e^1000 overflows to inf" if x.max() > 700 else "every e^x underflows to 0"
        return f"On {case}, your function returned {vec(w)} (NaN or inf: {why}). Fix: {_ROW_MAX}"
    sums = w.sum(axis=-1)
    if x.ndim > 1 and close(w, softmax(x, axis=0)):
        return (
            f"On {case}, each row of your result sums to {vec(sums)}, not 1: your"
            f" softmax normalised each column (axis 0). It must run along the last axis,"
            f" axis=-1: one row of weights per query."
        )
    if x.ndim > 1 and np.isclose(w.sum(), 1):
        return (
            f"On {case}, your whole result sums to 1, not each row: sum each row with"
            f" e.sum(axis=-1, keepdims=True)."
        )
    if x.ndim > 2 and close(w, softmax(x, axis=1)):
        return (
            f"On {case}, your softmax ran along axis 1, which is the last axis only for 2-D"
            f" input; use axis=-1 so that batches work too."
        )
    if not np.allclose(sums, 1):
        return f"On {case}, the rows of your result sum to {vec(sums)}, not 1."
    return f"On {case}, your weights {vec(w)} differ from softmax(x) = {vec(softmax(x))}."


def _grade(func: Callable) -> str:
    for case, x in _cases():
        try:
            result = call_student(func, case, x)
        except Wrong as wrong:
            if "broadcast" in str(wrong):
                raise Wrong(
                    f"{wrong}. Keep the summed axis, e.sum(axis=-1, keepdims=True), so that each"
                    f" row is divided by its own sum."
                ) from None
            raise
        w = result_array(result, case, x.shape)
        if not close(w, softmax(x)):
            if x.ndim == 2 and x[1, 0] == 1000 and not np.isfinite(w[0]).all():
                raise Wrong(
                    f"On {case}, the first row came out as {vec(w[0])}: you subtracted the maximum"
                    f" of the whole array, so the first row's exponents e^-1000 underflow to 0."
                    f" Subtract each row's own maximum: x.max(axis=-1, keepdims=True)."
                )
            raise Wrong(_diagnose(case, x, w))
    return (
        "Subtracting the row maximum changes no weight (softmax ignores a shift) and makes"
        " overflow impossible. It does nothing about the spread of the scores, which is what"
        " 1/sqrt(d_k) is for."
    )


stable_softmax = FunctionExercise(
    "ch05.stable_softmax",
    _grade,
    hint="Shift first: `s = x - x.max(axis=-1, keepdims=True)`. Then e = np.exp(s) and divide"
    " by e.sum(axis=-1, keepdims=True).",
    solution="""
    def stable_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # largest exponent is e^0 = 1
        return e / e.sum(axis=-1, keepdims=True)  # each row sums to 1""",
)
