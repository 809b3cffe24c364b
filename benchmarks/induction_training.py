"""Notebook 14's model: how long one training run takes, and what training forms over seeds.

    python benchmarks/induction_training.py              # everything: a few minutes on 2 cores
    python benchmarks/induction_training.py --no-seeds   # the timings only
    python benchmarks/induction_training.py --no-notebook --runs 3

Prints, with the machine's load average before and after (timings move with it; the CPU
seconds of this process, ``time.process_time``, move less):

* **one model** with the notebook's settings (``attnlib.induction.train`` defaults: 400 Adam
  steps of 16 rows, float32, numpy's BLAS on one thread): wall and CPU seconds, min and median
  of ``--runs`` runs; target at most 5 s. Then the two choices ``train`` makes, each timed in
  pairs against it (run in turn, ratio per pair, median): numpy's BLAS on two threads, and
  float64 arithmetic;
* **the notebook under nbval** (``pytest -n 0 notebooks/14_induction_heads.ipynb``, the
  machine's own numeric configuration): wall seconds, target at most 30 s;
* **over seeds**: the notebook's five seeds (10-14, never used to tune the settings) and the
  ten tuning seeds (0-9). Per seed: heads formed (best layer-1 induction score at least 0.5 on
  held-out repeated sequences, and zeroing that head at least doubles the loss on repeats),
  the step of the drop, the best induction and previous-token scores, the ablation ratio.
  Baselines per seed: the untrained start and a model trained on rows that never repeat; and
  chance, 1 / (keys a query may see), averaged. Then RoPE at 400 and 800 steps, learned
  positions at 800 steps, and the evaluation at h = 16 (the whole context), on the five
  notebook seeds.

:func:`rows` gives the headline figures to ``run_all.py``.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attnlib import induction  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "14_induction_heads.ipynb"
#: The notebook's seeds, never used to tune the settings, and the seeds that were.
HELD_OUT_SEEDS, TUNING_SEEDS = (10, 11, 12, 13, 14), tuple(range(10))
#: Targets: seconds to train one model, and to run the notebook under nbval.
TRAIN_TARGET, NOTEBOOK_TARGET = 5.0, 30.0
Row = tuple[str, str, str, str]  # (what, figure, target, met?), as run_all.py prints them


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (this process) of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def variant(seed: int, threads: int, dtype: type) -> Callable[[], object]:
    """``train(seed)``'s work with numpy's BLAS on ``threads`` threads in ``dtype``: the body
    of ``induction.train`` with its two choices made otherwise."""

    def run() -> object:
        rng = np.random.default_rng(seed)
        params = induction.init_params(rng).astype(dtype)
        with threadpool_limits(limits=threads, user_api="blas"):
            return induction._adam(params, rng, 400, 16, 0.03, True, 20)

    return run


def training_times(runs: int) -> dict[str, list[float]]:
    """Seconds of ``train(seed)`` (wall and CPU), and the paired ratios of the variants."""
    times: dict[str, list[float]] = {"wall": [], "cpu": [], "2 threads": [], "float64": []}
    for i in range(runs):
        seed = HELD_OUT_SEEDS[i % len(HELD_OUT_SEEDS)]
        wall, cpu = timed(lambda seed=seed: induction.train(seed))
        times["wall"].append(wall)
        times["cpu"].append(cpu)
        for name, threads, dtype in (("2 threads", 2, np.float32), ("float64", 1, np.float64)):
            other, _ = timed(variant(seed, threads, dtype))
            times[name].append(other / wall)
    return times


def notebook_seconds() -> tuple[float, str]:
    """Wall seconds of the notebook under nbval, and pytest's closing line."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:randomly", str(NOTEBOOK)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    return time.perf_counter() - start, summary


def held_out(half_length: int = 12) -> np.ndarray:
    """The notebook's held-out sequences (its generator, 2024; 2025 for h = 16)."""
    seed = 2024 if half_length == 12 else 2025
    return induction.repeated_sequences(np.random.default_rng(seed), 100, half_length, 30)


@functools.cache
def trained(seed: int, **settings) -> induction.Trained:
    """``induction.train(seed, **settings)``, trained once per run of this script."""
    return induction.train(seed, **settings)


def best_induction(params: induction.Params, tokens: np.ndarray) -> float:
    """The best layer-1 induction score."""
    return float(induction.head_scores(params, tokens)["induction"][1].max())


def seed_figures(seeds: tuple[int, ...], **settings) -> list[dict]:
    """Per seed: the summary of the trained model, and its untrained start's best score."""
    tokens = held_out()
    return [
        {
            "seed": seed,
            "summary": induction.summary(trained(seed, **settings), tokens),
            "untrained": best_induction(trained(seed, **settings).checkpoints[0].params, tokens),
        }
        for seed in seeds
    ]


def baseline_scores(seeds: tuple[int, ...]) -> list[float]:
    """The best layer-1 induction score of a model trained on rows that never repeat."""
    return [best_induction(trained(s, repeats=False).params, held_out()) for s in seeds]


def print_seeds(title: str, figures: list[dict], baseline: list[float] | None = None) -> None:
    formed = sum(f["summary"].formed for f in figures)
    print(f"\n{title}: heads formed in {formed} of {len(figures)}")
    print("seed | formed | drop | induction | previous-token | loss  | ablation ratio | untrained")
    for f in figures:
        s = f["summary"]
        print(
            f"{f['seed']:4d} | {s.formed!s:6} | {s.drop_step!s:>4} | {s.induction_score:9.3f} |"
            f" {s.previous_token_score:14.3f} | {s.loss:.3f} | {s.ablation_ratio:14.2f} |"
            f" {f['untrained']:9.3f}"
        )
    if baseline is not None:
        print(f"never-repeating rows, best layer-1 induction score: {np.round(baseline, 3)}")


def chance(half_length: int = 12) -> float:
    """An even spread's induction score: the mean of 1 / (i + 1) over the second half."""
    return float(np.mean(1 / (np.arange(half_length, 2 * half_length) + 1)))


def rows(runs: int = 3) -> list[Row]:
    """The headline rows for run_all.py: training time, the notebook under nbval, the seeds."""
    times = training_times(runs)
    notebook, summary = notebook_seconds()
    figures = seed_figures(HELD_OUT_SEEDS)
    formed = sum(f["summary"].formed for f in figures)
    median = statistics.median(times["wall"])
    return [
        (
            "induction: train one model (notebook 14)",
            f"{median:.2f} s median, {min(times['wall']):.2f} min of {runs}"
            f" ({statistics.median(times['cpu']):.2f} CPU-s)",
            f"<= {TRAIN_TARGET:g} s",
            "yes" if median <= TRAIN_TARGET else "NO",
        ),
        (
            "notebook 14 under nbval",
            f"{notebook:.1f} s: {summary}",
            f"<= {NOTEBOOK_TARGET:g} s",
            "yes" if notebook <= NOTEBOOK_TARGET else "NO",
        ),
        (
            "induction: heads formed, 5 untuned seeds",
            f"{formed} of 5",
            ">= 4 of 5",
            "yes" if formed >= 4 else "NO",
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed training runs")
    parser.add_argument("--no-seeds", action="store_true", help="skip the figures over seeds")
    parser.add_argument("--no-notebook", action="store_true", help="skip the nbval run")
    args = parser.parse_args()
    print(f"load average before: {load()} ({os.cpu_count()} cores)")

    times = training_times(args.runs)
    print(
        f"train one model (400 steps, float32, 1 BLAS thread): wall {min(times['wall']):.2f} s"
        f" min, {statistics.median(times['wall']):.2f} s median of {args.runs}; CPU"
        f" {min(times['cpu']):.2f} s min, {statistics.median(times['cpu']):.2f} s median"
        f" (target <= {TRAIN_TARGET:g} s)"
    )
    for name in ("2 threads", "float64"):
        r = times[name]
        print(
            f"  the same with {name}: {statistics.median(r):.2f}x the time"
            f" (paired, median of {len(r)}; {min(r):.2f}-{max(r):.2f})"
        )
    if not args.no_notebook:
        seconds, summary = notebook_seconds()
        print(f"notebook 14 under nbval: {seconds:.1f} s wall, {summary} (target <= 30 s)")

    if not args.no_seeds:
        print(f"\nchance (an even spread), h = 12: {chance():.3f}; h = 16: {chance(16):.3f}")
        print_seeds(
            "notebook settings, the five untuned seeds",
            seed_figures(HELD_OUT_SEEDS),
            baseline_scores(HELD_OUT_SEEDS),
        )
        print_seeds("notebook settings, the ten tuning seeds", seed_figures(TUNING_SEEDS))
        print_seeds("RoPE, 400 steps", seed_figures(HELD_OUT_SEEDS, positions="rope"))
        print_seeds("RoPE, 800 steps", seed_figures(HELD_OUT_SEEDS, positions="rope", steps=800))
        print_seeds("learned positions, 800 steps", seed_figures(HELD_OUT_SEEDS, steps=800))
        long = held_out(16)
        print("\nevaluated at h = 16 (the whole context), the five untuned seeds:")
        for seed in HELD_OUT_SEEDS:
            s = induction.summary(trained(seed), long)
            print(
                f"  seed {seed}: formed {s.formed}, induction {s.induction_score:.3f},"
                f" ablation ratio {s.ablation_ratio:.2f}"
            )
    print(f"\nload average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
