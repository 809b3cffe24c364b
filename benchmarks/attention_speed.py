"""Cost of attnlib.scaled_dot_product_attention against the bare numpy three-liner.

    python benchmarks/attention_speed.py [--repeats N]

"Bare numpy" is what a student would write, with no checks at all::

    s = Q @ K.swapaxes(-1, -2) / math.sqrt(d)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = w @ V

(with a mask: ``s = np.where(mask, s, -np.inf)`` before the softmax). ``math.sqrt``, a Python
float, keeps float32 in float32; ``np.sqrt(d)`` is a float64 scalar, which under NumPy 2's
promotion rules turns float32 scores into float64 (slower, and not a fair baseline).

The two are timed alternately, bare first in even repeats and attnlib first in odd ones, so
both see the same load on a shared machine; the figure is the median over repeats of the
per-repeat ratio attnlib / bare. Must: within 1.1x at T = 512 and T = 2048, d = 64, float32
and float64. Each row also checks that both return the same output and weights.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable

import numpy as np

from attnlib import causal_mask, scaled_dot_product_attention

D = 64


def bare_attention(Q, K, V, mask=None):
    """The three-line numpy attention (plus one line for a mask), no checks."""
    s = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ V, w


def seconds(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def measure(T: int, dtype: type, masked: bool, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(T)
    Q, K, V = (rng.standard_normal((T, D)).astype(dtype) for _ in range(3))
    mask = causal_mask(T) if masked else None

    def ours():
        return scaled_dot_product_attention(Q, K, V, mask=mask)

    def bare():
        return bare_attention(Q, K, V, mask)

    out, w = ours()
    out_bare, w_bare = bare()
    assert out.dtype == w.dtype == out_bare.dtype == w_bare.dtype == np.dtype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(w, w_bare, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, out_bare, rtol=tol, atol=tol)
    ours(), bare()  # warm up both
    t_ours, t_bare, ratios = [], [], []
    for r in range(repeats):
        if r % 2:
            a = seconds(ours)
            b = seconds(bare)
        else:
            b = seconds(bare)
            a = seconds(ours)
        t_ours.append(a)
        t_bare.append(b)
        ratios.append(a / b)
    return {
        "bare_ms": 1e3 * statistics.median(t_bare),
        "ours_ms": 1e3 * statistics.median(t_ours),
        "ratio": statistics.median(ratios),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rows = [(T, dtype, False) for T in (512, 2048) for dtype in (np.float32, np.float64)]
    rows += [(2048, np.float32, True), (2048, np.float64, True)]
    print(f"d = {D}, median of {args.repeats} interleaved repeats (ratio = attnlib / bare)")
    print(f"{'T':>5} {'dtype':>8} {'mask':>7} {'bare ms':>9} {'attnlib ms':>11} {'ratio':>6}")
    for T, dtype, masked in rows:
        m = measure(T, dtype, masked, args.repeats)
        print(
            f"{T:>5} {np.dtype(dtype).name:>8} {'causal' if masked else 'none':>7}"
            f" {m['bare_ms']:>9.2f} {m['ours_ms']:>11.2f} {m['ratio']:>6.2f}"
        )


if __name__ == "__main__":
    main()
