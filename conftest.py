"""Root pytest configuration.

jupyter_core warns about its platformdirs migration when nbval starts a kernel; with
``filterwarnings = error`` that warning would fail the run, so opt in to the new behaviour.

The suite runs on two workers (pytest-xdist, ``--dist loadfile``: a file's tests stay together),
and xdist hands out files in collection order. Longest first keeps the two workers busy to the
end: the browser tests (about half a minute) start at once, then the notebooks (a few seconds
each), and the many short unit-test files fill the gaps. Only the order changes.
"""

import os

import pytest

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")


def run_order(item: pytest.Item) -> int:
    """0 for the browser tests, 1 for a notebook, 2 for the rest."""
    if item.path.name == "test_labs_in_browser.py":
        return 0
    return 1 if item.path.suffix == ".ipynb" else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=run_order)  # stable: within a group, the collection order stays
