"""The package's layers, read from every import statement in attnlib (inside functions too):

* the engine (``attnlib.liveview``) imports nothing from the rest of attnlib;
* the labs import only the engine, the maths, ``pictures`` and ``examples`` (a top-level data
  module), and the trained model the trained-model lab shows (``pretrained``);
* the maths (attnlib's top-level modules) imports none of the labs, the engine, the exercises,
  the pictures or the pretrained model.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "attnlib"
SUBPACKAGES = {"labs", "liveview", "exercises", "pictures", "pretrained", "widgets"}


def part_of(module: str) -> str:
    """The layer an ``attnlib...`` module belongs to: a subpackage's name, else "maths"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "maths"


def attnlib_imports(path: Path) -> set[str]:
    """The attnlib modules ``path`` imports, relative imports resolved."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = (
                ".".join(base + [node.module] if node.module else base)
                if node.level
                else node.module
            )
            found.add(module)
    return {module for module in found if module == "attnlib" or module.startswith("attnlib.")}


def layer_imports(layer: str) -> dict[str, set[str]]:
    """For each module of ``layer``, the layers it imports (its own left out)."""
    files = sorted(PACKAGE.rglob("*.py"))
    mine = [f for f in files if part_of(".".join(f.relative_to(PACKAGE.parent).parts)) == layer]
    if layer == "maths":
        mine = [f for f in mine if f.name != "__init__.py"]  # the package's front door
    return {
        str(f.relative_to(PACKAGE.parent)): {part_of(m) for m in attnlib_imports(f)} - {layer}
        for f in mine
    }


ALLOWED = {
    "liveview": set(),
    "labs": {"liveview", "maths", "pictures", "pretrained"},
    "maths": set(),
}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_what_it_may(layer: str) -> None:
    imports = layer_imports(layer)
    assert imports, f"no module found in {layer}"
    wrong = {path: sorted(parts - ALLOWED[layer]) for path, parts in imports.items()}
    assert {path: parts for path, parts in wrong.items() if parts} == {}


def test_the_layer_reader_sees_a_relative_import_of_another_layer() -> None:
    lab = PACKAGE / "labs" / "gqa.py"  # imports ..liveview and ..heads
    assert {"liveview", "maths", "pictures"} <= {part_of(m) for m in attnlib_imports(lab)}
