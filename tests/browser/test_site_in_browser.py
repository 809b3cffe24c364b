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

import functools
import os

import accessibility
import pytest
from site_serving import build, clean_checkout, missing, new_context, reading, site_layout, typeset

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


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The site built from a clean checkout: {"checkout", "site", "build" (the finished
    build_site.py run)}."""
    if reasons := missing():
        (pytest.fail if os.environ.get("CI") else pytest.skip)("; ".join(reasons))
    checkout = clean_checkout(tmp_path_factory.mktemp("checkout"))
    return {"checkout": checkout, "site": checkout / "build" / "site", "build": build(checkout)}


@pytest.fixture(scope="module")
def reader(built):
    """Chromium reading the built site over HTTP, every request to another address refused.

    Yields {"base": the site's address, "outside": every request refused so far, "read": a
    function that opens a page (a name such as "index") once and returns what it found}.
    """
    if built["build"].returncode != 0:
        pytest.fail(f"the site did not build:\n{built['build'].stdout}\n{built['build'].stderr}")
    with reading(built["site"]) as (base, chromium, outside):
        context = new_context(chromium, base, outside)

        @functools.cache
        def read(name: str) -> dict:
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.on(
                "console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}")
            )
            page.goto(f"{base}{name}.html", wait_until="load")
            typeset(page)
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
