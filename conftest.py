"""Root pytest configuration.

jupyter_core warns about its platformdirs migration when nbval starts a kernel; with
``filterwarnings = error`` that warning would fail the run, so opt in to the new behaviour.

The suite runs on two workers (pytest-xdist, ``--dist loadfile``: a file's tests stay together),
and xdist hands out files in collection order. Longest first keeps the two workers busy to the
end: the browser tests (about half a minute) start at once, then the lab contract (every lab
driven at two sizes: the longest unit-test file, ~15 CPU-s), then the notebooks (a few seconds
each), and the many short unit-test files fill the gaps. Only the order changes.
"""

import os

import pytest

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")


#: Test files that take longest, in the order they start (before the notebooks).
LONGEST_FILES = ("test_labs_in_browser.py", "test_lab_contract.py")


def run_order(item: pytest.Item) -> int:
    """The place of its file in LONGEST_FILES, then the notebooks, then the rest."""
    if item.path.name in LONGEST_FILES:
        return LONGEST_FILES.index(item.path.name)
    return len(LONGEST_FILES) + (0 if item.path.suffix == ".ipynb" else 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=run_order)  # stable: within a group, the collection order stays
