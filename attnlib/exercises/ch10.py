"""Exercises for notebook 10, cost and tiling: ``ch10.online_softmax_step``.

The student writes one step of the online softmax: given the running state after some blocks of
scores (running maximum ``m``, normaliser ``l``, unnormalised weighted sum ``acc``) and a new
block of scores with their value rows, return the state after that block. The check compares
each step with the state's definition over all scores seen so far,
``m = max(s)``, ``l = sum(exp(s - m))``, ``acc = sum(exp(s - m) v)``, and the end result
``acc / l`` with ``attnlib.softmax(scores) @ values``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import softmax
from .checking import FunctionExercise, Wrong, call_student, close, result_array, vec

__all__ = ["online_softmax_step"]


def _state(scores: np.ndarray, values: np.ndarray) -> tuple[float, float, np.ndarray]:
    """The state's definition: (max, sum of exp(s - max), sum of exp(s - max) v)."""
    m = float(scores.max())
    p = np.exp(scores - m)
    return m, float(p.sum()), p @ values


def _blocks() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, scores, values) of a stream of blocks, each with 3 keys and d_v = 2."""
    rng = np.random.default_rng(8)
    values = rng.standard_normal((12, 2))
    scores = np.concatenate(
        [
            rng.standard_normal(3),  # block 1
            rng.standard_normal(3) + 3.0,  # block 2 raises the maximum
            rng.standard_normal(3) - 3.0,  # block 3 does not
            rng.standard_normal(3) + 1000.0,  # block 4: large scores
        ]
    )
    names = [
        "the first block, from the start state m = -inf, l = 0, acc = [0, 0]",
        "a second block whose top score is above m",
        "a third block whose scores are all below m",
        "a fourth block of large scores (around 1000)",
    ]
    return [(name, scores[: 3 * (i + 1)], values[: 3 * (i + 1)]) for i, name in enumerate(names)]


def _mistakes(m, l, acc, s, v):
    """Typical wrong new states, each with its message."""
    m_new = max(m, float(s.max()))
    p = np.exp(s - m_new)
    r = np.exp(m - m_new)
    l_new = r * l + p.sum()
    return [
        (
            (m_new, l_new, acc + p @ v),
            "acc was not rescaled: multiply the old acc by"
            " exp(m - m_new) before adding the new block, as you must when the maximum rises.",
        ),
        (
            (m_new, l + p.sum(), r * acc + p @ v),
            "l was not rescaled: multiply the old l by"
            " exp(m - m_new) before adding the new block's sum.",
        ),
        (
            (m_new, l + p.sum(), acc + p @ v),
            "the old l and acc were not rescaled: when the"
            " maximum rises from m to m_new, multiply both by exp(m - m_new).",
        ),
        (
            (m_new, l / r + p.sum() if r else np.nan, acc / r + p @ v if r else acc * np.nan),
            "the rescale factor is upside down: use exp(m - m_new) (at most 1), not"
            " exp(m_new - m).",
        ),
        (
            (m_new, r * l + np.exp(s).sum(), r * acc + np.exp(s) @ v),
            "the block's weights"
            " must be p = exp(s - m_new): l and acc are sums relative to the running maximum.",
        ),
        (
            (m_new, l_new, (r * acc + p @ v) / l_new),
            "keep acc unnormalised (a weighted sum, not"
            " an average); divide by l once, after the last block.",
        ),
    ]


def _grade(func: Callable) -> str:
    m, l, acc = -np.inf, 0.0, np.zeros(2)
    seen = 0
    for case, scores, values in _blocks():
        s, v = scores[seen:], values[seen:]
        result = call_student(func, case, m, l, acc, s, v)
        if not (isinstance(result, (tuple, list)) and len(result) == 3):
            raise Wrong(f"On {case}, return the new state as a tuple (m, l, acc).")
        got = [result_array(x, case, shape) for x, shape in zip(result, [(), (), (2,)])]
        want = _state(scores, values)
        if not all(close(g, w_) for g, w_ in zip(got, want)):
            if not all(np.isfinite(g).all() for g in got):
                if m == -np.inf:
                    raise Wrong(
                        f"On {case}, your state contains NaN or inf. Here m = -inf (there is"
                        f" no old state yet): the rescale factor exp(m - m_new) is 0 and the"
                        f" block's weights are exp(s - m_new). Anything else computed from m,"
                        f" like exp(m_new - m) or exp(s - m), is inf, and inf * 0 = NaN."
                    )
                raise Wrong(
                    f"On {case}, your state contains NaN or inf: exponentiate the scores minus"
                    f" the running maximum, exp(s - m_new), never exp(s) alone."
                )
            if not close(got[0], want[0]):
                raise Wrong(
                    f"On {case}, your m is {got[0]:.6g}; m_new is the larger of m and the new"
                    f" block's maximum, {want[0]:.6g}."
                )
            for wrong, message in _mistakes(m, l, acc, s, v):
                if all(close(g, w_) for g, w_ in zip(got, wrong)):
                    raise Wrong(f"On {case}, {message}")
            raise Wrong(
                f"On {case}, your state (m, l, acc) = ({vec(got[0])}, {vec(got[1])},"
                f" {vec(got[2])}) should be ({vec(want[0])}, {vec(want[1])}, {vec(want[2])})."
            )
        m, l, acc = want
        seen = scores.size
    final = acc / l
    reference = softmax(scores) @ values
    if not close(final, reference):  # pragma: no cover - the definition guarantees this
        raise AssertionError("the exercise's own reference state is wrong")
    return (
        f"After four blocks, acc / l = {vec(final)} equals softmax(all scores) @ values:"
        f" the full row of scores never had to exist at once."
    )


online_softmax_step = FunctionExercise(
    "ch10.online_softmax_step",
    _grade,
    hint="m_new = max(m, s.max()); p = np.exp(s - m_new); the old l and acc were computed"
    " relative to m, so multiply them by exp(m - m_new) before adding p.sum() and p @ v.",
    solution="""
    def online_softmax_step(m, l, acc, s, v):
        m_new = max(m, s.max())
        p = np.exp(s - m_new)  # this block's weights, relative to the new maximum
        rescale = np.exp(m - m_new)  # 0 on the first block, where m = -inf
        return m_new, rescale * l + p.sum(), rescale * acc + p @ v""",
)
