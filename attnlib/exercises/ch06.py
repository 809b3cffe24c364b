"""Exercises for notebook 06, masking: ``ch06.masked_attention``, ``ch06.kv_cache_mask``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import causal_mask, scaled_dot_product_attention
from .checking import (
    ArrayExercise,
    FunctionExercise,
    Wrong,
    call_student,
    close,
    result_array,
    vec,
)

__all__ = ["kv_cache_mask", "masked_attention"]


def _cases() -> list[tuple[str, tuple[np.ndarray, ...]]]:
    rng = np.random.default_rng(6)

    def qkv(*lead: int, T: int = 4, d_k: int = 3, d_v: int = 2, size: float = 1.0):
        shape = (*lead, T)
        return (
            size * rng.standard_normal((*shape, d_k)),
            size * rng.standard_normal((*shape, d_k)),
            rng.standard_normal((*shape, d_v)),
        )

    padding = np.array([[True, True, True, False, False]])  # (1, 5): the last 2 keys are padding
    return [
        ("a causal mask, T = 4, d_k = 3", (*qkv(), causal_mask(4))),
        ("a padding mask of shape (1, 5) (the last 2 keys are padding)", (*qkv(T=5), padding)),
        (
            "a causal mask with large scores (entries of Q and K near 30)",
            (*qkv(size=30.0), causal_mask(4)),
        ),
        ("a batch of 2 sequences, Q of shape (2, 4, 3), causal mask", (*qkv(2), causal_mask(4))),
    ]


def _plain_softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax the way a student writes it (NaN for an all -inf row), to recognise mistakes."""
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def _diagnose(case: str, Q, K, mask, weights: np.ndarray) -> str:
    """The message for wrong ``weights`` on one case."""
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    sums = vec(weights.sum(axis=-1))
    known = [
        (
            np.where(mask, _plain_softmax(scores), 0.0),
            f"you applied the mask after the softmax."
            f" Zeroing weights leaves rows that no longer sum to 1 (yours sum to {sums}), and the"
            f" hidden keys still count in each row's normaliser. Put -inf into the masked"
            f" scores before the softmax: np.where(mask, scores, -np.inf).",
        ),
        (
            _plain_softmax(np.where(mask, -np.inf, scores)),
            "your mask is the wrong way round:"
            " True means 'may attend' (keep the score), so write np.where(mask, scores, -np.inf)."
            " You hid the allowed keys and kept the forbidden ones.",
        ),
        (
            _plain_softmax(scores),
            "your weights ignore the mask: a masked key must get weight exactly 0.",
        ),
        (
            _plain_softmax(np.where(mask, scores, 0.0)),
            "masked scores set to 0 still get weight"
            " e^0 in the softmax; set them to -np.inf, whose exponential is exactly 0.",
        ),
        (
            _plain_softmax(np.where(mask, scores * np.sqrt(Q.shape[-1]), -np.inf)),
            "the scores are not scaled: divide Q @ K^T by sqrt(d_k) before masking.",
        ),
        (
            _plain_softmax(np.where(mask, scores, -np.inf), axis=-2),
            f"your weights' rows sum"
            f" to {sums}, not 1: the softmax ran along axis -2 (down each column, over queries)."
            f" Normalise along the last axis, the keys: axis=-1.",
        ),
    ]
    for wrong, message in known:
        if close(weights, wrong):
            return f"On {case}, {message}"
    if not np.isfinite(weights).all():
        return (
            f"On {case}, your weights contain NaN or inf: subtract each row's maximum before"
            f" np.exp (notebook 05)."
        )
    if not np.allclose(weights.sum(axis=-1), 1):
        return f"On {case}, the rows of your weights sum to {sums}, not 1."
    return f"On {case}, your weights differ from softmax(masked scaled scores)."


def _grade(func: Callable) -> str:
    for case, (Q, K, V, mask) in _cases():
        try:
            result = call_student(func, case, Q, K, V, mask)
        except Wrong as wrong:
            if Q.ndim == 3:
                raise Wrong(
                    f"{wrong}. With a batch, transpose only the last two axes of K:"
                    f" np.swapaxes(K, -1, -2), not K.T."
                ) from None
            raise
        if not (isinstance(result, tuple) and len(result) == 2):
            raise Wrong(
                f"On {case}, return two arrays, (output, weights), as"
                f" attnlib.scaled_dot_product_attention does; you returned {type(result).__name__}."
            )
        out_ref, w_ref = scaled_dot_product_attention(Q, K, V, mask=mask)
        weights = result_array(result[1], case + " (the weights)", w_ref.shape)
        if not close(weights, w_ref):
            raise Wrong(_diagnose(case, Q, K, mask, weights))
        output = result_array(result[0], case + " (the output)", out_ref.shape)
        if not close(output, out_ref):
            raise Wrong(f"On {case}, the weights are right but the output is not weights @ V.")
    return (
        "Masked scores become -inf before the softmax, so hidden keys get weight exactly 0 and"
        " every row still sums to 1."
    )


masked_attention = FunctionExercise(
    "ch06.masked_attention",
    _grade,
    hint="scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k); replace the scores where"
    " mask is False by -np.inf; then a row-wise softmax (subtract the row maximum) and @ V.",
    solution="""
    def masked_attention(Q, K, V, mask):
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        scores = np.where(mask, scores, -np.inf)  # True = may attend
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        return weights @ V, weights""",
)

# Two new queries at the end of a sequence of five keys (a KV cache).
T_Q, T_K = 2, 5

kv_cache_mask = ArrayExercise(
    "ch06.kv_cache_mask",
    causal_mask(T_Q, T_K),
    what="The mask",
    mistakes=[
        (
            np.tril(np.ones((T_Q, T_K), dtype=bool)),
            "That mask is aligned top-left, as if the"
            " two queries were positions 0 and 1. With a KV cache they are the last two positions,"
            " 3 and 4: query 0 may attend to keys 0 to 3, query 1 to all five.",
        ),
        (
            ~causal_mask(T_Q, T_K),
            "True and False are the wrong way round: True means 'may attend'.",
        ),
        (
            np.triu(np.ones((T_Q, T_K), dtype=bool), k=T_K - T_Q),
            "That keeps the future and"
            " hides the past: a query may attend to keys at its own position and before.",
        ),
    ],
    hint="The queries are positions T_k - T_q = 3 and 4 of the sequence. Query i may attend"
    " to key j when j <= i + (T_k - T_q).",
    solution="""np.arange(T_k)[None, :] <= np.arange(T_q)[:, None] + (T_k - T_q), i.e.
[[True, True, True, True, False],
 [True, True, True, True, True]]; attnlib.causal_mask(2, 5) gives the same.""",
    correct_message="The mask is aligned to the bottom right: the newest query sees every key.",
)
