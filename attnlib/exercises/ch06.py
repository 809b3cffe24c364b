"""Exercises for notebook 06, masking: ``ch06.masked_attention``, ``ch06.kv_cache_mask``."""

from __future__ import annotations

import numpy as np

from .. import causal_mask, scaled_dot_product_attention
from .checking import (
    ArrayExercise,
    FunctionExercise,
    StudentRun,
    Wrong,
    close,
    result_array,
    result_tuple,
    sentences,
    vec,
)

__all__ = ["kv_cache_mask", "masked_attention"]


def _cases() -> list[tuple[str, tuple]]:
    rng = np.random.default_rng(6)

    def qkv(*lead: int, T: int = 4, d_k: int = 3, d_v: int = 2, size: float = 1.0):
        shape = (*lead, T)
        return (
            size * rng.standard_normal((*shape, d_k)),
            size * rng.standard_normal((*shape, d_k)),
            rng.standard_normal((*shape, d_v)),
        )

    # Every allowed score near -170: a masked score of -100 (or 0) would beat them all.
    Q_low = -10.0 - rng.random((4, 3))
    K_low = 10.0 + rng.random((4, 3))
    padding = np.array([[True, True, True, False, False]])  # (1, 5): the last 2 keys are padding
    return [
        ("a causal mask, T = 4, d_k = 3", (*qkv(), causal_mask(4))),
        ("a padding mask of shape (1, 5) (the last 2 keys are padding)", (*qkv(T=5), padding)),
        (
            "a causal mask with large scores (entries of Q and K near 30)",
            (*qkv(size=30.0), causal_mask(4)),
        ),
        (
            "a causal mask with every allowed score near -170",
            (Q_low, K_low, rng.standard_normal((4, 2)), causal_mask(4)),
        ),
        ("a batch of 2 sequences, Q of shape (2, 4, 3), causal mask", (*qkv(2), causal_mask(4))),
    ]


def _plain_softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax the way a student writes it (NaN for an all -inf row), to recognise mistakes."""
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _diagnose(case: str, Q, K, mask, weights: np.ndarray) -> str:
    """The message for wrong ``weights`` on one case."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
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
            _plain_softmax(np.where(mask, scores * np.sqrt(d_k), -np.inf)),
            "the scores are not scaled: divide Q @ K^T by sqrt(d_k) before masking.",
        ),
        (
            _plain_softmax(np.where(mask, scores / np.sqrt(d_k), -np.inf)),
            f"you divided the scores by d_k = {d_k}; the scale is sqrt(d_k) = {np.sqrt(d_k):.4g}.",
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
    hidden = np.broadcast_to(~mask, weights.shape)
    if np.isfinite(weights).all() and (np.abs(weights[hidden]) > 1e-6).any():
        return (
            f"On {case}, masked keys get weight up to {np.abs(weights[hidden]).max():.3g}: a"
            f" finite fill value (0, -100, ...) still gets weight e^(fill - max) in the softmax,"
            f" which is large when the allowed scores are lower still. Fill with -np.inf,"
            f" whose exponential is exactly 0."
        )
    if not np.isfinite(weights).all():
        return (
            f"On {case}, your weights contain NaN or inf: subtract each row's maximum before"
            f" np.exp (notebook 05)."
        )
    if not np.allclose(weights.sum(axis=-1), 1):
        return f"On {case}, the rows of your weights sum to {sums}, not 1."
    return f"On {case}, your weights differ from softmax(masked scaled scores)."


def _batch_message(run: StudentRun, case: str, Q, K, V, mask, wrong: Wrong) -> Wrong:
    """The message for a function that fails on a batch: does it work one sequence at a time?"""
    try:
        alone = all(
            close(result_tuple(run(case, Q[b], K[b], V[b], mask), case, ("o", "w"))[1],
                  scaled_dot_product_attention(Q[b], K[b], V[b], mask=mask)[1])
            for b in range(Q.shape[0])
        )  # fmt: skip
    except Wrong:
        alone = False
    if not alone:
        return wrong
    if "einstein" in str(wrong) or "einsum" in str(wrong):
        fix = (
            "your einsum names two axes per array; let '...' stand for the leading ones:"
            " np.einsum('...qd,...kd->...qk', Q, K)."
        )
    else:
        fix = (
            "transpose only the last two axes of K, np.swapaxes(K, -1, -2): K.T reverses all"
            " three axes."
        )
    return Wrong(
        sentences(str(wrong), f"Your function works on one sequence at a time; with a batch, {fix}")
    )


def _check(run: StudentRun, case: str, Q, K, V, mask) -> None:
    try:
        result = run(case, Q, K, V, mask)
    except Wrong as wrong:
        if Q.ndim == 3:
            raise _batch_message(run, case, Q, K, V, mask, wrong) from None
        raise
    output, weights = result_tuple(result, case, ("output", "weights"))
    out_ref, w_ref = scaled_dot_product_attention(Q, K, V, mask=mask)
    weights = result_array(weights, case + " (the weights)", w_ref.shape)
    if not close(weights, w_ref):
        raise Wrong(_diagnose(case, Q, K, mask, weights))
    output = result_array(output, case + " (the output)", out_ref.shape)
    if not (close(output, out_ref) or close(output, weights.astype(np.float64) @ V)):
        raise Wrong(f"On {case}, the weights are right but the output is not weights @ V.")


masked_attention = FunctionExercise(
    "ch06.masked_attention",
    _cases,
    _check,
    correct_message="Masked scores become -inf before the softmax, so hidden keys get weight"
    " exactly 0, however low the allowed scores are, and every row still sums to 1.",
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
            np.tril(np.ones((T_Q, T_K), dtype=bool), k=T_K - T_Q - 1),
            "Off by one: each query must also see its own key. Query 0 is position 3, so it"
            " may attend to keys 0 to 3 (four keys), and query 1 to all five.",
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
