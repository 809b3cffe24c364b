"""The browser tier's fixture: one chromium and every server its tests use, for the whole run."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def browser_session(request, tmp_path_factory):
    """One chromium and every server the collected browser tests use (``browser.session``),
    started by the first browser test that asks and shared by the next ones, ended with the run
    (the tier runs on one worker: ``-n 0``). Skipped on a machine without the browser tools; in
    CI (CI set) that is a failure instead (.ci/run installs them, so a skip there would hide a
    broken setup)."""
    import browser

    if browser.MISSING or browser.VOILA_MISSING:
        reason = "; ".join(browser.MISSING + browser.VOILA_MISSING)
        (pytest.fail if os.environ.get("CI") else pytest.skip)(reason)
    files = {item.path.name for item in request.session.items}
    with browser.session(tmp_path_factory.mktemp("browser"), files) as found:
        yield found
