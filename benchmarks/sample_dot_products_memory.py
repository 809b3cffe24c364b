"""Peak memory and time of sample_dot_products for 200,000 pairs at d_k = 1024, and whether its
threads pay: one thread (a plain chunked loop) against two, in turn, three times.

Run: python benchmarks/sample_dot_products_memory.py
The docstring of attnlib.sample_dot_products quotes the peak printed here. Peak memory is
measured with tracemalloc (numpy reports its allocations to it, from every thread); each
drawing thread holds two float32 buffers, so the peak is printed for one thread and for two.
The times vary with load: CPU time is the sum over threads.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from attnlib import sample_dot_products

D_K, N_PAIRS = 1024, 200_000


def main() -> None:
    for workers in (1, 2):
        rng = np.random.default_rng(0)
        tracemalloc.start()
        t0, c0 = time.perf_counter(), time.process_time()
        x = sample_dot_products(D_K, N_PAIRS, rng, workers=workers)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"{N_PAIRS:,} pairs at d_k = {D_K}, {workers} thread{'s' if workers > 1 else ''}:"
            f" peak {peak / 1e6:.1f} MB, {seconds:.2f} s ({cpu:.2f} s CPU)"
        )
    ratios = []
    for _ in range(3):  # interleaved, so that the machine's load falls on both alike
        walls = {}
        for workers in (1, 2):
            t0 = time.perf_counter()
            sample_dot_products(D_K, N_PAIRS, np.random.default_rng(0), workers=workers)
            walls[workers] = time.perf_counter() - t0
        ratios.append(walls[2] / walls[1])
    print(f"two threads / one, wall time, 3 pairs: {', '.join(f'{r:.2f}' for r in ratios)}")
    all_at_once = 2 * N_PAIRS * D_K * 4
    print(
        f"result alone: {x.nbytes / 1e6:.1f} MB;"
        f" q and k drawn all at once (float32): {all_at_once / 1e9:.2f} GB"
    )
    print(f"sample variance {x.var():.1f} (theory d_k = {D_K})")


if __name__ == "__main__":
    main()
