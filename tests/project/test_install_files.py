"""The install files agree: requirements.txt and environment.yml ask for the same packages with
the same lower bounds; the contributors' install (requirements-test.in) is locked in
requirements-test.txt, which README's test command installs; contributor tools stay out of the
student install; Binder's folder holds the student install plus voila and warms the model cache."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENT = re.compile(r"^([A-Za-z0-9_.\-]+)\s*(>=\s*[0-9][0-9.]*)?$")


def parse(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        match = REQUIREMENT.match(line)
        if match:
            found[match.group(1).lower()] = (match.group(2) or "").replace(" ", "")
    return found


def requirements() -> dict[str, str]:
    return parse((ROOT / "requirements.txt").read_text().splitlines())


def environment(path: str = "environment.yml") -> dict[str, str]:
    text = (ROOT / path).read_text().split("dependencies:", 1)[1]
    lines = [
        line.strip()[2:]
        for line in text.splitlines()
        if line.strip().startswith("- ") and not line.strip().startswith("- pip:")
    ]
    deps = parse(lines)
    deps.pop("python", None)
    deps.pop("pip", None)
    return deps


def test_requirements_have_lower_bounds_not_pins() -> None:
    reqs = requirements()
    assert reqs, "requirements.txt lists no packages"
    assert all(bound.startswith(">=") for bound in reqs.values()), reqs
    assert "==" not in (ROOT / "requirements.txt").read_text()


def test_environment_yml_matches_requirements() -> None:
    assert environment() == requirements()


def test_both_install_attnlib_from_the_checkout() -> None:
    assert "-e ." in (ROOT / "requirements.txt").read_text().splitlines()
    assert re.search(r"^\s*-\s+-e \.\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_pyproject_runtime_dependencies_are_in_requirements() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    deps = parse([d.strip().strip('",') for d in block.splitlines()])
    reqs = requirements()
    assert deps and all(reqs.get(name) == bound for name, bound in deps.items()), (deps, reqs)


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    lines = [line for line in block.strip().splitlines() if not line.startswith("```")]
    assert len(lines) == 1, f"the README's test command should be one line; got {lines}"
    return lines[0].strip()


def test_ci_runs_the_readme_test_command() -> None:
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert readme_test_command() in ci_lines, (
        f".ci/run must run the README's test command, alone on its line: {readme_test_command()!r}"
    )


#: Tools a contributor needs (pairing notebooks with scripts) that a student's JupyterLab must not
#: run: jupytext rewrites ``scripts/*.py`` on every save, and its lab extension throws a console
#: error in every voila page.
CONTRIBUTOR_TOOLS = ("jupytext",)


@pytest.mark.parametrize("tool", CONTRIBUTOR_TOOLS)
def test_contributor_tools_are_in_the_test_install_not_the_student_install(tool: str) -> None:
    assert tool not in requirements(), f"{tool} is in requirements.txt"
    assert tool not in environment(), f"{tool} is in environment.yml"
    assert tool in parse((ROOT / "requirements-test.in").read_text().splitlines())


#: A line of the lock: ``name==version``, maybe with an environment marker after ``;``.
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s;]*)(\s*;.*)?$")


def lock_lines() -> list[str]:
    """The requirement lines of the lock (comments and blank lines left out)."""
    text = (ROOT / "requirements-test.txt").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] not in "# "]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_package_it_installs() -> None:
    lines = lock_lines()
    unpinned = [line for line in lines if line != "-e ." and not PIN.match(line)]
    assert "-e ." in lines, "the lock must install attnlib from the checkout"
    assert len(lines) > 50 and not unpinned, f"lines of the lock that pin nothing: {unpinned}"


@pytest.mark.parametrize("source", ["requirements.txt", "requirements-test.in"])
def test_the_lock_pins_every_requirement_at_a_version_its_bound_allows(source: str) -> None:
    from packaging.version import Version

    pins: dict[str, list[str]] = {}
    for match in filter(None, map(PIN.match, lock_lines())):
        pins.setdefault(canonical(match.group(1)), []).append(match.group(2))
    bounds = parse((ROOT / source).read_text().splitlines())
    assert bounds
    for name, bound in bounds.items():
        assert canonical(name) in pins, f"{name} (from {source}) is not in the lock"
        for version in pins[canonical(name)]:
            assert Version(version) >= Version(bound.removeprefix(">=")), (name, version, bound)


def test_the_lock_was_made_by_the_command_that_contributing_gives() -> None:
    header = (ROOT / "requirements-test.txt").read_text().splitlines()[:3]
    command = next(line.strip("# ") for line in header if "uv pip compile" in line)
    assert command in " ".join((ROOT / "CONTRIBUTING.md").read_text().split())
    assert command in (ROOT / "requirements-test.in").read_text()


def test_the_readme_test_command_installs_the_lock() -> None:
    assert readme_test_command().startswith("python -m pip install -r requirements-test.txt && ")


def test_binder_environment_is_the_student_install_plus_voila() -> None:
    binder = environment("binder/environment.yml")
    assert binder.pop("voila", None) is not None, "binder/environment.yml lacks voila"
    assert binder == requirements()


def run_post_build(tmp_path: Path, fail_on: str = "") -> tuple[int, list[str]]:
    """Run binder/postBuild with a stand-in ``python`` first on PATH, which notes its arguments
    and fails (exit 3) when they contain ``fail_on``: nothing is installed or downloaded.
    Returns the exit code and the stand-in's calls."""
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    fail = f'case "$*" in *"{fail_on}"*) exit 3;; esac\n' if fail_on else ""
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n{fail}')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    env["ATTNLIB_CACHE"] = str(tmp_path / "cache")
    done = subprocess.run(["bash", ROOT / "binder" / "postBuild"], cwd=ROOT, env=env)
    return done.returncode, calls.read_text().splitlines() if calls.exists() else []


def test_binder_post_build_installs_attnlib_then_warms_the_model_cache(tmp_path: Path) -> None:
    assert run_post_build(tmp_path) == (
        0,
        ["-m pip install --no-deps -e .", "-m attnlib.pretrained"],
    )


def test_binder_post_build_stops_at_the_first_failure(tmp_path: Path) -> None:
    assert run_post_build(tmp_path, fail_on="pip") == (3, ["-m pip install --no-deps -e ."])


def test_voila_settings_cull_the_kernels_of_closed_pages_as_readme_says() -> None:
    """voila.json (read by voila from this folder): pages preheated, a page's request to shut its
    kernel down accepted, and a kernel whose page went without a word shut down after the idle
    time the instructors' page states, checked as often as it states."""
    settings = json.loads((ROOT / "voila.json").read_text())
    cull = settings["MappingKernelManager"]
    assert settings["VoilaConfiguration"]["preheat_kernel"] is True
    # a page's own request to shut its kernel down is refused without this (a browser test
    # checks the kernels of reloaded pages)
    assert settings["Voila"]["tornado_settings"]["disable_check_xsrf"] is True
    assert cull.get("cull_connected", False) is False, "an open page's kernel would be culled"
    page = " ".join((ROOT / "docs" / "instructors.md").read_text().split())
    stated = f"culled after {cull['cull_idle_timeout']} s idle with no page connected, checked"
    assert f"{stated} every {cull['cull_interval']} s" in page


def test_every_data_file_of_attnlib_is_declared_as_package_data() -> None:
    """A file that is not Python (the labs' browser module, say) ships in a wheel only if
    pyproject's package-data names it; an editable install would hide the omission."""
    import fnmatch

    section = (ROOT / "pyproject.toml").read_text().split("[tool.setuptools.package-data]")[1]
    declared = {  # lines such as "attnlib.labs" = ["*.js"] (tomllib is Python 3.11+)
        package: re.findall(r'"([^"]+)"', patterns)
        for package, patterns in re.findall(r'^"([\w.]+)"\s*=\s*\[(.*)\]', section, re.M)
    }
    tracked = subprocess.run(
        ["git", "ls-files", "attnlib"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    data = [Path(name) for name in tracked if not name.endswith(".py")]
    undeclared = [
        str(path)
        for path in data
        if not any(
            fnmatch.fnmatch(path.name, pattern)
            for pattern in declared.get(".".join(path.parent.parts), [])
        )
    ]
    assert data and not undeclared, f"not in [tool.setuptools.package-data]: {undeclared}"
