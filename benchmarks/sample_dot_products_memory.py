"""Peak memory and time of sample_dot_products for 200,000 pairs at d_k = 1024.

Run: python benchmarks/sample_dot_products_memory.py
The docstring of attnlib.sample_dot_products quotes the peak printed here. Peak memory is
measured with tracemalloc (numpy reports its allocations to it); the time varies with load.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from attnlib import sample_dot_products

D_K, N_PAIRS = 1024, 200_000


def main() -> None:
    rng = np.random.default_rng(0)
    tracemalloc.start()
    t0 = time.perf_counter()
    x = sample_dot_products(D_K, N_PAIRS, rng)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    all_at_once = 2 * N_PAIRS * D_K * 8
    print(f"{N_PAIRS:,} pairs at d_k = {D_K}: peak {peak / 1e6:.1f} MB, {seconds:.2f} s")
    print(
        f"result alone: {x.nbytes / 1e6:.1f} MB;"
        f" q and k drawn all at once: {all_at_once / 1e9:.2f} GB"
    )
    print(f"sample variance {x.var():.1f} (theory d_k = {D_K})")


if __name__ == "__main__":
    main()
