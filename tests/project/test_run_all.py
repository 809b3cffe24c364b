"""benchmarks/run_all.py prints its table, not the kernels' start-up warning; failures show all."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TCP_WARNING = (
    "[IPKernelApp] WARNING | Kernel is running over TCP without encryption. All communication"
    " (including code and outputs) is sent in plain text and is susceptible to eavesdropping."
)


@pytest.fixture(scope="module")
def run_all():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "benchmarks" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def one_notebook(run_all, tmp_path, monkeypatch):
    """run_all over a folder of one notebook, whose run starts a child (a 'kernel') that writes
    the kernels' TCP warning and ``other`` to its inherited stderr, then fails if ``fails``."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "only.ipynb").write_text("{}")
    monkeypatch.setattr(run_all, "ROOT", tmp_path)

    def configure(other: str, fails: bool = False) -> None:
        def execute_only(path: Path) -> float:
            code = f"import sys; sys.stderr.write({TCP_WARNING + chr(10) + other + chr(10)!r})"
            subprocess.run([sys.executable, "-c", code], check=True)
            if fails:
                raise RuntimeError("the notebook failed")
            return 1.5

        monkeypatch.setattr(run_all, "execute_only", execute_only)

    return configure


def test_notebook_rows_hold_back_the_kernels_tcp_warning_and_pass_other_stderr(
    run_all, one_notebook, capfd
) -> None:
    one_notebook("something unexpected")
    rows = run_all.notebook_rows()
    assert rows == [("notebook only", "1.5 s", "a few s", "yes")]
    err = capfd.readouterr().err
    assert "without encryption" not in err
    assert "something unexpected" in err


def test_a_failing_notebook_run_shows_everything_its_kernel_wrote(
    run_all, one_notebook, capfd
) -> None:
    one_notebook("the real trouble", fails=True)
    with pytest.raises(RuntimeError, match="the notebook failed"):
        run_all.notebook_rows()
    err = capfd.readouterr().err
    assert TCP_WARNING in err and "the real trouble" in err


def test_system_cpu_seconds_count_a_child_that_nobody_waits_for(run_all) -> None:
    """The suite's CPU figure includes chromium's processes, which pytest never waits for: a
    detached child busy for 0.4 s of CPU raises the system-wide count by at least that much."""
    before = run_all.system_cpu_seconds()
    busy = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    child = subprocess.Popen([sys.executable, "-c", busy], start_new_session=True)
    child.wait()
    assert run_all.system_cpu_seconds() - before >= 0.4


def test_the_tiers_timed_are_the_two_pytest_runs_of_readmes_test_command(run_all) -> None:
    readme = (ROOT / "README.md").read_text()
    (command,) = [line for line in readme.splitlines() if "requirements-test.txt &&" in line]
    runs = [part.strip() for part in command.split("&&") if "pytest" in part]
    assert runs == ["python -m pytest", " ".join(["python -m pytest", *run_all.BROWSER_TIER])]
