"""How long from a key press or a mouse drag to the new picture, in a real browser?

    python benchmarks/lab_latency_in_browser.py [--keys N] [--drag-moves N] [--opening] [--off]

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
(:mod:`attnlib.liveview.ahead`; the benchmark waits until no picture-sized message has reached
the page for 2 s and prints how long that took), where a lab is a few seconds after it appears.
With ``--opening`` they start at once, while the frames are still being drawn and sent: a
student's first moves. With ``--off`` the servers run with ``ATTNLIB_DRAW_AHEAD=0`` (drawing
ahead off, :mod:`attnlib.liveview.showing`): every move is one kernel round trip.

Under each figure: *kernel*, the median time of the lab's update in the kernel (the served
notebook times ``Lab._draw`` into a log file; it draws no picture for a state the browser
has), and how many pictures the kernel sent while the moves were made (frames drawn ahead
included; the page notes every websocket message as it arrives).

Measurements so far (moved here from the lab machinery's docstring)
-------------------------------------------------------------------
Felt latency. Once a browser shows a lab, the kernel draws ahead, between moves, every frame one
move away (each value of each slider, toggle and checkbox, the other controls where they are) and
the browser keeps them: a move to such a state shows its picture, caption and readouts at once,
with no round trip (:mod:`attnlib.liveview.ahead`). Measured in headless chromium on the 2-core
machine (``benchmarks/lab_latency_in_browser.py``, 2026-12-01, gradient lab), from a key press or a
drag to the new picture, JupyterLab and voila, notebook and present size: keys 4-9 ms median (90th
percentile 7-51 ms), drags 6-20 ms (17-58 ms), against 35-95 ms medians before. Drawing ahead takes
0.1-2 s of kernel time per lab after it appears, and again for the frames a move makes new (4 after
a step of the gradient lab, 150 after a change of its d_k), a frame (~10 ms) at a time, so a move
from the browser waits for at most one frame (or for one full redraw, ~0.2 s at worst, which comes
last). A move to a state not drawn ahead (before its frame arrives) goes the way described next.

A move that goes to the kernel: the browser coalesces a drag by itself: ipywidgets' message
throttle keeps one change of a control in flight and holds back newer values until the kernel
reports "idle" for it, then sends only the latest. The kernel says "idle" when its handler of the
change returns. So a change that comes *from the browser* (the control's ``_property_lock`` holds
the value, and the kernel's asyncio loop is running) is drawn just after that handler returns
(``loop.call_soon``): the browser learns at once that the kernel has taken the value and sends the
next one while this frame is drawn and travels, instead of one full round trip later. Measured in
headless chromium (``benchmarks/lab_latency_in_browser.py``, 2026-11-30, a busy shared 2-core
machine): present-size drags under voila went from 112-158 ms median to 56-106 ms (same-window
comparisons with the old code); notebook-size drags and everything in JupyterLab changed less than
the run-to-run noise. Several changes arriving before the scheduled redraw are drawn once, with the
latest values. A change made by kernel code (a cell, a test, plain Python) redraws at once, so
``lab.state`` and the picture follow it before the next line runs. (The earlier attempt deferred
every change, kernel-made ones too; under voila its redraws stopped after the first one. This one
is checked in chromium with JupyterLab and voila by ``tests/browser/test_labs_in_browser.py`` and
the latency benchmark.)

Where that round trip's time goes (2026-12-01, quiet 2-core machine, before drawing ahead: the
benchmark's breakdown, plus ``strace`` of the Jupyter server and of chromium's network process).
The kernel's update takes 11-19 ms. The server relays each message within a millisecond of the
kernel sending it. Then the picture's message waits in chromium before the page gets it: ~9 ms for
present-size frames under voila, mostly 22-41 ms at notebook size and in JupyterLab. Chromium reads
a websocket 1000 bytes at a time until the throughput it measures passes 1.2 MB/s
(``net/websockets/websocket_basic_stream.cc``), and in that mode messages sat unread for ~30-40 ms
on this machine. Present-size frames (~73 kB of JPEG, ~1.5 MB/s while dragging) keep voila in the
131 kB-read mode; in JupyterLab, whose frames come slower, even they do not. Smaller frames did not
help (a JPEG at notebook size, a quarter-height PNG: same latency); uncompressed 750 kB frames did
(voila, notebook size: drags 87 -> 44 ms median) but would send 15 MB/s over a real network, so the
labs don't. Ruled out as causes: TCP (with or without ``TCP_NODELAY`` on the server's sockets, the
same), the page's JavaScript (it handles each message within 0.5 ms of chromium delivering it), the
test driver's DevTools connection (a bare headless chromium, no DevTools, measured the same) and
CPU for chromium (its network and renderer processes run at nice -15: the same).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import nbformat
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import browser as bt  # noqa: E402  (the browser tests' server and page helpers)

CELLS = [
    "from attnlib.labs import gradient_lab\n\ngradient_lab()",
    "gradient_lab(present=True)",
]

#: Run first in the served notebook: every ``Lab.update`` appends "start end" (ms, wall clock)
#: to the log file named by {log!r}.
TIME_UPDATES = """import time
from attnlib.liveview.lab import Lab

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
    // The picture's change is timed when it happens; the slider value it shows is read from the
    // readout at the next paint (a Label writes its text in a microtask, which may run after
    // this observer's): the picture and readout a person sees together.
    new MutationObserver(() => {
        const t = performance.now();
        requestAnimationFrame(() => log.frames.push(
            [t, parseInt(readouts[1].innerText), performance.timeOrigin + t]));
    }).observe(img, {attributes: true, attributeFilter: ['src']});
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


def measure_all(
    keys: int = 15, drag_moves: int = 40, opening: bool = False, draw_ahead: bool = True
) -> list[Measured]:
    """Serve the notebook with voila and JupyterLab (their kernels with drawing ahead on or off),
    measure both labs in each."""
    setting = os.environ.get("ATTNLIB_DRAW_AHEAD")
    os.environ["ATTNLIB_DRAW_AHEAD"] = "1" if draw_ahead else "0"  # the servers' kernels inherit it
    try:
        return _measure_all(keys, drag_moves, opening)
    finally:
        if setting is None:
            del os.environ["ATTNLIB_DRAW_AHEAD"]
        else:
            os.environ["ATTNLIB_DRAW_AHEAD"] = setting


def _measure_all(keys: int, drag_moves: int, opening: bool) -> list[Measured]:
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
                    executable_path=str(bt.FULL_CHROMIUM), args=bt.LAUNCH_ARGS
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
    parser.add_argument("--off", action="store_true", help="with drawing ahead off")
    args = parser.parse_args()
    for m in measure_all(args.keys, args.drag_moves, args.opening, draw_ahead=not args.off):
        print(f"{m.frontend}, {m.size:13}, {m.kind:4}: {summary(m.ms)}")
        print(f"{'':{len(m.frontend) + 22}}{m.where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
