"""Exercises for notebook 10, cost and tiling: ``ch10.online_softmax_step``.

The student writes one step of the online softmax: given the running state after some blocks of
scores (running maximum ``m``, normaliser ``l``, unnormalised weighted sum ``acc``) and a new
block of scores with their value rows, return the state after that block. The check compares
each step with the state's definition over all scores seen so far,
``m = max(s)``, ``l = sum(exp(s - m))``, ``acc = sum(exp(s - m) v)``, and the end result
``acc / l`` with ``attnlib.softmax(scores) @ values``.

Each case hands the step a state made from earlier blocks that the student's function never
saw (except the first, from the start state), so a step that ignores its running state and
recomputes from blocks it kept cannot pass.
"""

from __future__ import annotations

import numpy as np

from .checking import FunctionExercise, StudentRun, Wrong, close, result_array, result_tuple, vec

__all__ = ["online_softmax_step"]


def _state(scores: np.ndarray, values: np.ndarray) -> tuple[float, float, np.ndarray]:
    """The state's definition: (max, sum of exp(s - max), sum of exp(s - max) v)."""
    m = float(scores.max())
    p = np.exp(scores - m)
    return m, float(p.sum()), p @ values


def _cases() -> list[tuple[str, tuple]]:
    """(description, (m, l, acc, s, v)): a state made from hidden earlier scores, a new block."""
    rng = np.random.default_rng(8)

    def case(name, earlier, block):
        v_earlier = rng.standard_normal((len(earlier), 2))
        v_block = rng.standard_normal((len(block), 2))
        m, l, acc = _state(earlier, v_earlier) if len(earlier) else (-np.inf, 0.0, np.zeros(2))
        return name, (m, l, acc, block, v_block)

    return [
        case(
            "the first block, from the start state m = -inf, l = 0, acc = [0, 0]",
            np.array([]),
            rng.standard_normal(3),
        ),
        case(
            "a state from 6 earlier scores, and a block whose top score is above m",
            rng.standard_normal(6),
            rng.standard_normal(3) + 3.0,
        ),
        case(
            "a state from 9 earlier scores, and a block whose scores are all below m",
            rng.standard_normal(9) + 2.0,
            rng.standard_normal(3) - 3.0,
        ),
        case(
            "a state from 3 earlier scores near 1000, and a block of large scores",
            rng.standard_normal(3) + 1000.0,
            rng.standard_normal(3) + 1001.0,
        ),
        case(
            "a state from 5 earlier scores, and a block of one score above m",
            rng.standard_normal(5),
            np.array([4.0]),
        ),
    ]


def _mistakes(m, l, acc, s, v):
    """Typical wrong new states, each with its message."""
    m_new = max(m, float(s.max()))
    p = np.exp(s - m_new)
    r = np.exp(m - m_new)
    l_new = r * l + p.sum()
    m_block = float(s.max())
    p_block = np.exp(s - m_block)
    return [
        (
            (m_block, p_block.sum(), p_block @ v),
            "your new state is the block's alone: the old state (m, l, acc) stands for scores"
            " seen before, which your function never sees again. Rescale the old l and acc by"
            " exp(m - m_new) and add the block's sums.",
        ),
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


def _check(run: StudentRun, case: str, m, l, acc, s, v) -> None:
    result = result_tuple(run(case, m, l, acc, s, v), case, ("m", "l", "acc"))
    got = [result_array(x, case, shape) for x, shape in zip(result, [(), (), (2,)])]
    m_new = max(m, float(s.max()))
    p = np.exp(s - m_new)
    r = np.exp(m - m_new)
    want = (m_new, r * l + p.sum(), r * acc + p @ v)
    if all(close(g, w_) for g, w_ in zip(got, want)):
        return
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
            f"On {case}, your m is {float(got[0]):.6g}; m_new is the larger of m and the new"
            f" block's maximum, {want[0]:.6g}."
        )
    for wrong, message in _mistakes(m, l, acc, s, v):
        if all(close(g, w_) for g, w_ in zip(got, wrong)):
            raise Wrong(f"On {case}, {message}")
    raise Wrong(
        f"On {case}, your state (m, l, acc) = ({vec(got[0])}, {vec(got[1])},"
        f" {vec(got[2])}) should be ({vec(want[0])}, {vec(want[1])}, {vec(want[2])})."
    )


online_softmax_step = FunctionExercise(
    "ch10.online_softmax_step",
    _cases,
    _check,
    correct_message="Block after block, acc / l then equals softmax(all scores) @ values: the"
    " full row of scores never has to exist at once.",
    hint="m_new = max(m, s.max()); p = np.exp(s - m_new); the old l and acc were computed"
    " relative to m, so multiply them by exp(m - m_new) before adding p.sum() and p @ v.",
    solution="""
    def online_softmax_step(m, l, acc, s, v):
        m_new = max(m, s.max())
        p = np.exp(s - m_new)  # this block's weights, relative to the new maximum
        rescale = np.exp(m - m_new)  # 0 on the first block, where m = -inf
        return m_new, rescale * l + p.sum(), rescale * acc + p @ v""",
)
