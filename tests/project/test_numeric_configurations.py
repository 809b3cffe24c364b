"""The stored outputs are computed under another numeric configuration than the suite's nbval run.

``tools/run_notebooks.py`` stores every notebook's outputs from a kernel that runs numpy at its
baseline instruction set and OpenBLAS's generic kernels; nbval re-runs them under this machine's
own configuration. nbval passing then shows that the outputs reproduce under both, but only if
the two really compute differently. This test checks that they do, in a kernel started the way
the tool starts it: a matrix product (OpenBLAS) and a few elementwise functions (numpy's SIMD
paths) give different last bits.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import nbformat
import pytest

from tools.run_notebooks import ROOT, _run, reference_environment

FINGERPRINT = """
import hashlib, json
import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

x = np.random.default_rng(0).standard_normal((64, 64))
digest = lambda *arrays: hashlib.sha256(b"".join(a.tobytes() for a in arrays)).hexdigest()
print(json.dumps({
    "blas": digest(x @ x.T),
    "simd": digest(np.exp(x), np.log(np.abs(x)), np.tanh(x), np.power(np.abs(x), 0.37)),
    "simd_levels": [f for f in __cpu_dispatch__ if __cpu_features__[f]],
}))
"""


@pytest.fixture(scope="module")
def fingerprints() -> dict[str, dict]:
    """The fingerprint in a kernel of the storing tool, and in this machine's own python."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FINGERPRINT)])
    _run(nb, ROOT, env=reference_environment())
    stored = json.loads(nb.cells[0].outputs[0]["text"])
    machine = subprocess.run(
        [sys.executable, "-c", FINGERPRINT], capture_output=True, text=True, check=True
    )
    return {"reference": stored, "machine": json.loads(machine.stdout)}


def test_reference_kernel_runs_numpy_without_its_simd_levels(fingerprints):
    assert fingerprints["reference"]["simd_levels"] == []


def test_reference_and_machine_blas_kernels_compute_different_bits(fingerprints):
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("OPENBLAS_CORETYPE names x86-64 cores; the reference sets it only there")
    assert fingerprints["reference"]["blas"] != fingerprints["machine"]["blas"], (
        "a matrix product is bit-identical under OpenBLAS's Prescott kernels and this machine's:"
        " nbval here would not show that the stored outputs are portable"
    )


def test_reference_and_machine_simd_paths_compute_different_bits(fingerprints):
    if not fingerprints["machine"]["simd_levels"]:
        pytest.skip("numpy runs at its baseline on this machine already: no SIMD level to drop")
    assert fingerprints["reference"]["simd"] != fingerprints["machine"]["simd"], (
        "exp, log, tanh and power are bit-identical with and without numpy's SIMD levels"
        f" {fingerprints['machine']['simd_levels']}: nbval here would not show that the stored"
        " outputs are portable"
    )
