"""The site's budgets: the build's time, the whole site's size, and what each page loads before
the reader touches anything.

    python benchmarks/site_budgets.py

* build: ``python tools/build_site.py --clean`` in a clean checkout (the repository's tracked
  files, with the npm files of ``tools/fetch_web_assets.py``), wall seconds and the CPU-seconds
  of the build's processes; target at most 120 s on a 2-core machine.
* site: the bytes of every file in the built folder; target at most 150 MB.
* pages: every page opened in headless chromium (the browser the tests drive), each in a fresh
  context (nothing cached), served over HTTP from the built folder; the bytes of every response
  it loads until its equations are typeset and the network is idle, uncompressed (GitHub Pages
  sends them compressed, so a reader downloads less); target at most 5 MB a page.
* static labs: on every lab's page, the lab's first slider moved by the arrow keys, 10 steps
  along and 10 back, 60 ms apart; per move, the time from the key press to the next paint
  after the new picture is decoded; target a median of at most 50 ms.

Needs what ``tests/browser/test_site_in_browser.py`` needs (the site's tools, the npm files,
playwright, Debian's chromium); ``benchmarks/run_all.py`` prints the same figures as rows of its
table.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import site_serving  # noqa: E402  (what the site's browser test uses)

PAGE_BUDGET_MB = 5
SITE_BUDGET_MB = 150
BUILD_BUDGET_S = 120


class Budgets(NamedTuple):
    build_wall_s: float
    build_cpu_s: float
    site_mb: float
    page_mb: dict[str, float]  # page (path without .html) -> MB it loads
    move_ms: list[float]  # every move of a static lab: key press to the new picture painted


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def page_megabytes(site: Path) -> dict[str, float]:
    """Each HTML page of ``site`` -> the MB it loads (see the module's docstring)."""
    names = sorted(
        p.relative_to(site).with_suffix("").as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).parts[0].startswith("_")
        and p.name not in ("genindex.html", "search.html")
    )
    found = {}
    with site_serving.reading(site) as (base, chromium, outside):
        for name in names:
            context = site_serving.new_context(chromium, base, outside)
            page = context.new_page()
            loaded: list[int] = []
            page.on("requestfinished", lambda r, loaded=loaded: loaded.append(body_bytes(r)))
            page.goto(f"{base}{name}.html", wait_until="load")
            site_serving.typeset(page)
            page.wait_for_load_state("networkidle")
            found[name] = sum(loaded) / 1e6
            context.close()
    if outside:
        raise RuntimeError(f"pages asked for files outside the site: {sorted(set(outside))}")
    return found


#: In the page: for every change of the lab's picture, the time from the last key press to the
#: next paint after the new picture is decoded, in ``window.moves``.
TIME_MOVES = """() => {
    window.moves = [];
    let pressed = null;
    document.addEventListener('keydown', (e) => { pressed = e.timeStamp; }, true);
    const img = document.querySelector('.attnlib-static-lab img');
    new MutationObserver(() => {
        const start = pressed;
        img.decode().then(() => requestAnimationFrame(() =>
            window.moves.push(performance.now() - start)));
    }).observe(img, { attributes: true, attributeFilter: ['src'] });
}"""


def static_lab_moves(site: Path, steps: int = 10) -> list[float]:
    """The milliseconds of every move (see the module's docstring) on every lab's page."""
    pages = sorted(
        p.relative_to(site).with_suffix("").as_posix()
        for p in (site / "notebooks").glob("*.html")
        if "attnlib-static-lab" in p.read_text(encoding="utf-8")
    )
    found: list[float] = []
    with site_serving.reading(site) as (base, chromium, outside):
        for name in pages:
            context = site_serving.new_context(chromium, base, outside)
            page = context.new_page()
            page.goto(f"{base}{name}.html", wait_until="load")
            page.wait_for_selector(".attnlib-static-ready")
            page.evaluate(TIME_MOVES)
            slider = page.locator(".attnlib-static-lab input[type=range]:enabled").first
            slider.focus()
            for key in ["ArrowRight"] * steps + ["ArrowLeft"] * steps:
                page.keyboard.press(key)
                page.wait_for_timeout(60)
            page.wait_for_timeout(200)
            found += page.evaluate("() => window.moves")
            context.close()
    return found


def body_bytes(request) -> int:
    return request.sizes()["responseBodySize"]


def measure() -> Budgets:
    if reasons := site_serving.missing():
        raise RuntimeError("; ".join(reasons))
    with tempfile.TemporaryDirectory() as tmp:
        checkout = site_serving.clean_checkout(Path(tmp))
        cpu, start = children_cpu_seconds(), time.perf_counter()
        done = site_serving.build(checkout)
        wall, cpu = time.perf_counter() - start, children_cpu_seconds() - cpu
        if done.returncode != 0:
            raise RuntimeError(f"the site did not build:\n{done.stdout}\n{done.stderr}")
        site = checkout / "build" / "site"
        return Budgets(wall, cpu, folder_mb(site), page_megabytes(site), static_lab_moves(site))


def rows(budgets: Budgets) -> list[tuple[str, str, str, str]]:
    """(what, figure, target, met) rows, as benchmarks/run_all.py prints them."""
    pages = budgets.page_mb
    largest = max(pages, key=pages.get)
    median = statistics.median(pages.values())
    over = [name for name, mb in pages.items() if mb > PAGE_BUDGET_MB]
    return [
        (
            "site build (clean)",
            f"{budgets.build_wall_s:.1f} s wall, {budgets.build_cpu_s:.0f} CPU-s",
            f"<= {BUILD_BUDGET_S} s",
            verdict(budgets.build_wall_s <= BUILD_BUDGET_S),
        ),
        (
            "site size",
            f"{budgets.site_mb:.1f} MB",
            f"<= {SITE_BUDGET_MB} MB",
            verdict(budgets.site_mb <= SITE_BUDGET_MB),
        ),
        (
            "site page, before touching a lab",
            f"largest {pages[largest]:.2f} MB ({largest}), median {median:.2f} MB over"
            f" {len(pages)} pages" + (f"; over budget: {', '.join(over)}" if over else ""),
            f"<= {PAGE_BUDGET_MB} MB",
            verdict(not over),
        ),
        (
            "static lab move, key to picture (chromium)",
            f"median {statistics.median(budgets.move_ms):.1f} ms, p90"
            f" {statistics.quantiles(budgets.move_ms, n=10)[-1]:.1f} ms over"
            f" {len(budgets.move_ms)} moves",
            "<= 50 ms median",
            verdict(statistics.median(budgets.move_ms) <= 50),
        ),
    ]


def verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


def main() -> int:
    budgets = measure()
    print(f"Machine: {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.1f}")
    for what, figure, target, met in rows(budgets):
        print(f"{what}: {figure} (target {target}: {met})")
    print("MB each page loads, before the reader touches anything:")
    for name, mb in budgets.page_mb.items():
        print(f"  {mb:5.2f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
