"""What the browser tests (and benchmarks/lab_latency_in_browser.py) share: starting JupyterLab
and voila, the one browser session of a test run (``session``: chromium and every server the
browser tests use, started together once), and driving a lab in chromium. Not a test file."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: The notebook checked in JupyterLab as a student sees it (every lab is checked in the bench):
#: the trained-model lab, whose new sentence went blank there (two threads drawing at once).
STUDENT_NOTEBOOK = NOTEBOOKS / "13_trained_model.ipynb"
#: Every lab at presenting size, as README's instructor section serves it.
BENCH = NOTEBOOKS / "lab_bench.ipynb"
#: The lab notebook README's instructor section offers to present on its own.
PRESENTED_NOTEBOOK = NOTEBOOKS / "04_softmax_saturation.ipynb"
#: The labs as a reveal.js deck (the notebook asks for voila's reveal template).
DECK = NOTEBOOKS / "lab_slides.ipynb"
REVEAL = NOTEBOOKS / "vendor" / "reveal.js"
#: README's offline slide options: serve the local copies (notebooks/vendor/) and take reveal.js's
#: styles and jQuery from them.
OFFLINE_OPTIONS = (
    "--VoilaConfiguration.file_allowlist=['vendor/.*']",
    "--VoilaConfiguration.resources={'reveal': {'url_prefix': 'voila/files/vendor/reveal.js'}}",
    "--HTMLExporter.jquery_url=voila/files/vendor/jquery/dist/jquery.min.js",
)
#: Where screenshots go (git-ignored): a failed page's, and each lab's if SCREENSHOTS.
ARTIFACTS = ROOT / "artifacts" / "browser"
#: Whether the tests keep a screenshot of each lab they check (``ATTNLIB_SCREENSHOTS=1``), for a
#: person to look at: ten a run, ~0.2-0.4 CPU-s of chromium each (2.7 CPU-s measured), which a
#: run that nobody looks at (CI) need not spend. A page's failure screenshot is always taken.
SCREENSHOTS = os.environ.get("ATTNLIB_SCREENSHOTS") == "1"
#: The full browser (``apt-get install chromium``): benchmarks/lab_latency_in_browser.py measures
#: felt latency in the browser a user has.
FULL_CHROMIUM = Path("/usr/bin/chromium")
#: Debian's chromium-headless-shell (``apt-get install chromium-headless-shell``): Chromium's own
#: engine (Blink, V8, its network stack) without what a headless run does not use (the window UI,
#: a GPU process); Playwright's headless runs use the same build of their own. Over the browser
#: tests it spent ~9 CPU-s (23%) less in chromium than the full browser, measured side by side
#: four times, with every test passing on both.
HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")
#: The browser the tests drive: the headless shell (CI installs it), else the full browser.
CHROMIUM = (
    HEADLESS_SHELL if HEADLESS_SHELL.exists() or not FULL_CHROMIUM.exists() else FULL_CHROMIUM
)
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


#: Only for the tests: once the page has taken the kernel run ahead, voila would start another
#: one a second later (for a next visitor) and run every lab again, competing with the test
#: for the CPU. The page the test sees is served the same way either way. jupytext is a
#: contributors' tool, not in the student install (requirements.txt): its lab extension, which
#: throws a console error in every voila page, is left out as a student's voila has none.
#: (voila.json's cull, 900 s idle without a connection, is kept: with 60 s, a kernel run ahead
#: that waited longer than that for its page was culled between voila handing it to the page
#: and the page's websocket connecting, seen here: "Culling 'idle' kernel ... with 0
#: connections due to 80 seconds of inactivity", then a page without its labs.)
#: README's own options are in voila.json, which voila reads from its working directory (ROOT).
VOILA_TEST_OPTIONS = ("--VoilaConfiguration.extension_denylist=jupyterlab-jupytext",)
#: How long voila waits (s) before running ahead a kernel for the next visitor (see above).
VOILA_TEST_FILL_DELAY = 3600
#: Server extensions JupyterLab loads that no notebook page uses: language servers (they look
#: for node and npm at start), terminals, voila's preview; and jupytext's, which a student's
#: install (requirements.txt) lacks (its lab extension is disabled in start_jupyterlab too).
JUPYTERLAB_UNUSED = (
    "jupyter_lsp",
    "jupyter_server_terminals",
    "voila.server_extension",
    "jupyterlab_jupytext",
)

#: Runs ``python -m MODULE`` with the package ``rfc3987_syntax`` marked absent. jsonschema
#: imports it (if installed) to check "iri" string formats, which no Jupyter schema uses, and
#: compiling its grammar cost ~3 s of CPU in every server (see tools/pytest_startup.py, which
#: does the same for pytest). Nothing the servers serve changes.
_RUN_MODULE = (
    "import runpy, sys; sys.modules['rfc3987_syntax'] = None; "
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)


def jupyter_command(module: str, *args: str) -> list[str]:
    """The command line of ``python -m module *args``, without the 3 s import (above)."""
    return [sys.executable, "-c", _RUN_MODULE.format(module=module), *args]


try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: F401 (benchmarks)
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None


def missing(chromium: Path, package: str) -> list[str]:
    """Why ``chromium`` (Debian's ``package``) cannot be driven here, if it cannot."""
    reasons = []
    if sync_playwright is None:
        reasons.append(
            "python playwright missing: pip install playwright (do not run 'playwright install';"
            " the browser is Debian's)"
        )
    if not chromium.exists():
        reasons.append(f"{chromium} missing: apt-get install -y {package}")
    return reasons


#: Why the browser tests cannot run here, if they cannot.
MISSING = missing(CHROMIUM, "chromium-headless-shell")
#: Why the voila test cannot run here, if it cannot.
VOILA_MISSING = (
    ["voila missing: pip install voila"] if not importlib.util.find_spec("voila") else []
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(
    ready: Callable[[], object], proc: subprocess.Popen, url: str, log: Path, deadline: float
) -> None:
    """Return once ``ready()`` stops raising OSError; fail with the server's log if the server
    exits or time runs out."""
    while True:
        try:
            ready()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"{url} did not come up (exit code {proc.poll()}):\n{tail}")
            time.sleep(0.1)


def wait_until_serving(proc: subprocess.Popen, url: str, log: Path, deadline: float) -> None:
    """Return once ``url`` answers."""
    wait_until(lambda: urllib.request.urlopen(url, timeout=2).close(), proc, url, log, deadline)


def wait_until_listening(proc: subprocess.Popen, url: str, log: Path, deadline: float) -> None:
    """Return once the port of ``url`` accepts connections (voila's page itself waits for its
    preheated kernel, so asking for it would block)."""
    port = int(url.rsplit(":", 1)[1].strip("/"))

    def connect() -> None:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()

    wait_until(connect, proc, url, log, deadline)


def start_jupyterlab(
    home: Path, notebooks: list[Path], log: BinaryIO
) -> tuple[subprocess.Popen, str, str]:
    """Start (not wait for) a JupyterLab on 127.0.0.1 serving copies of ``notebooks``.

    Returns (process, base url, token); the server writes to ``log``.
    """
    work = home / "notebooks"
    work.mkdir(parents=True)
    for path in notebooks:
        shutil.copy(path, work / path.name)
    settings = {  # no news toast; the notebook's own windowing (JupyterLab's default,
        # "contentVisibility": cells out of view are not drawn; a test scrolls to what it checks)
        ("apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False},
        ("notebook-extension", "tracker"): {"autoStartDefaultKernel": True},
    }
    for (extension, plugin), values in settings.items():
        folder = home / "settings" / "@jupyterlab" / extension
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{plugin}.jupyterlab-settings").write_text(json.dumps(values))
    # No check whether JupyterLab's own bundle needs a rebuild: it runs node twice (1.6 s of CPU)
    # when the page opens, and only matters to someone installing source extensions.
    page_config = home / "config" / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True)
    page_config.write_text(
        json.dumps(
            {
                "buildCheck": False,
                "buildAvailable": False,
                # jupytext's (see JUPYTERLAB_UNUSED); the language-server client and the two
                # plugins that need it: its server extension is off, and it would ask for
                # /lsp/status and log a 404
                "disabledExtensions": {
                    "jupyterlab-jupytext": True,
                    "@jupyterlab/lsp-extension": True,
                    "@jupyterlab/fileeditor-extension:language-server": True,
                    "@jupyterlab/notebook-extension:language-server": True,
                },
            }
        )
    )
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_PLATFORM_DIRS": "1",
        "JUPYTER_RUNTIME_DIR": str(home / "rt"),
        "JUPYTER_CONFIG_PATH": os.pathsep.join(
            filter(None, [str(home / "config"), os.environ.get("JUPYTER_CONFIG_PATH")])
        ),
    }
    proc = subprocess.Popen(
        jupyter_command(
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={work}",
            "--ServerApp.port_retries=0",
            "--allow-root",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            *(f"--ServerApp.jpserver_extensions={name}=False" for name in JUPYTERLAB_UNUSED),
        ),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, f"http://127.0.0.1:{port}", token


def open_session(base: str, token: str, notebook: str) -> None:
    """Start ``notebook``'s kernel on the server, as JupyterLab does when it opens the notebook
    (POST /api/sessions), so that the kernel starts while the page loads.

    The page then joins this session. Left to start its own kernel, JupyterLab on a busy machine
    sometimes replaced that kernel while the page connected, and a Run All clicked meanwhile was
    lost (the cells stayed unrun).
    """
    body = {"path": notebook, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}}
    request = urllib.request.Request(
        f"{base}/api/sessions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30):
        pass


def start_voila(
    home: Path,
    notebook: Path,
    log: BinaryIO,
    *options: str,
    fill_delay: int = VOILA_TEST_FILL_DELAY,
) -> tuple[subprocess.Popen, str]:
    """Start (not wait for) voila serving ``notebook``, its kernel run ahead (preheated).

    The command an instructor runs (README; its options are in ROOT/voila.json, and ``options``
    are added), plus a loopback address and a free port; the kernel for a next visitor is run
    ahead ``fill_delay`` seconds after a page takes one.
    Returns (process, page url); the server writes to ``log``.
    """
    port = free_port()
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_RUNTIME_DIR": str(home / "vrt")}
    proc = subprocess.Popen(
        jupyter_command(
            "voila",
            str(notebook),
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            "--Voila.port_retries=0",
            f"--Voila.connection_dir_root={home}",  # kernel files: in the (temporary) home
            *VOILA_TEST_OPTIONS,
            f"--VoilaKernelManager.fill_delay={fill_delay}",
            *options,
        ),
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, f"http://127.0.0.1:{port}/"


def children(pid: int) -> list[int]:
    """The process ids of ``pid``'s children (Linux; elsewhere none are found)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            found += [int(child) for child in task.read_text().split()]
    return found


def stop(*procs: subprocess.Popen) -> None:
    """Kill Jupyter servers and every kernel they started, at once.

    Asked politely (SIGTERM), a server asks each kernel to shut down and waits for it: 1.6 s
    with an idle kernel, 5 s and more with a busy one. The servers started here keep all their
    files in the temporary home given to them and have nothing to save: kill them, then their
    kernels (each kernel leads its own process group), so that none is left behind.
    """
    kernels = [pid for proc in procs for pid in children(proc.pid)]
    for proc in procs:
        proc.kill()
    for pid in kernels:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:  # it leads no group of its own (or has ended already)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for proc in procs:
        proc.wait(timeout=10)


def pools_option(*notebooks: Path) -> str:
    """voila's option (tree mode) that runs ahead a kernel for each of ``notebooks`` only (by
    default it runs one for every notebook of the folder)."""
    pools = {"default": {"pool_size": 0}} | {n.name: {"pool_size": 1} for n in notebooks}
    return f"--VoilaKernelManager.kernel_pools_config={json.dumps(pools)}"


class Session(types.SimpleNamespace):
    """What ``session`` started: ``chromium``; ``lab`` (JupyterLab's base url and token, serving
    a copy of STUDENT_NOTEBOOK, its kernel started); ``bench``, ``presented`` and ``slides``
    (voila page urls); ``logs`` (the servers' log files)."""


@contextlib.contextmanager
def session(home: Path, files: set[str]) -> Iterator[Session]:
    """One chromium and the servers the browser test ``files`` use, started together and killed,
    with their kernels, at the end.

    * test_labs_in_browser.py: JupyterLab (STUDENT_NOTEBOOK's kernel started at once, as
      JupyterLab does when it opens the notebook); one voila serving the notebooks folder (the
      lab bench and PRESENTED_NOTEBOOK at ``/voila/render/NAME``, each with its kernel run ahead).
    * test_slides_in_browser.py: voila serving the deck as README's offline slide command does
      (the one check of README's single-notebook command).

    Each voila kernel runs its notebook ahead as the server starts, while the first tests work:
    a page opened before its kernel is done shows voila's animated spinner meanwhile, which a
    headless chromium redraws at ~0.2 CPU-s per second.
    """
    with contextlib.ExitStack() as stack:
        found = Session(logs={})
        procs, waits = [], []

        def log(name: str) -> BinaryIO:
            found.logs[name] = home / f"{name}.log"
            return stack.enter_context(found.logs[name].open("wb"))

        if "test_labs_in_browser.py" in files:
            lab_proc, base, token = start_jupyterlab(home, [STUDENT_NOTEBOOK], log("jupyterlab"))
            tree_proc, tree = start_voila(
                home, NOTEBOOKS, log("voila"), pools_option(BENCH, PRESENTED_NOTEBOOK)
            )
            procs += [lab_proc, tree_proc]
            found.lab = (base, token)
            found.bench = f"{tree}voila/render/{BENCH.name}"
            found.presented = f"{tree}voila/render/{PRESENTED_NOTEBOOK.name}"
            waits += [
                lambda: wait_until_serving(
                    lab_proc, f"{base}/api/status?token={token}", found.logs["jupyterlab"], deadline
                ),
                lambda: open_session(base, token, STUDENT_NOTEBOOK.name),
                lambda: wait_until_listening(tree_proc, tree, found.logs["voila"], deadline),
            ]
        if "test_slides_in_browser.py" in files:
            slides_proc, found.slides = start_voila(
                home, DECK, log("voila-slides"), *OFFLINE_OPTIONS
            )
            procs.append(slides_proc)
            waits.append(
                lambda: wait_until_listening(
                    slides_proc, found.slides, found.logs["voila-slides"], deadline
                )
            )
        stack.callback(stop, *procs)
        deadline = time.monotonic() + 60

        playwright = stack.enter_context(sync_playwright())
        found.chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        stack.callback(found.chromium.close)
        for wait in waits:
            wait()
        yield found


#: Resolves with the lab's picture (``img`` src) once it differs from ``before``, or with null
#: after ``ms``. It wakes on the page's own changes (a MutationObserver), not on a timer or on
#: every animation frame: no wait for the next poll, no frames drawn only to poll.
PICTURE_CHANGED = """(lab, [before, ms]) => new Promise(resolve => {
    const changed = () => {
        const img = lab.querySelector('img');
        return img && img.src && img.src !== before ? img.src : null;
    };
    let timer = null;
    const observer = new MutationObserver(() => changed() && done(changed()));
    const done = value => { observer.disconnect(); clearTimeout(timer); resolve(value); };
    observer.observe(lab, {subtree: true, childList: true, attributes: true,
                           attributeFilter: ['src']});
    timer = setTimeout(() => done(null), ms);
    if (changed()) done(changed());
})"""


def picture(lab) -> str:
    return lab.locator("img").first.get_attribute("src") or ""


def new_picture(lab, before: str, what: str, timeout: float = 5.0) -> str:
    """Wait until the lab's picture differs from ``before``; return the new one."""
    shown = lab.evaluate(PICTURE_CHANGED, [before, timeout * 1000])
    if not shown:
        pytest.fail(f"the lab's picture did not change after {what} (waited {timeout} s)")
    return shown


#: Added to a page before its scripts run (``page.add_init_script``). Notes, before the page's
#: own handlers see them, the kernel messages on the page's websockets (JupyterLab's and voila's
#: kernel connections; plain JSON or the binary v1 protocol):
#: ``window.__arrivals``: the arrival time (wall clock, ms) and size of every incoming message
#: (a lab's picture is the only kind over PICTURE_BYTES); ``window.__sentComms``: the ids of the
#: comm messages (widget changes) the page sent; ``window.__idleAfter``: the ids of the messages
#: the kernel has reported "idle" after (it has handled them).
NOTE_ARRIVALS = """(() => {
    window.__arrivals = [];
    window.__sentComms = [];
    window.__idleAfter = new Set();
    const text = new TextDecoder();
    const parse = data => {  // {header, parent_header, content} of a kernel message, or null
        // (the page's other websockets, JupyterLab's events, say, carry other JSON)
        try {
            if (typeof data === 'string') return JSON.parse(data);
            const bytes = new Uint8Array(data instanceof ArrayBuffer ? data : data.buffer);
            const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
            const n = Number(view.getBigUint64(0, true));
            const at = i => Number(view.getBigUint64(8 * (i + 1), true));
            const part = i => JSON.parse(text.decode(bytes.subarray(at(i), at(i + 1))));
            return {header: part(1), parent_header: part(2), content: part(4)};
        } catch (err) {
            return null;
        }
    };
    const note = e => {
        const size = typeof e.data === 'string' ? e.data.length : e.data.byteLength;
        window.__arrivals.push([performance.timeOrigin + performance.now(), size]);
        const msg = size < 5000 ? parse(e.data) : null;
        if (msg && msg.header && msg.header.msg_type === 'status'
                && msg.content && msg.content.execution_state === 'idle' && msg.parent_header) {
            window.__idleAfter.add(msg.parent_header.msg_id);
        }
    };
    const proto = WebSocket.prototype;
    const onmessage = Object.getOwnPropertyDescriptor(proto, 'onmessage');
    Object.defineProperty(proto, 'onmessage', {
        configurable: true,
        get() { return onmessage.get.call(this); },
        set(handler) {
            const noting = function (e) { note(e); return handler.call(this, e); };
            onmessage.set.call(this, handler && noting);
        },
    });
    const send = proto.send;
    proto.send = function (data) {
        const msg = parse(data);
        if (msg && msg.header && msg.header.msg_type === 'comm_msg') {
            window.__sentComms.push(msg.header.msg_id);
        }
        return send.call(this, data);
    };
})();"""
PICTURE_BYTES = 5000


def page_console_error(msg) -> bool:
    """Is this console message an error of the page's own (not an offline CDN file's load)?"""
    url = (msg.location or {}).get("url", "")
    offline = msg.text.startswith("Failed to load resource") and "//127.0.0.1" not in url
    return msg.type == "error" and not offline


@contextlib.contextmanager
def open_page(browser, name: str, width: int, height: int) -> Iterator[tuple[Any, list[str]]]:
    """A page of ``width`` x ``height`` that notes websocket arrivals (NOTE_ARRIVALS) and
    collects the page's errors (uncaught exceptions, and console errors except a failed load of a
    file from outside 127.0.0.1: the tests run offline); on a failure, a full-page screenshot
    ``ARTIFACTS/{name}-failure.png``. Yields (page, errors); the page is closed at the end."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(NOTE_ARRIVALS)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on(
        "console",
        lambda msg: (
            page_console_error(msg)
            and errors.append(f"console: {msg.text} ({(msg.location or {}).get('url')})")
        ),
    )
    try:
        yield page, errors
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"{name}-failure.png", full_page=True)
        raise
    finally:
        page.close()


def keep_screenshot(shown, name: str) -> None:
    """If SCREENSHOTS, save a screenshot of ``shown`` (a page or a locator) as
    ``ARTIFACTS/{name}.png``."""
    if SCREENSHOTS:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shown.screenshot(path=ARTIFACTS / f"{name}.png")


def page_clock(page) -> float:
    """The page's wall clock, in ms (the clock of ``window.__arrivals``)."""
    return page.evaluate("performance.timeOrigin + performance.now()")


def pictures_since(page, since: float) -> int:
    """How many pictures (messages over PICTURE_BYTES) reached the page after ``since``."""
    return page.evaluate(
        "([since, size]) => window.__arrivals.filter(a => a[0] > since && a[1] > size).length",
        [since, PICTURE_BYTES],
    )


#: Arms ``window.__pictureChanged``: a promise of the time (as in ``__arrivals``) at which the
#: lab's picture next changes.
WATCH_PICTURE = """lab => {
    const img = lab.querySelector('img');
    window.__pictureChanged = new Promise(resolve => new MutationObserver((_, observer) => {
        observer.disconnect();
        resolve(performance.timeOrigin + performance.now());
    }).observe(img, {attributes: true, attributeFilter: ['src']}));
}"""


def pictures_before_next_picture(page, lab, key: str, timeout_s: float = 5.0) -> int:
    """Press ``key`` (on the focused control) and count the pictures that reached the page
    between the key press and the lab's picture changing; fail if it does not change."""
    lab.evaluate(WATCH_PICTURE)
    since = page_clock(page)
    page.keyboard.press(key)
    changed = page.evaluate(
        "ms => Promise.race([window.__pictureChanged,"
        " new Promise(resolve => setTimeout(() => resolve(null), ms))])",
        timeout_s * 1000,
    )
    if changed is None:
        pytest.fail(f"the lab's picture did not change after {key} (waited {timeout_s} s)")
    return page.evaluate(
        "([since, until, size]) => window.__arrivals.filter("
        "a => a[0] > since && a[0] <= until && a[1] > size).length",
        [since, changed, PICTURE_BYTES],
    )


def sent_changes(page) -> int:
    """How many widget changes the page has sent so far (NOTE_ARRIVALS)."""
    return page.evaluate("window.__sentComms.length")


def kernel_answered(page, timeout_s: float = 10, sent_before: int = -1) -> None:
    """Wait until the kernel has handled every widget change the page sent (it reported "idle"
    after the last one; ipywidgets sends a held-back change as that report arrives), and, given
    ``sent_before`` (``sent_changes`` before an action), until the page has sent a change since:
    the page sends after a key press returns. A picture drawn ahead shows first; the kernel's
    answer may still move other controls (a slider's end), and a lab moves those before it
    reports idle."""
    page.wait_for_function(
        """(before) => {
            const sent = window.__sentComms;
            const last = sent[sent.length - 1];
            return sent.length > before && (last === undefined || window.__idleAfter.has(last));
        }""",
        arg=sent_before,
        polling=50,
        timeout=timeout_s * 1000,
    )


def settle(page, quiet_s: float = 2.0, limit_s: float = 120.0) -> float:
    """Wait until no picture has reached the page for ``quiet_s`` (every frame drawn ahead has
    arrived); return the seconds waited, or fail after ``limit_s``."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if pictures_since(page, page_clock(page) - 1000 * quiet_s) == 0:
            return time.monotonic() - start
        time.sleep(0.25)
    pytest.fail(f"pictures kept arriving for {limit_s:.0f} s")


def is_active(button) -> bool:
    return "mod-active" in (button.get_attribute("class") or "")


def move_every_control(page, lab) -> list[float]:
    """Click every toggle button, step every slider both ways with the arrow keys, click every
    checkbox, choose in every dropdown; each must change the picture. Returns the seconds from
    each arrow key to the new picture. The page needs NOTE_ARRIVALS: before a slider is read, the
    kernel's answer to the last move is awaited (a picture drawn ahead shows first; the answer
    may still move the slider's end)."""
    shown = picture(lab)
    key_seconds = []
    buttons = lab.locator(".widget-toggle-buttons button")

    def click(button, what: str) -> str:
        button.click()
        return new_picture(lab, shown, what)

    for i in range(buttons.count()):  # every choice of every toggle-button row
        if not is_active(buttons.nth(i)):
            shown = click(buttons.nth(i), f"clicking button {i}")
    sliders = lab.locator(".widget-slider .noUi-handle")
    assert sliders.count() >= 1, "the lab shows no slider"
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        disabled = "h => !!h.closest('[disabled]')"
        for j in range(buttons.count()):  # a slider may only apply to some choices
            kernel_answered(page)  # a picture drawn ahead shows before the kernel enables it
            if not slider.evaluate(disabled):
                break
            if not is_active(buttons.nth(j)):
                shown = click(buttons.nth(j), f"clicking button {j}")
        kernel_answered(page)  # the slider's end may follow the last move too
        assert not slider.evaluate(disabled), f"slider {i} is never enabled"
        at_max = slider.get_attribute("aria-valuenow") == slider.get_attribute("aria-valuemax")
        slider.focus()
        for key in ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft"):
            start = time.perf_counter()
            page.keyboard.press(key)
            shown = new_picture(lab, shown, f"{key} on slider {i}")
            key_seconds.append(time.perf_counter() - start)
    for i in range(lab.locator("input[type='checkbox']").count()):
        shown = click(lab.locator("input[type='checkbox']").nth(i), f"clicking checkbox {i}")
    for i in range(lab.locator("select").count()):
        select = lab.locator("select").nth(i)
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        select.select_option(label=next(o for o in options if o != current))
        shown = new_picture(lab, shown, f"choosing in dropdown {i}")
    return key_seconds


def shows_no_error(lab) -> bool:
    stderr = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    return lab.locator(stderr).count() == 0
