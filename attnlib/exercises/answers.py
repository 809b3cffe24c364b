"""Answer coercion: what a student typed (a number, an array, a tensor, a function's result)
turned into what a grader compares, or a :class:`~.verdicts.Wrong` that names what was expected."""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .feedback import complex_text, sentence, short_repr
from .verdicts import Unanswered, Wrong

_NO_ANSWER = object()


def is_placeholder(answer: object) -> bool:
    """True for ``...`` and ``None``, the placeholders a notebook leaves for the student."""
    return answer is Ellipsis or answer is None or answer is _NO_ANSWER


def _untensor(x: Any) -> Any:
    """A PyTorch (or similar) tensor as a numpy array, without importing torch (duck-typed)."""
    if hasattr(x, "detach") and hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return x.detach().cpu().numpy()
        except Exception:  # an exotic object with these names: leave it to the checks below
            return x
    return x


def as_number(answer: Any) -> float:
    """``answer`` as a finite float, or Wrong naming what was expected.

    Accepts ints, floats, Fractions, Decimals, numpy scalars, one-element arrays and 0-d
    tensors; refuses text, booleans, complex numbers and numbers beyond float range.
    """
    answer = _untensor(answer)
    if isinstance(answer, np.ndarray):
        if answer.size != 1:
            raise Wrong(
                f"The answer should be a single number (like 3.5); you gave an array of shape"
                f" {answer.shape}."
            )
        answer = answer.reshape(()).item() if answer.dtype != np.longdouble else answer.item()
    if isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, str):
        raise Wrong(
            sentence(
                f"The answer should be a number, not text: write it without quotes; you gave"
                f" {short_repr(answer)}"
            )
        )
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        raise Wrong(f"The answer should be a real number; you gave the complex number {answer}.")
    if isinstance(answer, bool) or not isinstance(answer, (numbers.Real, decimal.Decimal)):
        raise Wrong(
            sentence(
                f"The answer should be a single number (like 3.5); you gave"
                f" {type(answer).__name__} {short_repr(answer)}"
            )
        )
    try:
        value = float(answer)
    except OverflowError:
        value = math.inf
    if math.isinf(value) and not (isinstance(answer, float) and math.isinf(answer)):
        raise Wrong(
            "Your answer is larger than any float can hold (about 1.8e308); the value asked"
            " for is far smaller: look for a power or a product applied once too often."
        )
    if not math.isfinite(value):
        raise Wrong(f"The answer should be a finite number; you gave {value}.")
    return value


def to_real_array(answer: Any, what: str) -> np.ndarray:
    """A list/tuple/array/tensor answer as a real ndarray, or raise Wrong/Unanswered.

    ``what`` describes the answer in messages ("The weights", "On x = [1, 2, 3], your
    function's result"). Fractions and Decimals become floats; complex numbers are refused.
    """
    if is_placeholder(answer):
        raise Unanswered
    answer = _untensor(answer)
    if isinstance(answer, (str, bytes, Mapping)) or callable(answer):
        raise Wrong(
            sentence(f"{what} should be numbers in a list or array; you gave {short_repr(answer)}")
        )
    try:
        arr = np.asarray([_untensor(a) for a in answer] if isinstance(answer, list) else answer)
    except (ValueError, TypeError):
        raise Wrong(
            sentence(
                f"{what} could not be read as an array (rows of different lengths?):"
                f" {short_repr(answer)}"
            )
        ) from None
    if arr.dtype == object:
        flat = list(arr.ravel())
        if any(is_placeholder(x) for x in flat):
            raise Unanswered
        if flat and all(
            isinstance(x, (numbers.Real, decimal.Decimal)) and not isinstance(x, bool) for x in flat
        ):
            try:
                arr = arr.astype(np.float64)
            except OverflowError:
                raise Wrong(f"{what} holds a number larger than any float.") from None
        else:
            raise Wrong(sentence(f"{what} should hold only numbers; you gave {short_repr(answer)}"))
    if np.iscomplexobj(arr):
        raise Wrong(
            f"{what} holds complex numbers (like {complex_text(arr.ravel()[0])}); the answer is"
            f" real. A square root or log of a negative number makes them."
        )
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise Wrong(sentence(f"{what} should hold numbers; you gave {short_repr(answer)}"))
    return arr


def _tolerances(arr: np.ndarray, rtol: float, atol: float) -> tuple[float, float]:
    """``rtol`` and ``atol`` widened to what the precision of ``arr`` can meet (float32: ~3e-4)."""
    if np.issubdtype(arr.dtype, np.floating) and np.finfo(arr.dtype).eps > 1e-15:
        floor = float(np.sqrt(np.finfo(arr.dtype).eps))
        return max(rtol, floor), max(atol, floor)
    return rtol, atol


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True if ``a`` and ``b`` have one shape and equal entries (NaN equals NaN).

    The tolerances widen to the precision of ``a`` (the student's result): a float32 result is
    held to what float32 can do, not to float64's 1e-6.
    """
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    rtol, atol = _tolerances(a_arr, rtol, atol)
    a_arr, b_arr = a_arr.astype(np.float64), b_arr.astype(np.float64)
    return a_arr.shape == b_arr.shape and bool(
        np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=True)
    )


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    nan_ok = np.issubdtype(a.dtype, np.inexact) and np.asarray(b).dtype.kind in "fc"
    return a.shape == np.shape(b) and bool(np.array_equal(a, b, equal_nan=nan_ok))


def result_array(result: Any, case: str, shape: tuple[int, ...]) -> np.ndarray:
    """The student's ``result`` as a real array of ``shape``, or Wrong naming the ``case``.

    A float result keeps its dtype (so that :func:`close` can hold it to its precision); whole
    numbers and booleans become float64.
    """
    if result is None:
        raise Wrong(f"On {case}, your function returned None: did you forget `return`?")
    arr = to_real_array(result, f"On {case}, your function's result")
    if arr.shape != tuple(shape) and shape == ():
        raise Wrong(
            f"On {case}, your function should return one number; it returned an array of shape"
            f" {arr.shape}."
        )
    if arr.shape != tuple(shape):
        raise Wrong(
            f"On {case}, your function returned shape {arr.shape}; expected {tuple(shape)}."
        )
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def result_tuple(result: Any, case: str, names: Sequence[str]) -> tuple:
    """The student's ``result`` as a tuple of ``len(names)`` items (a tuple or a list), or Wrong."""
    if isinstance(result, (tuple, list)) and len(result) == len(names):
        return tuple(result)
    got = (
        f"{type(result).__name__} of length {len(result)}"
        if isinstance(result, (tuple, list))
        else type(result).__name__
    )
    raise Wrong(
        f"On {case}, return {len(names)} things, ({', '.join(names)}), as a tuple; you"
        f" returned {got}."
    )
