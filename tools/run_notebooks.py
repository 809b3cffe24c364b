"""Re-execute notebooks in place, so that their stored outputs are fresh ("Restart and run all").

    python tools/run_notebooks.py                 # every notebook under notebooks/
    python tools/run_notebooks.py notebooks/03_worked_example_it.ipynb   # just these

For each notebook: bring the .ipynb and its paired percent script (notebooks/scripts/NAME.py)
in sync (the newer file wins, as ``jupytext --sync`` does), execute it top to bottom in a fresh
python3 kernel whose working directory is notebooks/, write the outputs into the .ipynb, and
print the wall time. A cell that raises stops the run with the error shown.

The kernels that store outputs compute under a fixed **reference numeric configuration**
(:func:`reference_environment`): numpy at its baseline instruction set (every SIMD level it
dispatches to at run time turned off, ``NPY_DISABLE_CPU_FEATURES``) and OpenBLAS's generic
``Prescott`` kernels (``OPENBLAS_CORETYPE``). The test suite's nbval run computes under the
machine's own configuration (AVX2 or AVX-512, the fastest kernels). The two differ as two machines
do (tests/project/test_numeric_configurations.py checks that they give different last bits
here), so a notebook whose stored outputs pass nbval is shown to print the same under both.

Each stored kernel also runs ``tools/kernel_startup.py`` first (``PYTHONSTARTUP``): it refuses a
figure whose text is too small at a laptop's width and stores each figure's smallest text size in
the PNG's output metadata (:mod:`tools.figure_text`; tests/project/test_figure_text.py reads it).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

import nbformat
from nbclient import NotebookClient

if __package__:  # imported as tools.run_notebooks
    from .figure_text import KERNEL_STARTUP
else:  # run as a script: tools/ is on sys.path
    from figure_text import KERNEL_STARTUP

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PAIRING = "ipynb,scripts//py:percent"


def reference_environment() -> dict[str, str]:
    """The environment of a kernel that stores outputs: the reference numeric configuration.

    numpy reads ``NPY_DISABLE_CPU_FEATURES`` when it is imported, so the variables must be in the
    kernel's environment from its start. Only the SIMD levels this machine has are named (numpy
    warns about the others). ``OPENBLAS_CORETYPE`` names an x86-64 core, so it is set on x86-64
    only.
    """
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    env = dict(os.environ)
    env["PYTHONSTARTUP"] = str(KERNEL_STARTUP)
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(f for f in __cpu_dispatch__ if __cpu_features__[f])
    if platform.machine().lower() in ("x86_64", "amd64"):
        env["OPENBLAS_CORETYPE"] = "Prescott"
    return env


def paired_script(notebook: Path) -> Path:
    """The percent-format script paired with ``notebook``."""
    return notebook.parent / "scripts" / (notebook.stem + ".py")


def sync(notebook: Path) -> None:
    """Create the pairing if it is missing, then let the newer of the two files win."""
    from jupytext.cli import jupytext as jupytext_cli  # 0.3 s: only a run that syncs pays it

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
    """Run ``notebook`` in a fresh kernel under the reference numeric configuration, store its
    outputs, and return the seconds it took."""
    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    for cell in nb.cells:  # per-cell timestamps would make every re-run a diff
        cell.metadata.pop("execution", None)
    seconds = _run(nb, notebook.parent, env=reference_environment())
    nbformat.write(nb, notebook)
    return seconds


def _run(nb: nbformat.NotebookNode, folder: Path, env: dict[str, str] | None = None) -> float:
    """Execute ``nb`` in place with its working directory ``folder``; ``env``: the kernel's
    environment (default: this process's)."""
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        store_widget_state=False,
        record_timing=False,
        coalesce_streams=True,  # one stored chunk per printed stream, however busy the machine
    ).execute(env=env if env is not None else dict(os.environ))
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
