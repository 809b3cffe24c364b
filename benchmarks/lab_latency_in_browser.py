"""How long from a key press or a mouse drag to the new picture, in a real browser?

    python benchmarks/lab_latency_in_browser.py [--keys N] [--drag-moves N] [--opening]

Serves a small notebook (the gradient lab at notebook size, and at present size, after a cell
that times the lab's updates) with JupyterLab and with voila, opens it in headless chromium
(Debian's, as the browser test does) and measures, in the page (``performance.now``), for the
lab's "training step" slider:

* keys: the time from each ArrowRight keydown to the lab's picture changing (``img`` src);
* drags: the mouse held on the slider handle and moved in small steps at 60 Hz; for every new
  slider value, the time from the pointer event that produced it to the first picture showing
  that value or a later one (the readout beside the slider arrives with the picture).

Prints median and 90th percentile per frontend, size and input. Aim: median < 50 ms,
90th percentile < 100 ms. The machine's load changes the figures: compare within one run.

By default the moves start once the kernel has drawn ahead every frame one move away
(:mod:`attnlib.labs.ahead`; the benchmark waits until no picture-sized message has reached
the page for 2 s and prints how long that took), where a lab is a few seconds after it appears.
With ``--opening`` they start at once, while the frames are still being drawn and sent: a
student's first moves.

Under each figure: *kernel*, the median time of the lab's update in the kernel (the served
notebook times ``Lab._draw`` into a log file; it draws no picture for a state the browser
has), and how many pictures the kernel sent while the moves were made (frames drawn ahead
included; the page notes every websocket message as it arrives).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import nbformat
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import browser as bt  # noqa: E402  (the browser tests' server and page helpers)

CELLS = [
    "from attnlib.labs import gradient_lab\n\ngradient_lab()",
    "gradient_lab(present=True)",
]

#: Run first in the served notebook: every ``Lab.update`` appends "start end" (ms, wall clock)
#: to the log file named by {log!r}.
TIME_UPDATES = """import time
from attnlib.labs.lab import Lab

_draw = Lab._draw


def _timed_update(self):
    start = 1000 * time.time()
    _draw(self)
    with open({log!r}, "a") as log:
        log.write(f"{{start}} {{1000 * time.time()}}\\n")


Lab._draw = _timed_update"""


RECORD = """lab => {
    const img = lab.querySelector('img');
    const readouts = lab.querySelectorAll('.attnlib-readout');
    const handle = lab.querySelectorAll('.noUi-handle')[1];
    const log = {frames: [], inputs: []};
    new MutationObserver(() => log.frames.push(
        [performance.now(), parseInt(readouts[1].innerText),
         performance.timeOrigin + performance.now()])).observe(
        img, {attributes: true, attributeFilter: ['src']});
    const note = e => setTimeout(() => log.inputs.push(
        [e.timeStamp, parseInt(handle.getAttribute('aria-valuenow'))]), 0);
    handle.addEventListener('keydown', note);
    document.addEventListener('pointermove', note);
    window.__latency = log;
}"""


def latencies(log: dict) -> list[float]:
    """For each new input value: ms until the first picture drawing it (or a later value)."""
    out, last = [], None
    for t, value in log["inputs"]:
        if value == last:
            continue
        last = value
        later = [frame[0] for frame in log["frames"] if frame[0] >= t and frame[1] >= value]
        if later:
            out.append(later[0] - t)
    return out


def breakdown(arrivals: list, updates: list) -> str:
    """The kernel's median update time, and how many pictures reached the page meanwhile."""
    kernel = [end - start for start, end in updates]
    pictures = sum(size > bt.PICTURE_BYTES for _, size in arrivals)
    median = f"{statistics.median(kernel):4.0f} ms" if kernel else "none"
    return f"kernel: {len(kernel)} updates, median {median}; {pictures} pictures received"


def summary(ms: list[float]) -> str:
    if not ms:
        return "no data"
    return f"median {statistics.median(ms):5.0f} ms, p90 {p90(ms):5.0f} ms ({len(ms)} values)"


def read_updates(path: Path) -> list[tuple[float, float]]:
    """The (start, end) of every lab update the kernel logged, and empty the log."""
    text = path.read_text() if path.exists() else ""
    path.write_text("")
    return [tuple(map(float, line.split())) for line in text.splitlines() if line]


def recorded(page, log_file: Path) -> tuple[list[float], str]:
    """The latencies since RECORD was armed, and where the time went."""
    log = page.evaluate("window.__latency")
    arrivals = page.evaluate("window.__arrivals.splice(0)")
    return latencies(log), breakdown(arrivals, read_updates(log_file))


def measure(page, lab, keys: int, drag_moves: int, log_file: Path) -> dict[str, tuple]:
    lab.scroll_into_view_if_needed()
    results = {}
    handle = lab.locator(".noUi-handle").nth(1)
    lab.evaluate(RECORD)
    page.evaluate("window.__arrivals.length = 0")
    read_updates(log_file)
    handle.focus()
    for _ in range(keys):
        before = bt.picture(lab)
        page.keyboard.press("ArrowRight")
        bt.new_picture(lab, before, "ArrowRight")
    results["keys"] = recorded(page, log_file)
    lab.evaluate(RECORD)
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    track = lab.locator(".noUi-base").nth(1).bounding_box()
    step = 0.6 * (track["x"] + track["width"] - x) / drag_moves
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(drag_moves):
        page.mouse.move(x + step * (i + 1), y)
        time.sleep(1 / 60)
    page.mouse.up()
    page.wait_for_timeout(1500)  # let the last pictures arrive
    results["drag"] = recorded(page, log_file)
    return results


class Measured(NamedTuple):
    """The latencies of one input on one lab in one frontend."""

    frontend: str  # "voila" or "JupyterLab"
    size: str  # "notebook size" or "present size"
    kind: str  # "keys" or "drag"
    ms: list[float]
    where: str  # the kernel's part (see the module docstring)


def p90(ms: list[float]) -> float:
    return statistics.quantiles(ms, n=10)[-1] if len(ms) > 1 else ms[0]


def measure_frontend(
    frontend: str, page, log_file: Path, keys: int, drag_moves: int, opening: bool
) -> list[Measured]:
    """Measure both labs on the open page."""
    if not opening:
        waited = bt.settle(page)
        pictures = bt.pictures_since(page, 0)
        print(f"{frontend}: settled ({pictures} pictures arrived; quiet after {waited:.1f} s)")
    labs = page.locator(".attnlib-lab")
    return [
        Measured(frontend, size, kind, ms, where)
        for i, size in enumerate(("notebook size", "present size"))
        for kind, (ms, where) in measure(page, labs.nth(i), keys, drag_moves, log_file).items()
    ]


def run_all(page, tries: int = 3) -> None:
    """Run every cell of the open notebook, again if nothing ran (on a busy machine JupyterLab
    sometimes replaces the kernel while the page connects, and the first Run All is lost)."""
    for attempt in range(tries):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("[data-command='runmenu:run-all']").click()
        try:
            page.locator(".attnlib-present img").wait_for(timeout=30_000)
            return
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise


def measure_all(keys: int = 15, drag_moves: int = 40, opening: bool = False) -> list[Measured]:
    """Serve the notebook with voila and JupyterLab, measure both labs in each."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        notebook = home / "latency.ipynb"
        log_file = home / "updates.log"
        cells = [TIME_UPDATES.format(log=str(log_file)), *CELLS]
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3"}
        nbformat.write(nb, notebook)
        lab_log, voila_log = (home / "lab.log").open("wb"), (home / "voila.log").open("wb")
        lab_proc, base, token = bt.start_jupyterlab(home / "lab", [notebook], lab_log)
        voila_proc, voila_url = bt.start_voila(home, notebook, voila_log)
        try:
            deadline = time.monotonic() + 90
            bt.wait_until_serving(
                lab_proc, f"{base}/api/status?token={token}", home / "lab.log", deadline
            )
            bt.wait_until_listening(voila_proc, voila_url, home / "voila.log", deadline)
            with bt.sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(bt.CHROMIUM), args=bt.LAUNCH_ARGS
                )
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.add_init_script(bt.NOTE_ARRIVALS)
                page.goto(voila_url, timeout=90_000)
                page.locator(".attnlib-present img").wait_for(timeout=90_000)
                results = measure_frontend("voila", page, log_file, keys, drag_moves, opening)
                bt.open_session(base, token, "latency.ipynb")  # or Run All may be lost (see there)
                page.goto(f"{base}/lab/tree/latency.ipynb?reset&token={token}", timeout=60_000)
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(
                    timeout=60_000
                )
                run_all(page)
                results += measure_frontend("JupyterLab", page, log_file, keys, drag_moves, opening)
                browser.close()
        finally:
            for proc in (voila_proc, lab_proc):
                bt.stop(proc)
            lab_log.close()
            voila_log.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=15, help="arrow-key presses per lab")
    parser.add_argument("--drag-moves", type=int, default=40, help="mouse moves per drag")
    parser.add_argument(
        "--opening", action="store_true", help="measure at once, while frames are drawn ahead"
    )
    args = parser.parse_args()
    for m in measure_all(args.keys, args.drag_moves, args.opening):
        print(f"{m.frontend}, {m.size:13}, {m.kind:4}: {summary(m.ms)}")
        print(f"{'':{len(m.frontend) + 22}}{m.where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
