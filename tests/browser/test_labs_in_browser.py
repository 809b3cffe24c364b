"""The live labs in a real browser: one lab notebook in JupyterLab, the lab bench under voila.

* ``13_trained_model`` in JupyterLab with its default settings (widget messages over a kernel
  subshell, handled on a second thread) as a student sees it: the stored picture shows before
  anything runs; Run All; every control moves the picture; the controls read cleanly at a
  laptop's and a projector's width (900 and 1920 px); a typed sentence and Enter give a whole
  picture (tokens, axes, every part drawn), try after try; the query token stays where the new
  sentence has it; a sentence over the lab's 20 tokens is refused in one plain sentence.
* ``04_softmax_saturation`` under voila, README's other way to present: its text and lab show
  without code; every control moves the picture.
* A one-cell notebook under voila with README's options (voila.json): a reloaded page's kernel
  is shut down at once, not left to the cull.
* The lab bench (``notebooks/lab_bench.ipynb``, every lab at presenting size) under voila as
  README's instructor section serves it (its options in voila.json, its kernel run ahead): every
  lab of ``attnlib.labs.__all__`` shows; each fits a 1280 x 720 and a 1920 x 1080 screen; its
  picture is at projector size (at least 1280 px wide, shown 1:1 at 1920 x 1080), its control
  text at least 14 pt (18.7 px) and its slider handles at least 24 px; every control (toggle
  buttons, sliders by arrow keys, checkboxes, dropdowns) changes the picture; a frame drawn
  ahead shows with no picture from the kernel; axe-core finds no WCAG 2 A/AA violation; no
  error. The median arrow-key latency is printed; ``benchmarks/lab_latency_in_browser.py``
  measures keys and drags in JupyterLab and voila.

Every page fails on an error of its own (uncaught, or on the console); a failed page's screenshot
goes to ``artifacts/browser/`` (git-ignored), and with ``ATTNLIB_SCREENSHOTS=1`` one of every lab
checked too, to look at after a run. The servers and the one chromium are the session's
(``browser_session`` in tests/browser/conftest.py, ``session`` in browser.py): started together, the
voila kernels running ahead while the JupyterLab tests work, and killed with their kernels after
the last browser test. What keeps them cheap (the suite shares 2 cores) is said in ``browser.py``.
"""

from __future__ import annotations

import os
import statistics
import types

import pytest
from accessibility import MISSING_AXE, scan
from browser import (
    PRESENTED_NOTEBOOK,
    STUDENT_NOTEBOOK,
    children,
    keep_screenshot,
    kernel_answered,
    move_every_control,
    new_picture,
    open_page,
    picture,
    pictures_before_next_picture,
    sent_changes,
    settle,
    shows_no_error,
    start_voila,
    stop,
    wait_until_listening,
)

import attnlib.labs
from attnlib.labs.trained_attention import MAX_TOKENS

#: Browser window widths at which the controls must read cleanly: a laptop with the file
#: browser open, and a full-HD projector.
LAYOUT_WIDTHS = (900, 1920)
#: Present mode's promises, on a 1920 x 1080 screen: picture width, text and handle size (CSS px).
PRESENT_MIN_WIDTH = 1280
PRESENT_MIN_TEXT = 14 * 96 / 72
PRESENT_MIN_HANDLE = 24
#: The screens a lab in present mode fits whole: a common projector and full HD.
PRESENT_SCREENS = ((1280, 720), (1920, 1080))
#: Sentences typed into the trained-model lab, one after another: the lab bench card's, then
#: others (new to the lab each time, so each is encoded and drawn afresh). Each has "it", where
#: the query token stays.
NEW_SENTENCES = (
    "The trophy didn't fit in the suitcase because it was too big",
    "The trophy didn't fit in the suitcase because it was too small",
    "The delivery truck zoomed by the school bus because it was going so fast",
    "The bird could not fly south because it had a broken wing",
)
#: The notebook's sentence: its lab starts on "it" (at another position than in the others).
FIRST_SENTENCE = "The animal didn't cross the street because it was too tired"
TOO_LONG = (
    "The quick brown fox jumps over the lazy dog while the old cat sleeps quietly on the warm"
    " windowsill all afternoon"
)

# Bounding boxes of every part of every control row of a lab, measured in the page: the row,
# its description label, the widget's working parts, the readout, and whether a text is cut off.
MEASURE_ROWS = """lab => [...lab.querySelectorAll('.attnlib-control-row')].map(row => {
    const box = e => { const r = e.getBoundingClientRect();
                       return {x: r.left, y: r.top, w: r.width, h: r.height}; };
    const visible = e => e.getBoundingClientRect().width > 0;
    const label = row.querySelector('.widget-label');
    const parts = [...row.querySelectorAll(
        '.slider-container, .widget-toggle-button, input[type=checkbox],'
        + ' .widget-label-basic > span')]
        .filter(visible);
    const readout = row.querySelector('.attnlib-readout');
    return {
        text: row.innerText.replace(/\\s+/g, ' ').trim(),
        row: box(row),
        label: label && visible(label) ? box(label) : null,
        labelCut: label ? label.scrollWidth > label.clientWidth + 1 : false,
        parts: parts.map(p => ({kind: p.className || p.tagName, ...box(p)})),
        buttons: parts.filter(p => p.classList.contains('widget-toggle-button')).map(box),
        readout: readout ? box(readout) : null,
        readoutCut: readout ? readout.scrollWidth > readout.clientWidth + 1 : false,
    };
})"""


def overlap(a: dict, b: dict, slack: float = 0.5) -> bool:
    """Do two boxes share more than a hairline?"""
    return (
        min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > slack
        and min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > slack
    )


def check_control_layout(page, lab, name: str, width: int) -> list[str]:
    """Resize the window to ``width``, keep a screenshot of the lab (if asked), and list every
    layout fault found.

    Faults: a control's label, working parts (slider track, buttons, checkbox) and readout
    overlapping one another or another row; a label or readout whose text is cut off; a slider
    track shorter than 150 px; toggle buttons that leave their label's row.
    """
    page.set_viewport_size({"width": width, "height": 1000})
    page.wait_for_function(  # let JupyterLab reflow to the new width
        "w => document.documentElement.clientWidth === w", arg=width, polling="raf"
    )
    lab.scroll_into_view_if_needed()
    keep_screenshot(lab, f"{name}-{width}px")
    rows = lab.evaluate(MEASURE_ROWS)
    faults = []
    if not rows:
        return [f"{width}px: no control rows found"]
    for i, row in enumerate(rows):
        where = f"{width}px, row {row['text']!r}"
        boxes = [("label", row["label"]), ("readout", row["readout"])]
        boxes = [(k, b) for k, b in boxes if b] + [(p["kind"], p) for p in row["parts"]]
        for a in range(len(boxes)):
            for b in range(a + 1, len(boxes)):
                if overlap(boxes[a][1], boxes[b][1]):
                    faults.append(f"{where}: {boxes[a][0]} overlaps {boxes[b][0]}")
        for other in rows[i + 1 :]:
            if overlap(row["row"], other["row"]):
                faults.append(f"{where} overlaps row {other['text']!r}")
        if row["labelCut"]:
            faults.append(f"{where}: the label's text is cut off")
        if row["readoutCut"]:
            faults.append(f"{where}: the readout's text is cut off")
        for part in row["parts"]:
            if "slider-container" in part["kind"] and part["w"] < 150:
                faults.append(f"{where}: the slider track is only {part['w']:.0f} px wide")
        label, buttons = row["label"], row["buttons"]
        if label and buttons:
            right = label["x"] + label["w"]
            top, bottom = row["row"]["y"], row["row"]["y"] + row["row"]["h"]
            if any(
                b["x"] < right - 0.5 or b["y"] < top - 0.5 or b["y"] + b["h"] > bottom + 0.5
                for b in buttons
            ):
                faults.append(f"{where}: a button left its label's row")
            if not overlap({**buttons[0], "x": label["x"], "w": label["w"]}, label):
                faults.append(f"{where}: the first button is not level with its label")
    return faults


# How whole a lab's picture is, measured on its pixels in the page: per quarter of its height,
# the share of pixels that are not white (or transparent); and the share of near-black neutral
# pixels (text, axes: the colour maps' dark cells are coloured) in the left 15% (the query
# tokens) and the bottom 20% (the key tokens under the bars). A white picture, one with cells but
# no tokens or axes, or one with its bottom half missing (what two threads drawing on one canvas
# gave) fails.
PICTURE_WHOLENESS = """async lab => {
    const img = lab.querySelector('img');
    await img.decode();
    const w = img.naturalWidth, h = img.naturalHeight;
    const canvas = document.createElement('canvas');
    canvas.width = w; canvas.height = h;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const data = context.getImageData(0, 0, w, h).data;
    const bands = [0, 0, 0, 0];
    let left = 0, bottom = 0;
    for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
            const i = 4 * (y * w + x);
            const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
            if (a < 128) continue;
            const hi = Math.max(r, g, b), lo = Math.min(r, g, b);
            if (lo < 235) bands[Math.min(3, Math.floor(4 * y / h))]++;
            if (hi < 110 && hi - lo < 30) {
                if (x < 0.15 * w) left++;
                if (y >= 0.8 * h) bottom++;
            }
        }
    }
    return {bands: bands.map(n => n / (w * h / 4)), left: left / (0.15 * w * h),
            bottom: bottom / (0.2 * w * h), size: [w, h]};
}"""
#: A whole picture of the trained-model lab has at least this share of drawn pixels in every
#: quarter of its height, and of text pixels at its left and bottom. Measured on its pictures of
#: the sentences here: 5-19% drawn per quarter; text 2.1-2.4% at the left, 3.1-3.5% at the
#: bottom; with every token label left out, 0.6% and 1.7% (axes, ticks, the colour bar's numbers).
MIN_DRAWN, MIN_LEFT_TEXT, MIN_BOTTOM_TEXT = 0.01, 0.012, 0.024


def wholeness_faults(lab) -> list[str]:
    """What is missing from the lab's picture (empty if it is whole)."""
    found = lab.evaluate(PICTURE_WHOLENESS)
    faults = [f"quarter {i + 1} is blank" for i, b in enumerate(found["bands"]) if b < MIN_DRAWN]
    if found["left"] < MIN_LEFT_TEXT:
        faults.append("no query tokens at the left")
    if found["bottom"] < MIN_BOTTOM_TEXT:
        faults.append("no key tokens or axes at the bottom")
    return [f"{f} ({found})" for f in faults]


@pytest.fixture(scope="module")
def student(browser_session):
    """STUDENT_NOTEBOOK open in JupyterLab, its stored picture looked for, then Run All: yields
    (page, lab, errors, stored) once the lab's live picture shows."""
    base, token = browser_session.lab
    name = STUDENT_NOTEBOOK.stem
    with open_page(browser_session.chromium, name, 1400, 1000) as (page, errors):
        page.goto(f"{base}/lab/tree/{STUDENT_NOTEBOOK.name}?reset&token={token}", timeout=30_000)
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(
            timeout=30_000
        )
        # Before anything runs, the saved lab output shows its stored picture (the PNG beside
        # the widget view), as it does on GitHub and in static HTML.
        stored = (
            page.locator(".jp-CodeCell")
            .filter(has_text="_lab(")
            .first.locator(".jp-OutputArea-output.jp-RenderedImage img")
        )
        # JupyterLab adds a long notebook's cells to the page a batch at a time, in idle moments:
        # on a loaded 2-core machine the lab's cell (cell 34 of 13's 48) took over 10 s
        stored.first.wait_for(state="attached", timeout=30_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("[data-command='runmenu:run-all']").click()
        lab = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider")).first
        lab.locator("img").first.wait_for(timeout=60_000)
        lab.scroll_into_view_if_needed()
        new_picture(lab, "", "running the cell", timeout=30)
        yield types.SimpleNamespace(page=page, lab=lab, errors=errors)


def type_sentence(student, sentence: str) -> None:
    """Type ``sentence`` into the lab's text box, press Enter, and wait for the kernel's answer
    to it (not only to the changes sent before: the page sends after the key press returns)."""
    box = student.lab.locator(".widget-combobox input, .widget-text input").first
    sent_before = sent_changes(student.page)
    box.fill(sentence)
    box.press("Enter")
    kernel_answered(student.page, sent_before=sent_before)


def query_token(lab) -> str:
    """The query token the lab's token slider shows (its readout: "position: token")."""
    row = lab.locator(".attnlib-control-row").filter(has_text="query token").first
    return row.locator(".attnlib-readout, .widget-readout").first.inner_text().split(": ", 1)[-1]


def test_a_new_sentence_in_jupyterlab_gives_a_whole_picture_try_after_try(student) -> None:
    """Typed right after Run All (later cells may still run on the main thread while the lab's
    messages arrive on the subshell's): every try shows a whole picture of the new sentence."""
    faults = []
    for sentence in NEW_SENTENCES:
        before = picture(student.lab)
        type_sentence(student, sentence)
        new_picture(student.lab, before, f"typing {sentence!r}")
        kernel_answered(student.page)
        faults += [f"{sentence!r}: {f}" for f in wholeness_faults(student.lab)]
    assert not faults, "pictures not whole after a new sentence:\n" + "\n".join(faults)


def test_a_new_sentence_keeps_the_query_token_where_it_has_it(student) -> None:
    """Back to the notebook's sentence, then a new one: "it" stays the query token though it
    sits at another position (it jumped to [SEP] once)."""
    type_sentence(student, FIRST_SENTENCE)
    assert query_token(student.lab) == "it", f"on {FIRST_SENTENCE!r}: {query_token(student.lab)}"
    type_sentence(student, NEW_SENTENCES[0])
    assert query_token(student.lab) == "it", f"the query token moved to {query_token(student.lab)}"


def test_a_sentence_over_the_token_limit_is_refused_in_one_plain_sentence(student) -> None:
    lab = student.lab
    type_sentence(student, TOO_LONG)
    message = lab.locator(".attnlib-error").first
    message.wait_for(timeout=10_000)
    text = message.inner_text().strip()
    assert text, "no message for a sentence over the limit"
    assert "Traceback" not in (message.text_content() or ""), f"a traceback: {text!r}"
    assert "\n" not in text, f"not one plain sentence: {text!r}"
    assert str(MAX_TOKENS) in text, f"the message does not say the limit: {text!r}"
    assert shows_no_error(lab), "a traceback on stderr"
    type_sentence(student, NEW_SENTENCES[0])  # a good sentence clears the message
    assert not message.inner_text().strip(), "the message stayed after a good sentence"


def test_a_lab_notebook_in_jupyterlab_every_control_moves_it_and_reads_cleanly(student) -> None:
    page, lab = student.page, student.lab
    name = STUDENT_NOTEBOOK.stem
    move_every_control(page, lab)
    faults = [f for w in LAYOUT_WIDTHS for f in check_control_layout(page, lab, name, w)]
    assert not faults, "the lab's controls collide:\n" + "\n".join(faults)
    assert shows_no_error(lab), "the lab shows an error"


def test_the_jupyterlab_page_shows_no_error(student) -> None:
    assert not student.errors, f"errors in the page: {student.errors}"


def test_a_lab_notebook_under_voila_as_readme_offers_to_present_it(browser_session) -> None:
    """README's other way to present: one lab notebook under voila, its text and lab without
    its code; every control moves the picture; no error."""
    name = PRESENTED_NOTEBOOK.stem
    url = browser_session.presented
    with open_page(browser_session.chromium, f"voila-{name}", 1920, 1080) as (page, errors):
        page.goto(url, timeout=60_000)
        lab = page.locator(".attnlib-lab").first
        lab.locator("img").wait_for(timeout=60_000)
        assert page.get_by_text("Softmax saturation").count() > 0, "the notebook's text is missing"
        code = page.locator(".cm-editor, .CodeMirror, .jp-InputArea-editor")
        assert code.count() == 0, f"{code.count()} code cells shown"
        lab.scroll_into_view_if_needed()
        move_every_control(page, lab)
        keep_screenshot(page, f"voila-{name}")
        assert shows_no_error(lab), "the lab shows an error"
        assert not errors, f"errors in the page: {errors}"


def test_a_reloaded_voila_page_shuts_its_old_kernel_down(browser_session, tmp_path) -> None:
    """README's voila command with its options (voila.json): a reload, like a closed tab, shuts
    the old page's kernel down at once, so that reloads do not pile up kernels of ~275 MB each
    until the cull. voila asks for it as the page goes; its XSRF check refused that request
    (403) until voila.json turned the check off. A one-cell notebook: the kernels are tested,
    not a lab. Its cell shows a widget, as a lab does: the page asks for the shutdown from its
    widget manager, which is ready once a widget shows, while a printed text is in the page's
    HTML and can show before (under load, a reload then comes too early to ask)."""
    import time

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    notebook = tmp_path / "hello.ipynb"
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = [new_code_cell("import ipywidgets\nipywidgets.Label('hello')")]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": kernelspec}), notebook)
    with (tmp_path / "voila.log").open("wb") as log:
        # the next visitor's kernel is run ahead at once here (the session's servers wait)
        proc, url = start_voila(tmp_path, notebook, log, fill_delay=0)
    try:
        wait_until_listening(proc, url, tmp_path / "voila.log", time.monotonic() + 60)
        with open_page(browser_session.chromium, "voila-reload", 800, 600) as (page, errors):
            page.goto(url, timeout=60_000)
            hello = page.get_by_text("hello", exact=True)  # the widget, not its text/plain
            hello.wait_for(timeout=60_000)
            page.reload(timeout=60_000)
            hello.wait_for(timeout=60_000)
            deadline = time.monotonic() + 15  # the page's kernel and the one run ahead
            while len(children(proc.pid)) > 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            log = (tmp_path / "voila.log").read_text(errors="replace")[-3000:]
            assert len(children(proc.pid)) <= 2, f"a reloaded page left its kernel running:\n{log}"
            assert not errors, f"errors in the page: {errors}"
    finally:
        stop(proc)


# The sizes present mode promises, measured in the page: picture (shown and natural width),
# the smallest font of the controls, readouts and caption, and the slider handles.
MEASURE_PRESENT = """lab => {
    const img = lab.querySelector('img');
    const fonts = [...lab.querySelectorAll(
        '.widget-label, .attnlib-readout, .attnlib-caption, .widget-toggle-button')]
        .filter(e => e.getBoundingClientRect().width > 0)
        .map(e => parseFloat(getComputedStyle(e).fontSize));
    const handles = [...lab.querySelectorAll('.noUi-handle')]
        .map(h => Math.min(h.getBoundingClientRect().width, h.getBoundingClientRect().height));
    return {shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
            font: Math.min(...fonts), handle: Math.min(...handles)};
}"""


#: Each lab block's height, in the page, at the window size now.
LAB_HEIGHTS = """() => [...document.querySelectorAll('.attnlib-present')]
    .map(lab => lab.getBoundingClientRect().height)"""


@pytest.fixture(scope="module")
def bench(browser_session):
    """The lab bench's page at 1920 x 1080, every lab shown; axe-core's scan of it made then.
    Yields (page, labs, errors, violations)."""
    url = browser_session.bench
    with open_page(browser_session.chromium, "lab_bench", 1920, 1080) as (page, errors):
        page.goto(url, timeout=60_000)
        labs = page.locator(".attnlib-present")
        expected = [n for n in attnlib.labs.__all__ if n.endswith("_lab")]
        labs.nth(len(expected) - 1).locator("img").wait_for(timeout=60_000)
        assert labs.count() == len(expected), f"{labs.count()} labs shown, {len(expected)} exist"
        violations = scan(page)
        yield types.SimpleNamespace(page=page, labs=labs, errors=errors, violations=violations)


def test_lab_bench_has_no_wcag_2_aa_violations(bench) -> None:
    """axe-core's scan of the bench, made as soon as every lab showed (a frame drawn ahead
    may not have reached every lab yet: its picture and handles must be named already)."""
    if bench.violations is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(MISSING_AXE)
    assert not bench.violations, "WCAG 2 A/AA violations on the lab bench:\n" + "\n".join(
        bench.violations
    )


def test_lab_bench_every_lab_fits_a_projector_and_a_full_hd_screen(bench) -> None:
    """Each lab block (title, controls, caption, picture) no taller than the window, at
    1280 x 720 and 1920 x 1080: while dragging the top slider the picture stays on screen."""
    page, faults = bench.page, []
    for width, height in PRESENT_SCREENS:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function(
            "w => document.documentElement.clientWidth <= w", arg=width, polling="raf"
        )
        for name, tall in zip(bench_lab_names(bench), page.evaluate(LAB_HEIGHTS), strict=True):
            if tall > height:
                faults.append(f"{width}x{height}: {name} is {tall:.0f} px tall")
    page.set_viewport_size({"width": 1920, "height": 1080})
    assert not faults, "labs taller than the screen:\n" + "\n".join(faults)


def bench_lab_names(bench) -> list[str]:
    """Each lab's title on the bench, in page order."""
    return [t.split("\n", 1)[0] for t in bench.labs.all_inner_texts()]


def test_lab_bench_a_frame_drawn_ahead_shows_without_a_picture_from_the_kernel(bench) -> None:
    """Once the frames drawn ahead have arrived (attnlib.liveview.ahead), a step of the gradient
    lab shows its picture with no picture from the kernel."""
    gradient = bench.labs.filter(has_text="Training a retrieval head")
    settle(bench.page)
    gradient.scroll_into_view_if_needed()
    gradient.locator(".noUi-handle").nth(1).focus()  # the training step
    assert not pictures_before_next_picture(bench.page, gradient, "ArrowRight"), (
        "the gradient lab's next step waited for a picture from the kernel"
    )


def test_lab_bench_every_lab_at_present_size_and_every_control_moves_it(bench) -> None:
    page, labs = bench.page, bench.labs
    faults, key_seconds = [], []
    for i in range(labs.count()):
        lab = labs.nth(i)
        lab.scroll_into_view_if_needed()
        sizes = lab.evaluate(MEASURE_PRESENT)
        if min(sizes["shown"], sizes["natural"]) < PRESENT_MIN_WIDTH:
            faults.append(f"lab {i}: picture {sizes} narrower than {PRESENT_MIN_WIDTH} px")
        if sizes["font"] < PRESENT_MIN_TEXT - 0.01:
            faults.append(f"lab {i}: control text {sizes['font']} px < {PRESENT_MIN_TEXT:.1f}")
        if sizes["handle"] < PRESENT_MIN_HANDLE:
            faults.append(f"lab {i}: slider handle {sizes['handle']} px < {PRESENT_MIN_HANDLE}")
        key_seconds += move_every_control(page, lab)
        keep_screenshot(lab, f"lab_bench-{i}")
        if not shows_no_error(lab):
            faults.append(f"lab {i} shows an error")
    keys_ms = sorted(1000 * s for s in key_seconds)
    print(
        f"voila, present size: arrow key to new picture {statistics.median(keys_ms):.0f} ms"
        f" median over {len(keys_ms)} presses (benchmarks/lab_latency_in_browser.py"
        " measures drags too)"
    )
    assert not faults, "\n".join(faults)


def test_lab_bench_shows_no_error(bench) -> None:
    assert not bench.errors, f"errors in the page: {bench.errors}"
