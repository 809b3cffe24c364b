"""Peak memory and time of tiled_attention vs scaled_dot_product_attention.

Run: python benchmarks/tiled_attention_memory.py [--dtype float32|float64] [--max-T 4096]

d_k = d_v = 64, no mask, one run per row. Peak memory is measured with tracemalloc (numpy reports
its allocations to it) and excludes the inputs, which both functions share; it is also given in
units of one T x T matrix of the dtype. Time is processor time of this process
(``time.process_time``), which other jobs on a shared machine disturb much less than wall time;
for steady figures run with ``OPENBLAS_NUM_THREADS=1``.

Two tables: growing T at block size 128 (plain peaks grow like T^2, tiled ones like T), then
growing block size at one T (tiled peaks grow like block^2; very small blocks cost Python
overhead per tile).
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc

import numpy as np

from attnlib import scaled_dot_product_attention, tiled_attention

D_K, BLOCK = 64, 128


def measure(fn, *args, **kwargs) -> tuple[float, float, np.ndarray]:
    """Return (peak MiB above the start, processor seconds, result) of one call."""
    tracemalloc.start()
    t0 = time.process_time()
    result = fn(*args, **kwargs)
    seconds = time.process_time() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    parser.add_argument("--max-T", type=int, default=4096, help="largest T of the first table")
    args = parser.parse_args()
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)

    def qkv(T: int) -> list[np.ndarray]:
        return [rng.standard_normal((T, D_K)).astype(dtype) for _ in range(3)]

    sizes = [n for n in (512, 1024, 2048, 4096, 8192) if n <= args.max_T]
    print(f"d_k = d_v = {D_K}, {dtype}, block_size = {BLOCK}")
    print(
        f"{'T':>6} {'plain MiB':>10} {'(T x T)s':>9} {'tiled MiB':>10} {'ratio':>6}"
        f" {'plain s':>8} {'tiled s':>8} {'max |diff|':>11}"
    )
    for T in sizes:
        Q, K, V = qkv(T)
        plain_mib, plain_s, (plain, _) = measure(scaled_dot_product_attention, Q, K, V)
        tiled_mib, tiled_s, tiled = measure(tiled_attention, Q, K, V, block_size=BLOCK)
        matrix_mib = T * T * dtype.itemsize / 2**20
        diff = np.abs(plain - tiled).max()
        print(
            f"{T:>6} {plain_mib:>10.1f} {plain_mib / matrix_mib:>9.2f} {tiled_mib:>10.2f}"
            f" {plain_mib / tiled_mib:>6.0f} {plain_s:>8.3f} {tiled_s:>8.3f} {diff:>11.1e}"
        )
    T = sizes[-1] // 2 if len(sizes) > 1 else sizes[-1]
    Q, K, V = qkv(T)
    print(f"\ntiled_attention at T = {T}, growing block size")
    print(f"{'block':>6} {'tiles':>7} {'peak MiB':>9} {'tiled s':>8}")
    for block in (16, 32, 64, 128, 256, 512):
        mib, seconds, _ = measure(tiled_attention, Q, K, V, block_size=block)
        print(f"{block:>6} {math.ceil(T / block) ** 2:>7} {mib:>9.2f} {seconds:>8.3f}")


if __name__ == "__main__":
    main()
