"""The browser tier's fixture: one chromium and every server its lab and slides tests use.

The session is ended as soon as the tests that use it are done (``pytest_runtest_teardown``),
not at the end of the run: while Playwright's synchronous API runs, its event loop counts as
running in this thread, and the site's tests (``test_site_in_browser.py``, run last here) start
a Playwright of their own, which refuses to start beside it ("Sync API inside the asyncio
loop": 18 errors when the session lasted the whole run).
"""

from __future__ import annotations

import contextlib
import os

import pytest

#: The browser session of the run while it lasts: its ExitStack and what it started.
BROWSER_SESSION = pytest.StashKey[tuple[contextlib.ExitStack, object]]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The site's tests last, after every test of the shared session."""
    items.sort(key=lambda item: item.path.name == "test_site_in_browser.py")


@pytest.fixture(scope="module")
def browser_session(request, tmp_path_factory):
    """One chromium and every server the collected browser tests use (``browser.session``),
    started by the first browser test that asks and shared by the next ones; ended after the
    last of them (``pytest_runtest_teardown`` below). Skipped on a machine without the browser
    tools; in CI (CI set) that is a failure instead (.ci/run installs them, so a skip there
    would hide a broken setup)."""
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
    """End the browser session once no later test uses it (see the module docstring)."""
    try:
        return (yield)
    finally:
        ends = nextitem is None or (
            nextitem.path != item.path
            and "browser_session" not in getattr(nextitem, "fixturenames", ())
        )
        if BROWSER_SESSION in item.config.stash and ends:
            stack, _ = item.config.stash[BROWSER_SESSION]
            del item.config.stash[BROWSER_SESSION]
            stack.close()
