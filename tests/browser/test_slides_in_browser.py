"""The lab slides (``notebooks/lab_slides.ipynb``) as README's instructor section serves them
offline: voila's reveal template (the notebook asks for it), reveal.js's styles from the local
copy that ``tools/fetch_web_assets.py`` fetches into ``notebooks/vendor/``.

The server is the session's (``browser_session``: README's single-notebook command, checked
here), one page visit shared by the tests (in file order): the styles load from
127.0.0.1 and nothing else leaves it; an arrow key turns the slide; arrow keys on a focused lab
control move the lab and leave the slide where it is; no error in the page. Every request to
another host is refused, as in a room without internet.

Needs what ``test_labs_in_browser.py`` needs, plus ``notebooks/vendor/reveal.js``; without them
the tests are skipped, except in CI (CI set), where they fail (.ci/run fetches the files).
"""

from __future__ import annotations

import os
import re

import pytest
from browser import (
    OFFLINE_OPTIONS,
    REVEAL,
    ROOT,
    is_active,
    new_picture,
    open_page,
    picture,
)

#: Outside files voila's own templates ask for whatever the notebook (its icon font, which no
#: lab uses); refused here like every outside request, and listed so that any other shows.
TEMPLATE_OUTSIDE = re.compile(r"https://cdn\.jsdelivr\.net/npm/@fortawesome/fontawesome-free@")
#: Faults of voila 0.5.13's reveal template itself, whatever the deck, offline or not: its slide
#: code calls MathJax 2's ``MathJax.Hub`` on every slide change though the template loads no
#: MathJax, and a long first run (every lab) sends ``voila_heartbeat()`` before the template has
#: defined it. Neither stops a slide or a lab; any other error fails the test.
VOILA_REVEAL_FAULTS = re.compile(
    r"^(Cannot read properties of undefined \(reading 'Hub'\)"
    r"|window\.voila_heartbeat is not a function)$"
)
#: The index of the slide shown, among the deck's top-level slides.
SLIDE_SHOWN = """() => [...document.querySelectorAll('.reveal .slides > section')]
    .findIndex(s => s.classList.contains('present'))"""


@pytest.fixture(scope="module")
def deck(browser_session):
    """The deck's page, loaded (every lab shown), at 1920 x 1080.

    Yields {"page", "errors", "outside" (every request to another host, refused)}.
    """
    if not (REVEAL / "dist" / "reveal.css").exists():
        missing = "reveal.js missing: python tools/fetch_web_assets.py (needs npm)"
        (pytest.fail if os.environ.get("CI") else pytest.skip)(missing)
    url = browser_session.slides
    with open_page(browser_session.chromium, "lab_slides", 1920, 1080) as (page, errors):
        outside: list[str] = []

        def offline(route) -> None:
            if route.request.url.startswith("http://127.0.0.1:"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", offline)
        page.goto(url, timeout=60_000)
        labs = page.locator(".attnlib-lab")
        labs.last.locator("img").wait_for(state="attached", timeout=60_000)
        page.locator(".reveal.ready").wait_for(state="attached", timeout=10_000)
        yield {"page": page, "errors": errors, "outside": outside}


def test_the_slides_take_reveals_styles_from_the_local_copy_and_nothing_from_outside(
    deck,
) -> None:
    sheets = deck["page"].evaluate(
        """() => [...document.styleSheets].filter(s => s.href && s.href.includes('reveal'))
            .map(s => ({href: s.href, rules: s.cssRules.length}))"""
    )
    local = {s["href"].split("/vendor/reveal.js/")[-1]: s["rules"] for s in sheets}
    assert local.get("dist/reveal.css", 0) > 0, f"reveal.css not loaded locally: {sheets}"
    assert local.get("dist/theme/white.css", 0) > 0, f"the theme not loaded locally: {sheets}"
    others = [u for u in deck["outside"] if not TEMPLATE_OUTSIDE.match(u)]
    assert not others, f"requests left 127.0.0.1: {others}"


def test_an_arrow_key_turns_the_slide(deck) -> None:
    page = deck["page"]
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    before = page.evaluate(SLIDE_SHOWN)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({SLIDE_SHOWN})() === {before + 1}", timeout=5_000)
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({SLIDE_SHOWN})() === {before}", timeout=5_000)


def test_arrow_keys_on_a_lab_control_move_the_lab_not_the_slide(deck) -> None:
    page = deck["page"]
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    lab = page.locator(".reveal .slides > section.present .attnlib-lab")
    for _ in range(3):  # the first lab is a slide or two in
        if lab.count():
            break
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(100)
    assert lab.count() == 1, "no slide with a lab within three slides of the start"
    lab = lab.first
    slide = page.evaluate(SLIDE_SHOWN)
    handle = lab.locator(".widget-slider .noUi-handle").first
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    shown = picture(lab)
    handle.focus()
    for key in ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
        assert page.evaluate(SLIDE_SHOWN) == slide, f"{key} on the lab's slider turned the slide"
        shown = new_picture(lab, shown, f"{key} on the lab's slider")
    button = lab.locator(".widget-toggle-buttons button").first
    if button.count() and not is_active(button):
        button.focus()
        page.keyboard.press("Space")
        assert page.evaluate(SLIDE_SHOWN) == slide, "Space on the lab's button turned the slide"


def test_every_lab_slide_carries_its_lab_card_as_speaker_notes(deck) -> None:
    notes = deck["page"].evaluate(
        """() => [...document.querySelectorAll('.reveal .slides > section')]
            .filter(s => s.querySelector('.attnlib-lab'))
            .map(s => [...s.querySelectorAll('aside.notes')].map(a => a.textContent).join(' '))"""
    )
    assert notes, "no slide with a lab"
    missing = [i for i, text in enumerate(notes) if "Likely question." not in text]
    assert not missing, f"lab slides without their lab card in the notes: {missing}"


def test_the_slides_show_no_error_but_voilas_own(deck) -> None:
    errors = [e for e in deck["errors"] if not VOILA_REVEAL_FAULTS.match(e)]
    assert not errors, f"errors in the page: {errors}"


def test_the_instructors_page_gives_the_offline_options_the_test_serves_with() -> None:
    page = (ROOT / "docs" / "instructors.md").read_text()
    for option in OFFLINE_OPTIONS:
        name, value = option.split("=", 1)
        assert f'{name}="{value}"' in page, option
