"""Every speed and memory figure of the project in one table (benchmarks/README.md shows its
latest output).

    python benchmarks/run_all.py              # everything, about eight minutes on 2 cores
    python benchmarks/run_all.py --no-suite   # skip the timed runs of the test suite
    python benchmarks/run_all.py --no-parts   # time the whole suite, not each of its parts
    python benchmarks/run_all.py --no-browser # skip the felt latency in chromium (~1 minute)
    python benchmarks/run_all.py --no-site    # skip the site's budgets (~1.5 minutes)

Rows, each with its target:

* the test suite's two tiers, as README's test command runs them: the fast tier
  (``python -m pytest -q``), target under 50 s (the aim is 30 s), with the CPU-seconds the whole
  machine spent meanwhile and the share of the cores it kept busy, and the browser tier
  (``python -m pytest -n 0 tests/browser``); then each part of the fast tier run alone, wall and
  CPU (``--no-parts`` skips them): the unit tests, the notebooks under nbval, and collection;
* each notebook: wall time to execute it top to bottom in a fresh kernel, kernel start included
  (what nbval pays per notebook), target a few seconds;
* each lab: median update (the control's callback, the partial redraw and the PNG) next to the
  naive rebuild that ``interact`` would do, target under 16 ms (one frame at 60 Hz);
* attention: ``attnlib.scaled_dot_product_attention`` against the bare numpy three-liner,
  interleaved median ratio at T = 512 and 2048, d = 64, target at most 1.1x;
* float32 accuracy: attention's largest distance from the float64 answer on the same float32
  inputs, attnlib against PyTorch (when importable; it is no dependency of the project), median
  of 10 draws per shape of ``float32_accuracy.SHAPES`` (~10 s), target at most 1.2x PyTorch's;
* memory: peak of tiled against plain attention at T = 4096 (tracemalloc), float64;
* notebook 14's model (``induction_training.rows``): one training run with the notebook's
  settings, target at most 5 s; the notebook under nbval, target at most 30 s (its row among
  the notebooks times a plain execution, against the same target); the heads formed over its
  five untuned seeds, target at least 4 of 5;
* felt latency: in headless chromium, from an arrow key or a drag to the gradient lab's new
  picture, voila and JupyterLab, notebook and present size, once the frames drawn ahead have
  arrived, and again with drawing ahead off (``ATTNLIB_DRAW_AHEAD=0``: one round trip a
  move); target median under 50 ms and 90th percentile under 100 ms (``--no-browser`` skips
  it; it needs chromium, playwright and voila, as the browser test does);
* the site: its clean build's time (target at most 120 s), its size (at most 150 MB), and what
  each page loads before the reader touches anything (at most 5 MB), ``site_budgets.py``
  (``--no-site`` skips it; it needs the site's tools, the npm files and chromium).

The measurements are the other scripts' own functions (``attention_speed``,
``float32_accuracy``, ``induction_training``, ``lab_update_speed``,
``tiled_attention_memory``, ``lab_latency_in_browser``, ``site_budgets``); this script only runs
them together and prints one table, with the machine it ran on. Timings move with the machine's
load: compare rows of one run.

Its output is the table. Every kernel a notebook run starts writes one warning to the stderr it
inherits ("Kernel is running over TCP without encryption", expected on a local machine); the
kernels' stderr is held back and shown after each notebook run without that line, or in full if
the run fails.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: The suite's second tier: the tests that drive chromium (README's test command runs it).
BROWSER_TIER = ["-n", "0", "tests/browser"]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

import attention_speed  # noqa: E402
import float32_accuracy  # noqa: E402
import induction_training  # noqa: E402
import lab_update_speed  # noqa: E402
import tiled_attention_memory  # noqa: E402

from attnlib import scaled_dot_product_attention, tiled_attention  # noqa: E402
from tools.run_notebooks import execute_only  # noqa: E402

Row = tuple[str, str, str, str]  # (what, figure, target, met?)
#: Notebooks with a time target of their own, in seconds (the others: a few seconds).
NOTEBOOK_TARGETS = {"14_induction_heads": induction_training.NOTEBOOK_TARGET}
#: Naive rebuilds timed per lab (each costs 0.1-0.8 s; the gradient lab has 310 moves a pass).
NAIVE_MOVES = 12
#: The line every kernel writes to stderr as it starts (ipykernel on jupyter_client's TCP
#: transport): expected, and held back from the output.
KERNEL_TCP_WARNING = re.compile(
    r"^\[IPKernelApp\] WARNING \| Kernel is running over TCP without encryption\."
)

T = TypeVar("T")


@contextlib.contextmanager
def stderr_held(held: list[str]) -> Iterator[None]:
    """Send file descriptor 2 (this process's stderr, and every child's) to a temporary file;
    on leaving, restore it and append what was written to ``held``."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            held.append(sink.read().decode(errors="replace"))


def run_quietly(step: Callable[..., T], *args: object) -> T:
    """``step(*args)`` with the stderr of it and its children held back: shown in full if it
    raises, else shown without the kernels' :data:`KERNEL_TCP_WARNING` lines."""
    held: list[str] = []
    try:
        with stderr_held(held):
            result = step(*args)
    except BaseException:
        sys.stderr.write("".join(held))
        raise
    lines = "".join(held).splitlines(keepends=True)
    sys.stderr.write("".join(line for line in lines if not KERNEL_TCP_WARNING.match(line)))
    return result


def system_cpu_seconds() -> float:
    """CPU-seconds spent so far by every process on the machine (``/proc/stat``: user, nice,
    system, irq and softirq time of all cores).

    Counted system-wide because chromium's processes and the Jupyter servers the browser tests
    start are not waited-for children of pytest: ``/usr/bin/time`` misses about a third of the
    suite's CPU.
    """
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed_pytest(*args: str) -> tuple[float, float, str]:
    """Run ``python -m pytest -q -p no:randomly *args`` in the repository; return its wall
    seconds, the CPU-seconds the whole machine spent meanwhile, and pytest's closing line."""
    cpu, start = system_cpu_seconds(), time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - start, system_cpu_seconds() - cpu
    summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    return wall, cpu, summary


#: The fast tier's parts, each run alone after the tiers: (name, pytest arguments).
SUITE_PARTS = [
    ("unit tests (2 workers)", ["tests"]),
    ("notebooks under nbval (2 workers)", ["notebooks"]),
    ("collection alone", ["--collect-only", "-n", "0"]),
]


def suite_rows(parts: bool) -> list[Row]:
    """The whole suite's wall time and system-wide CPU; with ``parts``, each part's too.

    Two cores give at most 2 CPU-seconds a second: the CPU figure over 2 is the least wall time
    the suite could take on this machine, however well its workers were spread.
    """
    wall, cpu, summary = timed_pytest()
    use = cpu / (wall * (os.cpu_count() or 1))
    rows = [
        (
            "fast tier `pytest` (wall)",
            f"{wall:.1f} s: {summary}",
            "< 50 s (aim 30)",
            verdict(wall < 50),
        ),
        ("fast tier (CPU, system-wide)", f"{cpu:.0f} CPU-s, {use:.0%} of the cores", "", ""),
    ]
    wall, cpu, summary = timed_pytest(*BROWSER_TIER)
    rows.append(("browser tier (wall)", f"{wall:.1f} s: {summary}", "", ""))
    rows.append(("browser tier (CPU, system-wide)", f"{cpu:.0f} CPU-s", "", ""))
    for name, args in SUITE_PARTS if parts else []:
        wall, cpu, summary = timed_pytest(*args)
        rows.append((f"  part: {name}", f"{wall:.1f} s wall, {cpu:.0f} CPU-s: {summary}", "", ""))
    return rows


def notebook_rows() -> list[Row]:
    rows = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        seconds = run_quietly(execute_only, path)
        target = NOTEBOOK_TARGETS.get(path.stem)
        wanted = f"<= {target:g} s" if target else "a few s"
        met = verdict(seconds < (target or 5))
        rows.append((f"notebook {path.stem}", f"{seconds:.1f} s", wanted, met))
    return rows


def lab_rows(repeats: int) -> list[Row]:
    rows = []
    for name, make in lab_update_speed.discover_labs().items():
        lab = make()
        lab_update_speed.time_updates(lab, 1)  # warm up caches and fonts
        wall, cpu = lab_update_speed.time_updates(lab, repeats)
        naive = naive_seconds(lab, NAIVE_MOVES)
        update = 1000 * statistics.median(wall)
        figure = (
            f"{update:.1f} ms ({1000 * statistics.median(cpu):.1f} ms CPU),"
            f" naive {1000 * statistics.median(naive):.0f} ms"
        )
        rows.append((f"lab {name} update", figure, "< 16 ms", verdict(update < 16)))
    return rows


def naive_seconds(lab, n_moves: int) -> list[float]:
    """Seconds of ``lab.render_naive()`` after each of the first ``n_moves`` control moves."""
    seconds = []
    for control, value in itertools.islice(lab_update_speed.moves(lab), n_moves):
        control.value = value
        start = time.perf_counter()
        lab.render_naive()
        seconds.append(time.perf_counter() - start)
    return seconds


def attention_rows(repeats: int) -> list[Row]:
    rows = []
    for T in (512, 2048):
        for dtype in (np.float32, np.float64):
            m = attention_speed.measure(T, dtype, masked=False, repeats=repeats)
            rows.append(
                (
                    f"attention T={T} {np.dtype(dtype).name}",
                    f"{m['ratio']:.2f}x bare numpy ({m['ours_ms']:.1f} vs {m['bare_ms']:.1f} ms)",
                    "<= 1.1x",
                    verdict(m["ratio"] <= 1.1),
                )
            )
    return rows


def accuracy_rows(seeds: int) -> list[Row]:
    """float32 attention's distance from float64, attnlib against PyTorch when importable (a
    few seconds: ``seeds`` draws of each of ``float32_accuracy.SHAPES``)."""
    torch = float32_accuracy.import_torch()
    rows = []
    for T, d, spread in float32_accuracy.SHAPES:
        m = float32_accuracy.measure(T, d, spread, seeds, torch)
        figure = f"max error {m['attnlib']:.2g}"
        if torch is None:
            figure += " (torch not importable: no comparison)"
        else:
            figure += f" vs torch {m['torch']:.2g} ({m['ratio']:.2f}x, median of {seeds} draws)"
        rows.append(
            (
                f"float32 error T={T} d={d} spread {spread:g}",
                figure,
                "<= 1.2x torch",
                "" if torch is None else verdict(m["ratio"] <= 1.2),
            )
        )
    return rows


def memory_rows() -> list[Row]:
    T, d = 4096, tiled_attention_memory.D_K
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    plain, _, _ = tiled_attention_memory.measure(scaled_dot_product_attention, Q, K, V)
    tiled, _, _ = tiled_attention_memory.measure(
        tiled_attention, Q, K, V, block_size=tiled_attention_memory.BLOCK
    )
    figure = f"tiled {tiled:.1f} MiB vs plain {plain:.0f} MiB ({plain / tiled:.0f}x less)"
    return [(f"peak memory T={T} float64", figure, "tiled << plain", verdict(tiled < plain / 10))]


def latency_rows() -> list[Row]:
    import lab_latency_in_browser  # here: it needs playwright, which the other rows do not

    browser = lab_latency_in_browser.bt
    missing = browser.missing(browser.FULL_CHROMIUM, "chromium") + browser.VOILA_MISSING
    if missing:
        return [("felt latency", "not measured: " + "; ".join(missing), "< 50 / 100 ms", "NO")]
    rows = []
    measured = [
        (ahead, m)
        for ahead in (True, False)
        for m in lab_latency_in_browser.measure_all(draw_ahead=ahead)
    ]
    for ahead, m in measured:
        median, p90 = statistics.median(m.ms), lab_latency_in_browser.p90(m.ms)
        rows.append(
            (
                f"felt latency {m.frontend}, {m.size}, {m.kind}, ahead {'on' if ahead else 'off'}",
                f"median {median:.0f} ms, p90 {p90:.0f} ms ({len(m.ms)} moves)",
                "< 50 / 100 ms",
                verdict(median < 50 and p90 < 100),
            )
        )
    return rows


def site_rows() -> list[Row]:
    import site_budgets  # here: it needs playwright, which the other rows do not

    missing = site_budgets.site_serving.missing()
    if missing:
        return [("site budgets", "not measured: " + "; ".join(missing), "", "NO")]
    return site_budgets.rows(site_budgets.measure())


def verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-suite", action="store_true", help="skip the timed test-suite run")
    parser.add_argument("--no-browser", action="store_true", help="skip the felt latency")
    parser.add_argument("--no-site", action="store_true", help="skip the site's budgets")
    parser.add_argument(
        "--no-parts", action="store_true", help="time the whole suite only, not each part"
    )
    parser.add_argument("--repeats", type=int, default=11, help="repeats of the timed loops")
    args = parser.parse_args()
    rows = [] if args.no_suite else suite_rows(parts=not args.no_parts)
    rows += notebook_rows()
    rows += lab_rows(max(1, args.repeats // 4))
    rows += attention_rows(args.repeats)
    rows += accuracy_rows(seeds=10)
    rows += memory_rows()
    rows += run_quietly(induction_training.rows)
    rows += [] if args.no_browser else latency_rows()
    rows += [] if args.no_site else site_rows()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python"
        f" {platform.python_version()}, numpy {np.__version__}; load average before: {load}"
    )
    widths = [
        max(len(r[i]) for r in [("what", "figure", "target", "met"), *rows]) for i in range(4)
    ]
    for i, row in enumerate([("what", "figure", "target", "met"), *rows]):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")
        if i == 0:
            print("| " + " | ".join("-" * w for w in widths) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
