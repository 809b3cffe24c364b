"""Exercises for notebook 03, the worked example: ``ch03.late_weights``."""

from __future__ import annotations

import numpy as np

from .. import examples, softmax
from .checking import ArrayExercise, Wrong

__all__ = ["late_weights"]

_Q = examples.ORDER_X @ examples.ORDER_W_Q
_K = examples.ORDER_X @ examples.ORDER_W_K
_LATE, _IT = examples.ORDER_TOKENS.index("late"), examples.ORDER_TOKENS.index("it")
_D_K = _Q.shape[-1]
_raw = _K @ _Q[_LATE]  # scores of the query "late" against every key


class _WeightsExercise(ArrayExercise):
    """Attention weights: a wrong answer that does not sum to 1 is told so."""

    def wrong_fallback(self, arr: np.ndarray) -> str:
        if not np.isclose(arr.sum(), 1, atol=1e-3):
            raise Wrong(
                f"Attention weights sum to 1; yours sum to {arr.sum():.4f}. Apply the softmax"
                f" to the scaled scores."
            )
        return super().wrong_fallback(arr)


_weights = softmax(_raw / np.sqrt(_D_K))


def _vec(v: np.ndarray, f: str = "{:g}") -> str:
    return "[" + ", ".join(f.format(x) for x in v) + "]"


late_weights = _WeightsExercise(
    "ch03.late_weights",
    _weights,
    what="The weights",
    mistakes=[
        (
            softmax(_raw),
            "Those are the weights of the raw scores; divide the scores by"
            " sqrt(d_k) = 2 before the softmax.",
        ),
        (softmax(_raw / _D_K), "You divided the scores by d_k = 4; the scale is sqrt(d_k) = 2."),
        (_raw / np.sqrt(_D_K), "Those are the scaled scores; the weights are their softmax."),
        (
            _raw,
            "Those are the raw scores q_late . k_j; scale them by 1/sqrt(d_k) and apply the"
            " softmax.",
        ),
        (
            softmax(_K @ _Q[_IT] / np.sqrt(_D_K)),
            "Those are the weights of the query of 'it', Q[3]; the query of 'late' is Q[2].",
        ),
        (
            softmax(_Q @ _K.T / np.sqrt(_D_K), axis=0)[:, _LATE],
            "That is column 2 of a"
            " softmax taken down the columns. The weights of the query 'late' are row 2 of"
            " softmax(Q K^T / sqrt(d_k)), normalised along the row.",
        ),
    ],
    hint="q_late = Q[2]. Its scores are K @ q_late (one per key); divide by sqrt(d_k) = 2,"
    " then softmax: np.exp(s) / np.exp(s).sum().",
    solution=f"""q_late = Q[2] = {_vec(_Q[_LATE])}; raw scores K @ q_late = {_vec(_raw)};
scaled = raw / sqrt(d_k) = {_vec(_raw / np.sqrt(_D_K))};
weights = np.exp(scaled) / np.exp(scaled).sum() = {_vec(_weights, "{:.4f}")}.""",
    correct_message="Now set these weights beside those of 'it' above: within each, one pair of"
    " weights is equal, and the keys say why.",
)
