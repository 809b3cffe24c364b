"""Re-execute notebooks in place, so that their stored outputs are fresh ("Restart and run all").

    python tools/run_notebooks.py                 # every notebook under notebooks/
    python tools/run_notebooks.py notebooks/03_worked_example_it.ipynb   # just these

For each notebook: bring the .ipynb and its paired percent script (notebooks/scripts/NAME.py)
in sync (the newer file wins, as ``jupytext --sync`` does), execute it top to bottom in a fresh
python3 kernel whose working directory is notebooks/, write the outputs into the .ipynb, and
print the wall time. A cell that raises stops the run with the error shown.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

import nbformat
from jupytext.cli import jupytext as jupytext_cli
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PAIRING = "ipynb,scripts//py:percent"


def paired_script(notebook: Path) -> Path:
    """The percent-format script paired with ``notebook``."""
    return notebook.parent / "scripts" / (notebook.stem + ".py")


def sync(notebook: Path) -> None:
    """Create the pairing if it is missing, then let the newer of the two files win."""
    script = paired_script(notebook)
    if not notebook.exists() and script.exists():
        jupytext_cli(["--quiet", "--to", "notebook", "--output", str(notebook), str(script)])
    nb = nbformat.read(notebook, as_version=4)
    if nb.metadata.get("jupytext", {}).get("formats") != PAIRING:
        jupytext_cli(["--quiet", "--set-formats", PAIRING, str(notebook)])
    jupytext_cli(["--quiet", "--sync", str(notebook)])


def execute_only(notebook: Path) -> float:
    """Run ``notebook`` in a fresh kernel and return the seconds it took; change no file.

    The time includes the kernel's start, as nbval pays it (``benchmarks/run_all.py`` uses this).
    """
    return _run(nbformat.read(notebook, as_version=4), notebook.parent)


def execute(notebook: Path) -> float:
    """Run ``notebook`` in a fresh kernel, store its outputs, and return the seconds it took."""
    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    for cell in nb.cells:  # per-cell timestamps would make every re-run a diff
        cell.metadata.pop("execution", None)
    seconds = _run(nb, notebook.parent)
    nbformat.write(nb, notebook)
    return seconds


def _run(nb: nbformat.NotebookNode, folder: Path) -> float:
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        store_widget_state=False,
        record_timing=False,
        coalesce_streams=True,  # one stored chunk per printed stream, however busy the machine
    ).execute()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    targets = [Path(a).resolve() for a in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    targets += [
        NOTEBOOKS / (s.stem + ".ipynb")
        for s in sorted((NOTEBOOKS / "scripts").glob("*.py"))
        if not argv and not (NOTEBOOKS / (s.stem + ".ipynb")).exists()
    ]
    for notebook in targets:
        if notebook.suffix == ".py":
            notebook = NOTEBOOKS / (notebook.stem + ".ipynb")
        sync(notebook)
        seconds = execute(notebook)
        sync(notebook)  # the script now matches the freshly written notebook
        print(f"{notebook.relative_to(ROOT)}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
