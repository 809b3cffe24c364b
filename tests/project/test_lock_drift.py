"""tools/lock_drift.py names the packages whose installed versions differ from the lock: the
candidates behind a failure of .ci/run's newest or oldest step."""

from __future__ import annotations

from pathlib import Path

from tools.lock_drift import drift, locked_versions


def test_the_lock_is_read_as_canonical_names_and_pinned_versions(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "# made by a tool\n-e .\n    # via -r requirements.txt\nJupyter_Core==5.9.1\n"
        "appnope==1.0.0 ; sys_platform == 'darwin'\n    # via ipykernel\n"
    )
    assert locked_versions(lock) == {"jupyter-core": "5.9.1", "appnope": "1.0.0"}


def test_drift_lists_changed_and_unlocked_packages_and_nothing_that_matches() -> None:
    locked = {"numpy": "2.4.6", "pytest": "9.2.0", "appnope": "1.0.0"}
    installed = {"numpy": "2.5.5", "pytest": "9.2.0", "soupsieve": "4.1.3"}
    assert drift(locked, installed) == [("numpy", "2.4.6", "2.5.5"), ("soupsieve", "-", "4.1.3")]


def test_drift_leaves_out_the_project_and_the_installers_of_a_new_environment() -> None:
    installed = {"attnlib": "0.1.0", "pip": "26.0", "setuptools": "80.0", "wheel": "0.45"}
    assert drift({}, installed) == []
