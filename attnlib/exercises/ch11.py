"""Exercises for notebook 11, gradients: ``ch11.softmax_backward``."""

from __future__ import annotations

import numpy as np

from .. import softmax, softmax_jacobian
from .checking import FunctionExercise, StudentRun, Wrong, close, result_array, sentences, vec

__all__ = ["softmax_backward"]


def _cases() -> list[tuple[str, tuple]]:
    rng = np.random.default_rng(9)
    return [
        (
            "p = softmax([1, 2, 3]) and g = [1, 0, 0]",
            (softmax(np.array([1.0, 2.0, 3.0])), np.array([1.0, 0.0, 0.0])),
        ),
        (
            "a one-hot p = [0, 1, 0] and g = [0.5, -1, 2]",
            (np.array([0.0, 1.0, 0.0]), np.array([0.5, -1.0, 2.0])),
        ),
        (
            "a (3, 4) batch of rows p and g",
            (softmax(rng.standard_normal((3, 4))), rng.standard_normal((3, 4))),
        ),
    ]


def _reference(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return (softmax_jacobian(p) @ g[..., None])[..., 0]  # J^T g, and J is symmetric


def _works_row_by_row(run: StudentRun, case: str, p: np.ndarray, g: np.ndarray) -> bool:
    try:
        return all(close(run(case, pr, gr), _reference(pr, gr)) for pr, gr in zip(p, g))
    except Wrong:
        return False


def _check(run: StudentRun, case: str, p: np.ndarray, g: np.ndarray) -> None:
    try:
        result = run(case, p, g)
    except Wrong as wrong:
        keepdims_lost = f"({','.join(map(str, p.shape))}) ({p.shape[0]},)"
        if p.ndim == 2 and "broadcast" in str(wrong) and keepdims_lost in str(wrong):
            raise Wrong(
                sentences(
                    str(wrong),
                    "Keep the summed axis, (p * g).sum(axis=-1, keepdims=True), so each row"
                    " subtracts its own sum.",
                )
            ) from None
        if p.ndim > 1 and _works_row_by_row(run, case, p, g):
            raise Wrong(
                sentences(
                    str(wrong),
                    "Your function works on one row at a time but not on a batch of rows:"
                    " np.diag, np.outer and np.dot handle a single row. Write it with"
                    " elementwise products and a sum along the last axis (keepdims=True).",
                )
            ) from None
        raise
    ds = result_array(result, case, p.shape)
    expected = _reference(p, g)
    if close(ds, expected):
        return
    inner = (p * g).sum(axis=-1, keepdims=True)
    for wrong, message in (
        (
            p * g,
            "the -sum_j p_j g_j term is missing: every score also moves all the other"
            " weights, through the softmax's normaliser.",
        ),
        (g - inner, "multiply by p: dL/ds_i = p_i (g_i - sum_j p_j g_j)."),
        (-expected, "the sign is flipped: dL/ds = p * (g - sum(p * g))."),
        (
            p * (g - (p * g).sum()),
            "you summed p * g over the whole array; sum each row,"
            " (p * g).sum(axis=-1, keepdims=True).",
        ),
    ):
        if close(ds, wrong):
            raise Wrong(f"On {case}, {message}")
    raise Wrong(f"On {case}, your dL/ds is {vec(ds)}; it should be {vec(expected)}.")


softmax_backward = FunctionExercise(
    "ch11.softmax_backward",
    _cases,
    _check,
    correct_message="dL/ds = p * (g - sum(p * g)) is J^T g without ever building the (n, n)"
    " Jacobian; at a one-hot p it is 0 whatever g asks for.",
    hint="dL/ds_j = sum_i g_i p_i (delta_ij - p_j) = p_j g_j - p_j sum_i p_i g_i. Sum along the"
    " last axis with keepdims=True so that batches of rows work.",
    solution="""
    def softmax_backward(p, g):
        return p * (g - (p * g).sum(axis=-1, keepdims=True))""",
)
