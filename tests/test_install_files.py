"""requirements.txt and environment.yml ask for the same packages with the same lower bounds."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def environment() -> dict[str, str]:
    text = (ROOT / "environment.yml").read_text().split("dependencies:", 1)[1]
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
