"""The site (the book), built from a clean checkout and read in chromium, as a reader with only a
browser and the built folder reads it (served by ``python -m http.server``, as README says).

* The build: the repository's tracked files copied to a fresh folder, with the npm files that
  ``tools/fetch_web_assets.py`` fetched, then ``python tools/build_site.py --clean`` there (a
  warning fails it). Every numbered notebook is a page, in the folder's order in the sidebar.
* The landing page and three chapters (a page of equations, a lab's page, the trained model's
  page of figures): every equation rendered by MathJax without a TeX error, every picture shown
  with a text alternative, no console error; every request the pages make stays in the site's
  folder (any other is refused, as for a reader offline, and listed).
* A lab's cell shows the picture stored with it.
* A collapsed cell stays collapsed and opens on a click; a ``<details>`` answer too.
* axe-core (WCAG 2 A and AA) finds no violation on a chapter and on a lab's page.

Needs the site's tools (``requirements-site.txt``), the files of
``python tools/fetch_web_assets.py``, playwright and Debian's chromium (as the other browser
tests); without them the tests are skipped, except in CI (CI set), where they fail.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import accessibility
import browser
import pytest

ROOT = browser.ROOT
sys.path.insert(0, str(ROOT / "docs"))

import site_layout  # noqa: E402

SITE_TOOLS = ("sphinx", "myst_nb", "sphinx_book_theme")
#: The pages read: the landing page, a chapter of equations, a chapter with a lab, and the
#: trained model's chapter (the most figures).
EQUATIONS, LAB, FIGURES = (
    "notebooks/02_why_sqrt_dk",
    "notebooks/06_masking",
    "notebooks/13_trained_model",
)
PAGES = ("index", EQUATIONS, LAB, FIGURES)

#: Per page, once loaded and typeset: its math elements and how many hold a rendered formula or
#: a TeX error; its pictures and how many have loaded; the pictures' text alternatives.
PAGE_FACTS = """() => {
    const maths = [...document.querySelectorAll('#main-content .math')];
    const images = [...document.querySelectorAll('#main-content img')];
    return {
        maths: maths.length,
        rendered: maths.filter(m => m.querySelector('mjx-container')).length,
        tex_errors: document.querySelectorAll('mjx-merror').length,
        images: images.length,
        shown: images.filter(i => i.complete && i.naturalWidth > 0).length,
        alts: images.map(i => i.getAttribute('alt') || ''),
    };
}"""


def missing() -> list[str]:
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


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on 127.0.0.1 (as ``python -m http.server -d folder`` does),
    for as long as the block runs; yields its address."""

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


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The site built from a clean checkout: {"checkout", "site", "build" (the finished
    build_site.py run)}."""
    if reasons := missing():
        (pytest.fail if os.environ.get("CI") else pytest.skip)("; ".join(reasons))
    checkout = clean_checkout(tmp_path_factory.mktemp("checkout"))
    build = subprocess.run(
        [sys.executable, "tools/build_site.py", "--clean"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )
    return {"checkout": checkout, "site": checkout / "build" / "site", "build": build}


@pytest.fixture(scope="module")
def reader(built):
    """Chromium reading the built site over HTTP, every request to another address refused.

    Yields {"base": the site's address, "browser", "outside": every refused request,
    "read": a function that opens a page once and returns what it found}.
    """
    if built["build"].returncode != 0:
        pytest.fail(f"the site did not build:\n{built['build'].stdout}\n{built['build'].stderr}")
    from playwright.sync_api import sync_playwright

    with (
        serving(built["site"]) as base,
        sync_playwright() as playwright,
        contextlib.closing(
            playwright.chromium.launch(
                executable_path=str(browser.CHROMIUM), args=browser.LAUNCH_ARGS
            )
        ) as chromium,
    ):
        outside: list[str] = []
        context = chromium.new_context(viewport={"width": 1366, "height": 768})

        def refuse_outside(route) -> None:
            url = route.request.url
            if url.startswith(base) or url.startswith(("data:", "blob:")):
                route.continue_()
            else:
                outside.append(url)
                route.abort()

        context.route("**/*", refuse_outside)

        @functools.cache
        def read(name: str) -> dict:
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.on(
                "console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}")
            )
            page.goto(f"{base}{name}.html", wait_until="load")
            page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
            return {"page": page, "errors": errors, "facts": page.evaluate(PAGE_FACTS)}

        try:
            yield {"base": base, "outside": outside, "read": read}
        finally:
            context.close()


def test_the_site_builds_from_a_clean_checkout_with_every_chapter_a_page(built) -> None:
    assert built["build"].returncode == 0, built["build"].stdout + built["build"].stderr
    chapters = site_layout.chapters(built["checkout"])
    assert len(chapters) >= 14, [path.name for path in chapters]
    pages = ["index", "docs/instructors", "docs/contributors"]
    pages += [f"notebooks/{path.stem}" for path in chapters]
    absent = [name for name in pages if not (built["site"] / f"{name}.html").exists()]
    assert not absent, f"pages not built: {absent}"


def test_the_sidebar_lists_the_chapters_in_reading_order(built, reader) -> None:
    page = reader["read"]("index")["page"]
    links = page.eval_on_selector_all(
        "nav.bd-docs-nav a.reference.internal", "links => links.map(a => a.getAttribute('href'))"
    )
    chapters = [f"notebooks/{path.stem}.html" for path in site_layout.chapters(built["checkout"])]
    assert [link for link in links if link.startswith("notebooks/")] == chapters


@pytest.mark.parametrize("name", PAGES)
def test_every_equation_is_rendered_without_a_tex_error(reader, name: str) -> None:
    facts = reader["read"](name)["facts"]
    assert facts["maths"] > 0, f"{name}: no equation found"
    assert facts["rendered"] == facts["maths"], f"{name}: {facts}"
    assert facts["tex_errors"] == 0, f"{name}: {facts}"


@pytest.mark.parametrize("name", [EQUATIONS, LAB, FIGURES])
def test_every_picture_is_shown_with_a_text_alternative(reader, name: str) -> None:
    facts = reader["read"](name)["facts"]
    assert facts["images"] > 0, f"{name}: no picture found"
    assert facts["shown"] == facts["images"], f"{name}: {facts}"
    unnamed = [alt for alt in facts["alts"] if not alt or alt.endswith(".png")]
    assert not unnamed, f"{name}: pictures without a text alternative: {unnamed}"


def test_a_labs_cell_shows_the_picture_stored_with_it(reader) -> None:
    """Until the labs have static forms: the lab's stored picture, named in the lab's words."""
    alts = reader["read"](LAB)["facts"]["alts"]
    assert [alt for alt in alts if alt.startswith("A live lab")], alts


@pytest.mark.parametrize("name", PAGES)
def test_a_page_shows_no_console_error(reader, name: str) -> None:
    assert not reader["read"](name)["errors"]


def test_no_request_leaves_the_sites_folder(reader) -> None:
    for name in PAGES:
        reader["read"](name)
    assert reader["outside"] == []


def test_a_collapsed_cell_stays_collapsed_and_opens_on_a_click(reader) -> None:
    page = reader["read"](LAB)["page"]
    toggles = page.locator("details.hide")
    assert toggles.count() > 0, "no collapsed cell on the lab's page"
    assert page.eval_on_selector_all("details.hide", "ds => ds.filter(d => d.open).length") == 0
    first = toggles.first
    code = first.locator(".cell_input")
    assert not code.is_visible()
    first.locator("summary").click()
    assert code.is_visible()


def test_a_details_answer_stays_closed_and_opens_on_a_click(reader) -> None:
    page = reader["read"](EQUATIONS)["page"]
    answers = page.locator("#main-content details:not(.hide)").filter(has_text="Answers")
    assert answers.count() == 1
    answer = answers.first
    body = answer.locator("mjx-container").first
    assert not body.is_visible()
    answer.locator("summary").click()
    assert body.is_visible()


@pytest.mark.parametrize("name", [EQUATIONS, LAB])
def test_a_page_has_no_wcag_2_aa_violations(reader, name: str) -> None:
    violations = accessibility.scan(reader["read"](name)["page"])
    assert violations == [], "\n".join(violations)
