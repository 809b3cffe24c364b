"""Shared fixtures: plotting tests draw with Agg on a fresh Axes that is closed afterwards.

matplotlib is imported only by the processes that collect tests. The pytest-xdist controller
loads this file too, but hands every test to its workers; importing pyplot there cost ~0.8 s.
"""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def browser_session(request, tmp_path_factory):
    """One chromium and every server the collected browser tests use (``browser.session``),
    started together once (the root conftest.py runs the browser files on one worker). Skipped on
    a machine without the browser tools; in CI (CI set) that is a failure instead (.ci/run
    installs them, so a skip there would hide a broken setup)."""
    import os

    import browser

    if browser.MISSING or browser.VOILA_MISSING:
        reason = "; ".join(browser.MISSING + browser.VOILA_MISSING)
        (pytest.fail if os.environ.get("CI") else pytest.skip)(reason)
    files = {item.path.name for item in request.session.items}
    with browser.session(tmp_path_factory.mktemp("browser"), files) as found:
        yield found
