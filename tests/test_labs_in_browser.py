"""Every lab notebook, as a student uses it: JupyterLab in chromium, Run All, drag every control.

Needs Debian's chromium at /usr/bin/chromium (``apt-get install -y chromium``) and the python
package ``playwright`` (``pip install playwright``; never ``playwright install``, the system browser
is used). Without them the test is skipped, except in CI (environment variable CI set), where
it fails: .ci/run installs chromium, so a skip there would hide a broken setup. One JupyterLab
server (loopback only, random token, a copy of the notebooks in a temporary folder, so nothing
is saved over the committed files) serves the whole module and is stopped at the end, with
the browser.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Screenshots of the lab controls at each checked width (git-ignored; look at them after a run).
ARTIFACTS = ROOT / "artifacts" / "browser"
#: Browser window widths at which the controls must read cleanly: a laptop with the file
#: browser open, and a full-HD projector.
LAYOUT_WIDTHS = (900, 1920)
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def lab_notebooks() -> list[Path]:
    """Notebooks that display a lab from attnlib.widgets (found by reading their code cells)."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = "\n".join(
            c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
        )
        if "attnlib.widgets" in code and re.search(r"\b\w+_lab\(", code):
            found.append(path)
    return found


try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None

MISSING = [
    reason
    for absent, reason in (
        (
            sync_playwright is None,
            "python playwright missing: pip install playwright (do not run"
            " 'playwright install'; the test uses system chromium)",
        ),
        (not CHROMIUM.exists(), "/usr/bin/chromium missing: apt-get install -y chromium"),
    )
    if absent
]


@pytest.fixture(scope="module", autouse=True)
def browser_tools() -> None:
    """Skip on a machine without the browser tools; in CI (CI set) that is a failure instead."""
    if MISSING:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("; ".join(MISSING))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A JupyterLab on 127.0.0.1 serving a copy of the lab notebooks; yields (base url, token)."""
    home = tmp_path_factory.mktemp("jupyterlab")
    work = home / "notebooks"
    work.mkdir()
    for path in lab_notebooks():
        shutil.copy(path, work / path.name)
    settings = {  # no news toast; render every cell (no windowing), so outputs stay in the page
        ("apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False},
        ("notebook-extension", "tracker"): {
            "windowingMode": "none",
            "autoStartDefaultKernel": True,
        },
    }
    for (extension, plugin), values in settings.items():
        folder = home / "settings" / "@jupyterlab" / extension
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{plugin}.jupyterlab-settings").write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    log = open(home / "server.log", "wb")  # noqa: SIM115 - closed in the finally below
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_RUNTIME_DIR": str(home / "rt")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={work}",
            "--ServerApp.port_retries=0",
            "--allow-root",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = (home / "server.log").read_text(errors="replace")[-2000:]
                    pytest.fail(f"JupyterLab did not start (exit code {proc.poll()}):\n{tail}")
                time.sleep(0.2)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def image_source(lab) -> str:
    return lab.locator("img").first.get_attribute("src") or ""


def new_image(lab, before: str, timeout: float) -> str | None:
    """The lab's picture once it differs from ``before``; None if it did not within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = image_source(lab)
        if now and now != before:
            return now
        time.sleep(0.05)
    return None


def wait_for_new_image(lab, before: str, what: str, timeout: float = 5.0) -> str:
    now = new_image(lab, before, timeout)
    assert now is not None, f"the lab's picture did not change after {what} (waited {timeout} s)"
    return now


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
    """Resize the window to ``width``, screenshot the lab, and list every layout fault found.

    Faults: a control's label, working parts (slider track, buttons, checkbox) and readout
    overlapping one another or another row; a label or readout whose text is cut off; a slider
    track shorter than 150 px; toggle buttons that leave their label's row.
    """
    page.set_viewport_size({"width": width, "height": 1000})
    page.wait_for_timeout(400)  # let JupyterLab reflow
    lab.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lab.screenshot(path=ARTIFACTS / f"{name}-{width}px.png")
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


@pytest.mark.parametrize("notebook", lab_notebooks(), ids=lambda p: p.stem)
def test_every_control_moves_the_picture(server, browser, notebook: Path, tmp_path) -> None:
    base, token = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        page.goto(f"{base}/lab/tree/{notebook.name}?reset&token={token}", timeout=30_000)
        page.locator(".jp-Notebook").first.wait_for(timeout=30_000)
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
        stored.first.wait_for(state="attached", timeout=10_000)
        stored.first.scroll_into_view_if_needed()
        page.screenshot(path=tmp_path / "opened.png")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("[data-command='runmenu:run-all']").click()
        lab = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider")).first
        lab.wait_for(timeout=30_000)
        lab.locator("img").first.wait_for(timeout=10_000)
        lab.scroll_into_view_if_needed()
        lab.screenshot(path=tmp_path / "before.png")
        picture = wait_for_new_image(lab, "", "running the cell")

        buttons = lab.locator(".widget-toggle-buttons button")
        for i in range(buttons.count()):  # every choice of every toggle-button row
            if "mod-active" not in (buttons.nth(i).get_attribute("class") or ""):
                buttons.nth(i).click()
                picture = wait_for_new_image(lab, picture, f"clicking button {i}")
        sliders = lab.locator(".widget-slider .noUi-handle")
        assert sliders.count() >= 1, "the lab shows no slider"
        for i in range(sliders.count()):
            disabled = "h => !!h.closest('[disabled]')"
            for j in range(buttons.count()):  # a slider may only apply to some choices
                if not sliders.nth(i).evaluate(disabled):
                    break
                if "mod-active" not in (buttons.nth(j).get_attribute("class") or ""):
                    buttons.nth(j).click()
                    picture = wait_for_new_image(lab, picture, f"clicking button {j}")
            assert not sliders.nth(i).evaluate(disabled), f"slider {i} is never enabled"
            sliders.nth(i).focus()
            page.keyboard.press("ArrowRight")
            moved = new_image(lab, picture, timeout=2.0)
            if moved is None:  # the slider started at its maximum
                page.keyboard.press("ArrowLeft")
                moved = wait_for_new_image(lab, picture, f"arrow keys on slider {i}")
            picture = moved
            page.keyboard.press("ArrowLeft")
            picture = wait_for_new_image(lab, picture, f"ArrowLeft on slider {i}")
        for i in range(lab.locator("input[type='checkbox']").count()):
            lab.locator("input[type='checkbox']").nth(i).click()
            picture = wait_for_new_image(lab, picture, f"clicking checkbox {i}")
        for i in range(lab.locator("select").count()):
            select = lab.locator("select").nth(i)
            options = select.locator("option").all_inner_texts()
            current = select.evaluate("s => s.options[s.selectedIndex].text")
            select.select_option(label=next(o for o in options if o != current))
            picture = wait_for_new_image(lab, picture, f"choosing in dropdown {i}")
        lab.screenshot(path=tmp_path / "after.png")
        faults = [
            f for w in LAYOUT_WIDTHS for f in check_control_layout(page, lab, notebook.stem, w)
        ]
        print(f"layout screenshots: {ARTIFACTS}/{notebook.stem}-*px.png")
        assert not faults, "the lab's controls collide:\n" + "\n".join(faults)
        assert (
            lab.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
            ).count()
            == 0
        ), "the lab shows an error"
        assert not errors, f"errors in the page: {errors}"
    except BaseException:
        page.screenshot(path=tmp_path / "failure.png")
        raise
    finally:
        page.close()
