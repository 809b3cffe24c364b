"""List the installed packages whose versions differ from the lock (requirements-test.txt).

    python tools/lock_drift.py

Run inside an environment installed without the lock (``.ci/run``'s newest and oldest steps): the
packages it lists are the candidates behind a failure there, each with the version the suite was
last green with (the lock) and the one installed. Packages the lock does not hold are listed as
well; the lock's own markers (``; sys_platform == 'win32'``) are ignored, so a package the lock
keeps for another platform shows as "not installed" only if it is installed nowhere.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

LOCK = Path(__file__).resolve().parents[1] / "requirements-test.txt"
#: Installed but never locked: the project itself, and what ``python -m venv`` puts in.
UNLOCKED = {"attnlib", "pip", "setuptools", "wheel"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    """The pins of ``lock``: canonical name -> version."""
    pins = (PIN.match(line) for line in lock.read_text().splitlines())
    return {canonical(m.group(1)): m.group(2) for m in pins if m}


def installed_versions() -> dict[str, str]:
    """The distributions of this interpreter's environment: canonical name -> version."""
    return {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}


def drift(locked: dict[str, str], installed: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(name, locked version, installed version)`` for every package whose two versions
    differ, and for the packages installed here that the lock does not hold (locked version
    "-"), sorted by name. The project itself (attnlib, installed from the checkout) and the
    installers a new virtual environment comes with are left out."""
    rows = []
    for name in sorted(installed.keys() - UNLOCKED):
        if locked.get(name) != installed[name]:
            rows.append((name, locked.get(name, "-"), installed[name]))
    return rows


def main() -> int:
    rows = drift(locked_versions(), installed_versions())
    print(f"Python {sys.version.split()[0]}: {len(rows)} packages differ from {LOCK.name}")
    if rows:
        width = max(len(name) for name, _, _ in rows)
        print(f"  {'package':<{width}}  {'locked':<12} installed")
        for name, locked, here in rows:
            print(f"  {name:<{width}}  {locked:<12} {here}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
