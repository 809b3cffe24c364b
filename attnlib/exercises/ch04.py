"""Exercises for notebook 04, softmax saturation: ``ch04.softmax_jacobian``."""

from __future__ import annotations

import numpy as np

from .. import softmax
from .. import softmax_jacobian as reference_jacobian
from .checking import FunctionExercise, StudentRun, Wrong, close, result_array

__all__ = ["softmax_jacobian"]


def _cases() -> list[tuple[str, tuple]]:
    rng = np.random.default_rng(4)
    return [
        ("p = softmax([1, 2, 3])", (softmax(np.array([1.0, 2.0, 3.0])),)),
        ("a uniform p = [0.25, 0.25, 0.25, 0.25]", (np.full(4, 0.25),)),
        ("a one-hot p = [0, 1, 0]", (np.array([0.0, 1.0, 0.0]),)),
        ("p = softmax of 6 random scores", (softmax(rng.standard_normal(6)),)),
    ]


def _check(run: StudentRun, case: str, p: np.ndarray) -> None:
    n = p.size
    result = run(case, p)
    if np.shape(result) == (n,):
        raise Wrong(
            f"On {case}, your function returned a vector of shape ({n},); the Jacobian is"
            f" an (n, n) matrix, J[i, j] = d p_i / d x_j (np.diag and np.outer build one)."
        )
    J = result_array(result, case, (n, n))
    expected = reference_jacobian(p)
    if close(J, expected):
        return
    for wrong, message in (
        (
            np.diag(p * (1 - p)),
            "you have only the diagonal p_i (1 - p_i); the entries off the diagonal are"
            " -p_i p_j, not 0.",
        ),
        (np.diag(p), "the -p p^T part is missing: every entry has a -p_i p_j term."),
        (
            -np.outer(p, p),
            "the diag(p) part is missing: the delta_ij term adds p_i on the diagonal.",
        ),
        (np.diag(p) + np.outer(p, p), "the sign of p p^T is wrong: J = diag(p) - p p^T."),
        (np.outer(p, p) - np.diag(p), "your J has the opposite sign: J = diag(p) - p p^T."),
    ):
        if close(J, wrong):
            raise Wrong(f"On {case}, {message}")
    raise Wrong(
        f"On {case}, your J differs from diag(p) - p p^T (largest difference"
        f" {np.abs(J - expected).max():.3g})."
    )


softmax_jacobian = FunctionExercise(
    "ch04.softmax_jacobian",
    _cases,
    _check,
    correct_message="J = diag(p) - p p^T. At a one-hot p every entry is 0: a saturated softmax"
    " passes no gradient back to the scores.",
    hint="d p_i / d x_j = p_i (delta_ij - p_j). The delta_ij term is np.diag(p); the p_i p_j"
    " term is np.outer(p, p).",
    solution="""
    def jacobian(p):
        return np.diag(p) - np.outer(p, p)  # J[i, j] = p_i (delta_ij - p_j)""",
)
