"""Peak memory and time of tiled_attention vs scaled_dot_product_attention.

Run: python benchmarks/tiled_attention_memory.py
Float64, d_k = d_v = 64, block 128, no mask; one run each (times vary with the machine's load).
Peak memory is measured with tracemalloc (numpy reports its allocations to it) and excludes the
inputs, which both functions share.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from attnlib import scaled_dot_product_attention, tiled_attention

D_K, BLOCK = 64, 128


def measure(fn, *args, **kwargs) -> tuple[float, float, np.ndarray]:
    """Return (peak MiB above the start, seconds, result) of one call."""
    tracemalloc.start()
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, seconds, result


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"d_k = {D_K}, float64, block_size = {BLOCK}")
    print(
        f"{'T':>6} {'plain MiB':>10} {'tiled MiB':>10} {'ratio':>7} {'plain s':>8} {'tiled s':>8}"
        f" {'max |diff|':>11}"
    )
    for T in (1024, 2048, 4096):
        Q, K, V = (rng.standard_normal((T, D_K)) for _ in range(3))
        plain_mib, plain_s, (plain, _) = measure(scaled_dot_product_attention, Q, K, V)
        tiled_mib, tiled_s, tiled = measure(tiled_attention, Q, K, V, block_size=BLOCK)
        diff = np.abs(plain - tiled).max()
        print(
            f"{T:>6} {plain_mib:>10.1f} {tiled_mib:>10.2f} {plain_mib / tiled_mib:>7.0f}"
            f" {plain_s:>8.2f} {tiled_s:>8.2f} {diff:>11.1e}"
        )
    print(f"(one T x T float64 matrix at T = 4096 is {4096**2 * 8 / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
