"""Root pytest configuration.

jupyter_core warns about its platformdirs migration when nbval starts a kernel; with
``filterwarnings = error`` that warning would fail the run, so opt in to the new behaviour.

The suite runs on two workers (pytest-xdist, ``--dist loadfile``: a file's tests stay together),
and xdist hands out files in collection order (the scheduler below keeps it to that order).
Longest first keeps the two workers busy to the end: the browser tests (about half a minute)
start at once, then the lab contract (every lab driven at two sizes: the longest unit-test file,
~15 CPU-s), then the notebooks (a few seconds each), and the many short unit-test files fill the
gaps. Only the order changes.

The two browser files share one chromium and one set of servers (``browser_session``,
``tests/conftest.py``): the scheduler below hands them to one worker as one unit, where plain
``loadfile`` could give them to two workers, each starting its own.
"""

import os

import pytest

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")


#: The test files that drive chromium (tests/browser.py's ``session`` serves them).
BROWSER_FILES = ("test_labs_in_browser.py", "test_slides_in_browser.py")
#: Test files that take longest, in the order they start (before the notebooks): the browser
#: files as one unit, then the lab contract.
LONGEST_FILES = (BROWSER_FILES, ("test_lab_contract.py",))


def run_order(item: pytest.Item) -> int:
    """The place of its file in LONGEST_FILES, then the notebooks, then the rest."""
    for place, names in enumerate(LONGEST_FILES):
        if item.path.name in names:
            return place
    return len(LONGEST_FILES) + (0 if item.path.suffix == ".ipynb" else 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=run_order)  # stable: within a group, the collection order stays


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, except that the browser files are one unit of work, and the units
    are handed out in collection order (run_order). pytest-xdist 3.7+ reorders them by their
    number of tests unless told not to, which started the browser unit (18 tests, the longest)
    after ~30 others: it began at 34 s and ended the run at 78 s, 12 s after the other worker
    had finished."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # --no-loadscope-reorder (older versions: ignored)

    class BrowserFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "browser tests" if path.rsplit("/", 1)[-1] in BROWSER_FILES else path

    return BrowserFilesTogether(config, log)
