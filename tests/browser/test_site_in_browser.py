"""The site (the book), built from a clean checkout and read in chromium, as a reader with only a
browser and the built folder reads it (served by ``python -m http.server``, as README says).

* The build: the repository's tracked files copied to a fresh folder, with the npm files that
  ``tools/fetch_web_assets.py`` fetched, then ``python tools/build_site.py --clean`` there (a
  warning fails it). Every numbered notebook is a page, in the folder's order in the sidebar.
* The landing page and three chapters (a page of equations, a lab's page, the trained model's
  page of figures): every equation rendered by MathJax without a TeX error, every picture shown
  with a text alternative, no console error; every request the pages make stays in the site's
  folder (any other is refused, as for a reader offline, and listed).
* Every lab's page has its static form: its first picture is the one its chapter stores, and
  each control moved as a reader moves it shows the bytes of the frame the live lab draws for
  the state reached (the lab made in this process by ``docs/site_labs.py``'s table).
* A collapsed cell stays collapsed and opens on a click; a ``<details>`` answer too.
* axe-core (WCAG 2 A and AA) finds no violation on a chapter and on a lab's page.

Needs the site's tools (``requirements-site.txt``), the files of
``python tools/fetch_web_assets.py``, playwright and Debian's chromium (as the other browser
tests); without them the tests are skipped, except in CI (CI set), where they fail.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import os
import urllib.parse
from pathlib import Path

import accessibility
import ipywidgets as widgets
import nbformat
import numpy as np
import pytest
from PIL import Image
from site_serving import (
    build,
    clean_checkout,
    missing,
    new_context,
    reading,
    site_labs,
    site_layout,
    typeset,
)

from attnlib.liveview.keys import reachable

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


def chapter_of_each_lab() -> dict[str, str]:
    """Lab name (docs/site_labs.py's table) -> the page of the chapter whose cell makes it."""
    found = {}
    for path in site_layout.chapters():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and (lab := site_labs.lab_of(cell.source)):
                found[lab.name] = f"notebooks/{path.stem}"
    return found


LAB_PAGES = chapter_of_each_lab()


def stored_picture(chapter: Path, lab: site_labs.SiteLab) -> bytes:
    """The picture the chapter stores in the lab's cell (its state when the cell ran)."""
    for cell in nbformat.read(chapter, as_version=4).cells:
        if cell.cell_type == "code" and site_labs.lab_of(cell.source) == lab:
            (png,) = [o.data["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
            return base64.b64decode(png)
    raise AssertionError(f"no cell of {chapter.name} makes the {lab.name} lab")


def pixels(picture: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(picture)).convert("RGB"))


@pytest.mark.parametrize("name", sorted(LAB_PAGES))
def test_a_labs_first_picture_is_the_one_its_chapter_stores(built, name: str) -> None:
    """The table makes each lab as its chapter does. Pixels, not bytes: a chapter run on another
    CPU may move a line of a curve by a pixel (its float32 training's last bits)."""
    lab = site_labs.BY_NAME[name]
    first = built["site"] / "_static" / "labs" / f"{name}.json"
    manifest = json.loads(first.read_text(encoding="utf-8"))
    state = dict(zip(manifest["fields"], manifest["states"][manifest["first"]]))
    sha = manifest["pictures"][state["picture"]]
    picture = (first.parent / name / f"{sha}.{manifest['format']}").read_bytes()
    chapter = built["checkout"] / f"{LAB_PAGES[name]}.ipynb"
    ours, stored = pixels(picture), pixels(stored_picture(chapter, lab))
    assert ours.shape == stored.shape
    assert (ours != stored).any(axis=-1).mean() < 0.01


#: A move of a static lab's control, as a reader makes it (a key, a click, a choice), by kind.
MOVES = {
    "slider": lambda row: row.locator("input").press(
        "ArrowLeft"
        if row.locator("input").get_attribute("max") == row.locator("input").input_value()
        else "ArrowRight"
    ),
    "checkbox": lambda row: row.locator("input").click(),
    "buttons": lambda row: row.locator("label:not(:has(input:checked))").first.click(),
    "select": lambda row: row.locator("select").select_option(
        index=(row.locator("select").evaluate("s => s.selectedIndex") + 1)
        % row.locator("option").count()
    ),
}
#: The label of the option a control stands at, as the reader sees it, by kind.
LABELS = {
    "slider": lambda row: row.locator("input").get_attribute("aria-valuetext"),
    "checkbox": lambda row: "on" if row.locator("input").is_checked() else "off",
    "buttons": lambda row: row.locator("label:has(input:checked)").inner_text(),
    "select": lambda row: row.locator("select").evaluate("s => s.options[s.selectedIndex].text"),
}


def set_by_label(control, label: str) -> None:
    """Move a live lab's control to the option the reader sees as ``label``."""
    if isinstance(control, widgets.Checkbox):
        control.value = label == "on"
    elif isinstance(control, widgets.IntSlider):
        control.value = int(label)
    elif isinstance(control, widgets.Combobox):
        control.value = label
    else:
        control.value = {str(place[1]): value for place, value in reachable(control)}[label]


def shown_picture(page, form, site: Path) -> bytes:
    """The bytes of the picture a static lab shows, once it has loaded (read from the site)."""
    picture = form.locator("img")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
    )
    address = urllib.parse.urlparse(picture.evaluate("img => img.src"))
    return (site / address.path.lstrip("/")).read_bytes()


@pytest.mark.parametrize("name", sorted(LAB_PAGES))
def test_every_move_shows_the_picture_the_live_lab_draws_there(built, reader, name: str) -> None:
    """Every control of the lab moved in turn, as a reader moves it (a key, a click, a choice);
    after each move the page shows the bytes of the live lab's frame of the state reached."""
    page = reader["read"](LAB_PAGES[name])["page"]
    form = page.locator(".attnlib-static-lab.attnlib-static-ready")
    form.wait_for()
    live = site_labs.BY_NAME[name].make()
    manifest = json.loads((built["site"] / "_static" / "labs" / f"{name}.json").read_text())
    moved = []
    for c, control in enumerate(manifest["controls"]):
        row = form.locator(".attnlib-static-row").nth(c)
        if row.locator("input:disabled, select:disabled").count():
            continue  # disabled as in the live lab, or one option stored (the grid)
        before = form.get_attribute("data-key")
        MOVES[control["kind"]](row)
        page.wait_for_function(
            "([form, before]) => form.dataset.key !== before", arg=[form.element_handle(), before]
        )
        label = LABELS[control["kind"]](form.locator(".attnlib-static-row").nth(c))
        set_by_label(live.controls[control["name"]], label)
        moved.append(f"{control['description']} to {label!r}")
        shown = shown_picture(page, form, built["site"])
        frame = live.current_frame()
        assert shown == frame.picture, f"{name}: after moving {', '.join(moved)}"
        assert form.locator("img").get_attribute("alt") == frame.alt
    assert len(moved) >= 1


def test_a_slider_dragged_by_the_mouse_follows_it_to_the_end(built, reader) -> None:
    """The positions lab's offset slider dragged from its thumb to its right end in small steps:
    the picture follows the pointer (the slider is not rebuilt under it mid-drag) and ends on
    the live lab's frame of the last offset."""
    page = reader["read"](LAB_PAGES["positions"])["page"].context.new_page()  # the first state
    page.goto(f"{reader['base']}{LAB_PAGES['positions']}.html")
    form = page.locator(".attnlib-static-lab.attnlib-static-ready")
    slider = form.get_by_label("offset i - j")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    start = float(slider.input_value()) / float(slider.get_attribute("max"))
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + start * box["width"], y)
    page.mouse.down()
    for step in range(1, 21):
        page.mouse.move(box["x"] + (start + (1.05 - start) * step / 20) * box["width"], y)
        page.wait_for_timeout(20)
    page.mouse.up()
    assert slider.input_value() == slider.get_attribute("max")
    live = site_labs.BY_NAME["positions"].make()
    live.controls["offset"].value = live.controls["offset"].max
    reached = "([form, key]) => form.dataset.key === key"
    page.wait_for_function(reached, arg=[form.element_handle(), live.state_key()], timeout=5000)
    assert shown_picture(page, form, built["site"]) == live.current_frame().picture


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
