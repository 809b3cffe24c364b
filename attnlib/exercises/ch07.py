"""Exercises for notebook 07, multi-head attention: ``ch07.split_heads`` (write the split)."""

from __future__ import annotations

import numpy as np

from .. import split_heads as reference_split
from .checking import FunctionExercise, StudentRun, Wrong, close, result_array, vec

__all__ = ["split_heads"]


def _cases() -> list[tuple[str, tuple]]:
    return [
        ("x of shape (3, 4) with n_heads = 2", (np.arange(12.0).reshape(3, 4), 2)),
        ("x of shape (5, 12) with n_heads = 3", (np.arange(60.0).reshape(5, 12), 3)),
        ("x of shape (2, 6) with n_heads = 1", (np.arange(12.0).reshape(2, 6), 1)),
    ]


def _check(run: StudentRun, case: str, x: np.ndarray, n_heads: int) -> None:
    T, width = x.shape
    d_head = width // n_heads
    result = run(case, x, n_heads)
    if np.shape(result) == (T, n_heads, d_head) and n_heads > 1:
        raise Wrong(
            f"On {case}, your result has shape {(T, n_heads, d_head)} = (T, n_heads,"
            f" d_head): put the head axis first with .transpose(1, 0, 2), giving (n_heads,"
            f" T, d_head)."
        )
    heads = result_array(result, case, (n_heads, T, d_head))
    expected = reference_split(x, n_heads)
    if close(heads, expected):
        return
    if close(heads, x.reshape(n_heads, T, d_head)):
        raise Wrong(
            f"On {case}, you reshaped x straight to (n_heads, T, d_head), which cuts the"
            f" flat list of numbers in order: head 0 got {vec(heads[0])}, the first rows of"
            f" x, not columns 0 to d_head - 1 of every token. Reshape to (T, n_heads, d_head)"
            f" first, then swap the first two axes."
        )
    if close(heads, x.reshape(T, d_head, n_heads).transpose(2, 0, 1)):
        raise Wrong(
            f"On {case}, head 0 got columns 0, {n_heads}, {2 * n_heads}, ... (every"
            f" n_heads-th column). Each head owns a block of d_head neighbouring columns:"
            f" reshape to (T, n_heads, d_head), not (T, d_head, n_heads)."
        )
    raise Wrong(
        f"On {case}, head 0 should be columns 0 to {d_head - 1} of every row of x,"
        f" {vec(expected[0])}; yours holds {vec(heads[0])}."
    )


split_heads = FunctionExercise(
    "ch07.split_heads",
    _cases,
    _check,
    correct_message="Head i owns columns i*d_head to (i+1)*d_head - 1 of every token; merging"
    " heads is the reverse: transpose back and reshape to (T, n_heads * d_head).",
    hint="Two steps: x.reshape(T, n_heads, d_head) gives each head its block of columns;"
    " .transpose(1, 0, 2) then puts the head axis first.",
    solution="""
    def split_heads(x, n_heads):
        T, width = x.shape
        d_head = width // n_heads
        return x.reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (n_heads, T, d_head)""",
)
