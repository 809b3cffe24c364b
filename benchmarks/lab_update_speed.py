"""How fast does each live lab follow its controls?  Prints median milliseconds per update.

    python benchmarks/lab_update_speed.py [--repeats N] [--labs NAME ...]

Every ``*_lab`` function in ``attnlib.labs`` (its ``__all__`` and every submodule, so a new lab
is measured as soon as its module exists) is built once; then each of its controls is moved
through its values programmatically, as a student dragging a slider would. One update is the
control's callback plus the canvas draw plus encoding the PNG that goes to the browser.

Ways compared, per lab (``present=False``, the notebook size, unless named):

* ``blit, png 1``: what the labs ship: restore the cached background, draw only the changed
  artists, PNG at zlib level 1;
* ``blit, png 6``: the same with matplotlib's default PNG compression;
* ``full, png 1``: redraw the whole figure in place every update;
* ``naive``: rebuild the figure from scratch and ``savefig(bbox_inches="tight")``, what
  ``interact`` with the inline backend does on every change;
* ``present, jpeg``: the lab built with ``present=True`` (projector size, JPEG frames), as
  shipped; ``present, png 1`` the same size encoded as PNG, for comparison.

Must: under 50 ms median per update and at least 3x faster than naive. Aim: 16 ms (60 Hz), at
both sizes.

Each figure is printed twice: wall-clock time (what a student waits) and the CPU time of this
process (``time.process_time``), which stays close to the unloaded wall time when other jobs share
the machine. Compare labs and ways within one run; across runs, compare the CPU column.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import statistics
import time
from collections.abc import Callable, Iterator

import ipywidgets as widgets

import attnlib.labs
import attnlib.liveview.figure as figure


def discover_labs() -> dict[str, Callable]:
    """Every public ``*_lab`` function of attnlib.labs and its submodules, by name."""
    labs = {
        name: getattr(attnlib.labs, name) for name in attnlib.labs.__all__ if name.endswith("_lab")
    }
    for info in pkgutil.iter_modules(attnlib.labs.__path__):
        module = importlib.import_module(f"attnlib.labs.{info.name}")
        for name, obj in inspect.getmembers(module, inspect.isfunction):
            if name.endswith("_lab") and not name.startswith("_"):
                labs.setdefault(name, obj)
    return dict(sorted(labs.items()))


def control_values(control: widgets.ValueWidget) -> list:
    """The values a student would drag or click ``control`` through, ending where it started."""
    start = control.value
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        values = [not start, start]
    elif hasattr(control, "options"):  # SelectionSlider, Dropdown, RadioButtons, ToggleButtons
        values = [
            control.options[i]
            if not isinstance(control.options[i], tuple)
            else control.options[i][1]
            for i in range(len(control.options))
        ]
        values = [*values, *values[::-1]]
    elif isinstance(control, widgets.IntSlider | widgets.BoundedIntText):
        values = list(range(control.min, control.max + 1, control.step))
        values = [*values, *values[::-1]]
    elif isinstance(control, widgets.FloatSlider | widgets.BoundedFloatText):
        n = 10
        values = [control.min + (control.max - control.min) * i / n for i in range(n + 1)]
        values = [*values, *values[::-1]]
    else:
        raise TypeError(f"no plan to move a {type(control).__name__} ({control.description!r})")
    return [v for v in values if v != start] + [start]


def moves(lab) -> Iterator[tuple[widgets.ValueWidget, object]]:
    for control in lab.controls.values():
        for value in control_values(control):
            yield control, value


Timings = tuple[list[float], list[float]]  # (wall seconds, CPU seconds), one pair per update


def time_updates(lab, repeats: int) -> Timings:
    wall, cpu = [], []
    for _ in range(repeats):
        for control, value in moves(lab):
            start, start_cpu = time.perf_counter(), time.process_time()
            control.value = value
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            if lab.last_error is not None:
                raise RuntimeError(f"the lab failed to update: {lab.last_error!r}")
    return wall, cpu


def time_naive(lab, repeats: int) -> Timings:
    wall, cpu = [], []
    for _ in range(repeats):
        for control, value in moves(lab):
            with control.hold_trait_notifications():  # only the value, no lab update
                control.unobserve(lab._on_change, names="value")
                control.value = value
                control.observe(lab._on_change, names="value")
            start, start_cpu = time.perf_counter(), time.process_time()
            lab.render_naive()
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    lab.update()
    return wall, cpu


def ms(seconds: list[float]) -> float:
    return 1000 * statistics.median(seconds)


def both(timings: Timings) -> str:
    wall, cpu = timings
    return f"{ms(wall):6.1f} ms wall, {ms(cpu):5.1f} ms CPU (medians)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="passes over every control")
    parser.add_argument("--labs", nargs="+", metavar="NAME", help="only these labs (default: all)")
    args = parser.parse_args()
    labs = discover_labs()
    unknown = sorted(set(args.labs or ()) - set(labs))
    if unknown:
        parser.error(f"no lab named {', '.join(unknown)}; the labs are {', '.join(labs)}")
    failures = []
    for name, make_lab in labs.items():
        if args.labs and name not in args.labs:
            continue
        lab = make_lab()
        n_moves = sum(1 for _ in moves(lab))
        time_updates(lab, 1)  # warm up caches and fonts
        shipped = time_updates(lab, args.repeats)
        figure.PNG_COMPRESS_LEVEL = 6
        png6 = time_updates(lab, args.repeats)
        figure.PNG_COMPRESS_LEVEL = 1
        original = lab.live.render

        def full_redraw(full=False, static_key=None, original=original):
            return original(full=True, static_key=static_key)

        lab.live.render = full_redraw
        full = time_updates(lab, args.repeats)
        lab.live.render = original
        naive = time_naive(lab, max(1, args.repeats // 2))
        big = make_lab(present=True)
        time_updates(big, 1)
        present = time_updates(big, args.repeats)
        big.live.image_format = "png"
        present_png = time_updates(big, args.repeats)
        big.live.image_format = "jpeg"
        width, height = lab.live.canvas.get_width_height()
        print(
            f"{name}: {len(lab.controls)} controls, {n_moves} moves per pass,"
            f" {width}x{height} px, {len(lab.picture.value) / 1024:.0f} KiB per frame"
        )
        print(
            f"  blit, png 1 (shipped) : {both(shipped)}, {1000 * max(shipped[0]):.1f} ms max wall"
        )
        print(f"  blit, png 6           : {both(png6)}")
        print(f"  full redraw, png 1    : {both(full)}")
        print(f"  naive rebuild+savefig : {both(naive)}")
        big_width, big_height = big.live.canvas.get_width_height()
        print(
            f"  present, jpeg (shipped): {both(present)}; {big_width}x{big_height} px,"
            f" {len(big.picture.value) / 1024:.0f} KiB per frame,"
            f" smallest text {big.smallest_text_px():.1f} px"
        )
        print(f"  present, png 1        : {both(present_png)}")
        ratio = ms(naive[0]) / ms(shipped[0])
        slowest = max(ms(shipped[0]), ms(present[0]))
        verdict = "ok" if slowest < 50 and ratio >= 3 else "TOO SLOW"
        aim = "meets" if slowest <= 16 else "misses"
        print(
            f"  shipped is {ratio:.1f}x faster than naive: {verdict};"
            f" {aim} the 16 ms aim (wall, both sizes)"
        )
        if verdict != "ok":
            failures.append(name)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
