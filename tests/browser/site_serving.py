"""What the site's browser test and ``benchmarks/site_budgets.py`` share: what building and
reading the site needs, a clean checkout to build it from, and chromium reading the built folder
over HTTP with nothing let out of it. Not a test file."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import accessibility
import browser

ROOT = browser.ROOT
sys.path.insert(0, str(ROOT / "docs"))

import site_labs  # noqa: E402, F401  (for the tests, beside site_layout)
import site_layout  # noqa: E402

#: The modules building the site needs (requirements-site.txt).
SITE_TOOLS = ("sphinx", "myst_nb", "sphinx_book_theme")


def missing() -> list[str]:
    """Why the site cannot be built and read in chromium here, if it cannot."""
    reasons = list(browser.MISSING)
    if absent := [name for name in SITE_TOOLS if importlib.util.find_spec(name) is None]:
        reasons.append(f"{', '.join(absent)} missing: pip install -r requirements-site.txt")
    vendor = [p for p in site_layout.vendor_files().values() if not p.exists()]
    if vendor or not accessibility.AXE.exists():
        reasons.append("npm files missing: python tools/fetch_web_assets.py (needs npm)")
    return reasons


def clean_checkout(into: Path) -> Path:
    """The repository's tracked files (as they are in the working tree) copied into ``into``,
    and its npm files (git-ignored, fetched by tools/fetch_web_assets.py) linked beside them."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    (into / "notebooks" / "vendor").symlink_to(site_layout.VENDOR, target_is_directory=True)
    return into


def build(checkout: Path) -> subprocess.CompletedProcess:
    """README's build command, ``python tools/build_site.py``, in ``checkout``, from nothing."""
    return subprocess.run(
        [sys.executable, "tools/build_site.py", "--clean"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on 127.0.0.1, as ``python -m http.server -d folder`` serves
    it, for as long as the block runs; yields its address."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def reading(folder: Path) -> Iterator[tuple[str, object, list[str]]]:
    """Chromium reading ``folder`` served over HTTP, every request to another address refused
    (as for a reader offline). Yields (the site's address, chromium, the refused requests);
    ``new_context(chromium, base, outside)`` makes a browser context that refuses them."""
    from playwright.sync_api import sync_playwright

    with serving(folder) as base, sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(browser.CHROMIUM), args=browser.LAUNCH_ARGS
        )
        try:
            yield base, chromium, []
        finally:
            chromium.close()


def new_context(chromium, base: str, outside: list[str], width: int = 1366, height: int = 768):
    """A browser context (its own cache) in which a request outside ``base`` is refused and
    noted in ``outside``."""
    context = chromium.new_context(viewport={"width": width, "height": height})

    def refuse_outside(route) -> None:
        url = route.request.url
        if url.startswith(base) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", refuse_outside)
    return context


#: True once MathJax has started (its script may load after the page's load event), or at once
#: on a page without it.
MATHJAX_STARTED = """() => !document.querySelector('script[src*="/mathjax/"]')
    || Boolean(window.MathJax && MathJax.startup && MathJax.startup.promise)"""


def typeset(page) -> None:
    """Wait until ``page``'s equations are typeset (at once on a page without MathJax)."""
    page.wait_for_function(MATHJAX_STARTED)
    page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
