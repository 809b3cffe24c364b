"""Root pytest configuration: the suite's two tiers.

* The fast tier, plain ``python -m pytest``: lint, the unit tests under ``tests/`` (one folder per
  part of the package) and every notebook under nbval, on two workers (pyproject's addopts).
* The browser tier, ``python -m pytest -n 0 tests/browser``: JupyterLab, voila, the slides and the
  site driven in chromium, on one worker (its files share one chromium and one set of servers,
  ``tests/browser/conftest.py``). It is collected only when named on the command line.

README's test command runs both. jupyter_core warns about its platformdirs migration when nbval
starts a kernel; with ``filterwarnings = error`` that warning would fail the run, so the suite
opts in to the new behaviour.
"""

import os
from pathlib import Path

import pytest

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

#: The browser tier's folder.
BROWSER_TIER = Path(__file__).resolve().parent / "tests" / "browser"


def names_browser_tier(config: pytest.Config) -> bool:
    """Whether a path given on the command line lies in (or is) the browser tier's folder."""
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path == BROWSER_TIER or BROWSER_TIER in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the browser tier out unless it is named (``python -m pytest tests/browser``)."""
    if collection_path == BROWSER_TIER and not names_browser_tier(config):
        return True
    return None
