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
