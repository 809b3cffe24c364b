"""Every committed notebook is executed, clean, paired with its script, and on the README map."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
README = (ROOT / "README.md").read_text(encoding="utf-8")

pytestmark = pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])


@functools.cache
def notebook(path: Path) -> nbformat.NotebookNode:
    """The stored notebook, read once for all the tests here (none of them changes it)."""
    return nbformat.read(path, as_version=4)


def code_cells(path: Path) -> list:
    return [c for c in notebook(path).cells if c.cell_type == "code"]


def test_every_code_cell_was_executed_in_order(path: Path) -> None:
    counts = [c.execution_count for c in code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts {counts}; run tools/run_notebooks.py {path.name}"
    )


def test_has_stored_outputs(path: Path) -> None:
    assert any(c.outputs for c in code_cells(path)), f"{path.name} has no stored outputs"


def test_has_no_error_or_stderr_output(path: Path) -> None:
    for i, cell in enumerate(code_cells(path)):
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name} code cell {i}: {out.get('ename')}"
            assert out.get("name") != "stderr", f"{path.name} code cell {i}: {out.get('text')}"


def test_kernelspec_is_python3(path: Path) -> None:
    assert notebook(path).metadata.kernelspec.name == "python3"


def test_is_listed_in_readme_map(path: Path) -> None:
    assert re.search(rf"\b{re.escape(path.stem)}\b", README), f"{path.stem} missing from README"


def test_paired_script_has_the_same_cells(path: Path) -> None:
    import jupytext  # 0.6 s to import: only the process that runs this test pays it

    script = path.parent / "scripts" / f"{path.stem}.py"
    assert script.exists(), f"{script.relative_to(ROOT)} is missing; run tools/run_notebooks.py"
    nb = notebook(path)
    py = jupytext.read(script)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        (c.cell_type, c.source) for c in py.cells
    ], f"{path.name} and {script.name} differ; run: jupytext --sync {path.relative_to(ROOT)}"


def test_nbval_instructions_are_cell_tags_not_comments(path: Path) -> None:
    """A student reads the cell's source: nbval's instructions live in its tags
    (``nbval-ignore-output``, ``nbval-skip``), never in a ``# NBVAL_...`` comment line."""
    from nbval.plugin import comment_markers  # the comments nbval would obey, wherever they stand

    stray = [
        (i, line.strip())
        for i, cell in enumerate(code_cells(path))
        for line in cell.source.splitlines()
        if line.strip().startswith("#") and line.strip().lstrip("#").strip() in comment_markers
    ]
    assert not stray, (
        f"{path.name}: code cells (index, line) {stray} carry an nbval comment; tag the cell"
        ' instead (script header: # %% tags=["nbval-ignore-output"])'
    )


def test_every_nbval_tag_is_one_nbval_obeys(path: Path) -> None:
    """A misspelt tag (``nbval-ignore-outputs``) would leave the cell compared, or run, silently."""
    from nbval.plugin import metadata_tags

    unknown = [
        (i, tag)
        for i, cell in enumerate(code_cells(path))
        for tag in cell.metadata.get("tags", [])
        if tag.startswith("nbval") and tag not in metadata_tags
    ]
    assert not unknown, (
        f"{path.name}: code cells (index, tag) {unknown}; nbval knows {sorted(metadata_tags)}"
    )
