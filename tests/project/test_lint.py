"""The code is lint-clean and formatted: ruff, as configured in pyproject.toml, finds nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What ruff checks: the package, the tests, the benchmarks, the tools, the site's configuration
#: and the notebooks' scripts.
PATHS = ["attnlib", "tests", "benchmarks", "tools", "docs", "notebooks/scripts", "conftest.py"]


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_finds_nothing() -> None:
    result = ruff("check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_would_change_nothing() -> None:
    result = ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, (
        result.stdout + result.stderr + "\nrun: ruff format " + " ".join(PATHS)
    )
