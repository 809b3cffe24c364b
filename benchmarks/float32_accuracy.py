"""float32 accuracy of attnlib.scaled_dot_product_attention, against float64 and PyTorch.

    python benchmarks/float32_accuracy.py [--seeds N]

For each shape, N seeded draws of float32 Q, K, V (standard normal, Q and K times ``spread``);
the error is the largest |output - float64 output| of the *same* float32 numbers computed in
float64. Printed: the median over draws for attnlib and, when torch is importable,
``torch.nn.functional.scaled_dot_product_attention`` on the same arrays, and the median of the
per-draw ratio attnlib / torch. PyTorch is never a dependency of the project: install it in a
scratch venv to get the last columns.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from attnlib import scaled_dot_product_attention

SHAPES = [(128, 8, 4.0), (512, 64, 1.0), (512, 64, 4.0), (1024, 64, 2.0), (128, 768, 1.0)]


def errors(T: int, d: int, spread: float, seed: int, torch) -> tuple[float, float | None]:
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((T, d), dtype=np.float32) for _ in range(3))
    Q *= spread
    K *= spread
    exact, _ = scaled_dot_product_attention(*(a.astype(np.float64) for a in (Q, K, V)))
    ours, _ = scaled_dot_product_attention(Q, K, V)
    ours_error = float(np.abs(ours - exact).max())
    if torch is None:
        return ours_error, None
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (Q, K, V))
    ).numpy()
    return ours_error, float(np.abs(theirs - exact).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
        print("(torch is not importable: attnlib's column only)")
    print(f"median over {args.seeds} seeds of max |float32 output - float64 output|")
    print(f"{'T':>5} {'d':>4} {'spread':>6} {'attnlib':>9} {'torch':>9} {'ratio':>6}")
    for T, d, spread in SHAPES:
        pairs = [errors(T, d, spread, seed, torch) for seed in range(args.seeds)]
        ours = statistics.median(p[0] for p in pairs)
        row = f"{T:>5} {d:>4} {spread:>6.1f} {ours:>9.2e}"
        if torch is not None:
            theirs = statistics.median(p[1] for p in pairs)
            ratio = statistics.median(p[0] / p[1] for p in pairs)
            row += f" {theirs:>9.2e} {ratio:>6.2f}"
        print(row)


if __name__ == "__main__":
    main()
