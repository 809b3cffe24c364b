"""Shared fixtures: plotting tests draw with Agg on a fresh Axes that is closed afterwards.

matplotlib is imported only by the processes that collect tests. The pytest-xdist controller
loads this file too, but hands every test to its workers; importing pyplot there cost ~0.8 s.
"""

from __future__ import annotations

import contextlib

import pytest


def collects_tests(config: pytest.Config) -> bool:
    """False in a pytest-xdist controller (the same test pytest-xdist uses to become one)."""
    distributing = config.getoption("dist", "no") != "no" and config.getoption("tx", None)
    return bool(config.getoption("collectonly") or not distributing)


def pytest_configure(config: pytest.Config) -> None:
    if collects_tests(config):
        import matplotlib

        matplotlib.use("Agg")  # before any test module imports pyplot


@pytest.fixture
def ax():
    """A new Axes on a new figure, closed when the test ends."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


#: The browser session of the run while it lasts: its ExitStack and what it started.
BROWSER_SESSION = pytest.StashKey[tuple[contextlib.ExitStack, object]]()


@pytest.fixture(scope="module")
def browser_session(request, tmp_path_factory):
    """One chromium and every server the collected browser tests use (``browser.session``),
    started together by the first browser test (the root conftest.py runs the browser files on
    one worker, one after the other) and shared by the next ones; ended after the last of them
    (``pytest_runtest_teardown`` below), not at the end of the run. Skipped on a machine without
    the browser tools; in CI (CI set) that is a failure instead (.ci/run installs them, so a
    skip there would hide a broken setup)."""
    import os

    import browser

    if browser.MISSING or browser.VOILA_MISSING:
        reason = "; ".join(browser.MISSING + browser.VOILA_MISSING)
        (pytest.fail if os.environ.get("CI") else pytest.skip)(reason)
    stash = request.config.stash
    if BROWSER_SESSION not in stash:
        files = {item.path.name for item in request.session.items}
        stack = contextlib.ExitStack()
        found = stack.enter_context(browser.session(tmp_path_factory.mktemp("browser"), files))
        stash[BROWSER_SESSION] = (stack, found)
    return stash[BROWSER_SESSION][1]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """End the browser session once the browser tests are done (after their pages, which the
    files' own fixtures close): while Playwright runs, its event loop counts as running in this
    thread, so that a later test on this worker would find it (``asyncio.get_running_loop()``)
    and a lab would wait for that loop to draw ahead (attnlib.liveview.ahead): 7 tests of
    test_drawing_ahead.py failed after the browser files."""
    try:
        return (yield)
    finally:
        ends = nextitem is None or (  # a notebook's cell (nbval) has no fixtures
            nextitem.path != item.path
            and "browser_session" not in getattr(nextitem, "fixturenames", ())
        )
        if BROWSER_SESSION in item.config.stash and ends:
            stack, _ = item.config.stash[BROWSER_SESSION]
            del item.config.stash[BROWSER_SESSION]
            stack.close()
