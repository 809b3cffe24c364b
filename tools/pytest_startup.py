"""A pytest plugin loaded before all others (``-p tools.pytest_startup`` in pyproject's addopts).

It keeps the suite fast on a small machine, and changes nothing that a test checks:

* nbval imports nbformat, which imports jsonschema, which imports ``rfc3987_syntax`` if it is
  installed (the Jupyter stack installs it) and spends about 3 s compiling that package's grammar,
  in every pytest process (the controller and each xdist worker). jsonschema only uses it to check
  the "iri" string formats, which no notebook schema asks for, so the suite marks the module as
  absent; jsonschema then skips those formats, as it documents. The same holds for the checkers
  of the "duration" format (``isoduration``, which imports ``arrow``: ~0.05-0.1 s) and of "uri"
  (``rfc3986_validator``: ~0.02 s): nbformat's schemas use no "format" at all. Kernels, JupyterLab
  and voila are separate processes and are not affected.
* OpenBLAS starts one thread per core for every matrix product. The suite already runs one
  process per core (pytest-xdist) and each of them starts notebook kernels, so those threads only
  fight: a small product took 67 ms instead of 13 ms on a loaded 2-core machine. One BLAS thread
  per process is set here, before anything imports numpy; the kernels inherit it. A value
  already set in the environment wins.

* Some machines set ``PYTHONDONTWRITEBYTECODE`` (this project's development machines do). The suite
  starts about thirty Python processes (workers, a kernel per notebook, the browser tests'
  servers and kernels), and each would compile attnlib's and the tests' sources again (~0.25 s
  of CPU each); here they write and reuse the usual git-ignored ``__pycache__`` files instead.

It also makes every kernel the suite starts (nbval's, and the browser tests' servers') run
``tools/kernel_startup.py`` first, which checks each figure's text size as the figure is drawn
(:mod:`tools.figure_text`): nbval's run of a notebook fails on a figure whose text is too small.
This one replaces a ``PYTHONSTARTUP`` already set, which could change what a notebook prints.
"""

from __future__ import annotations

import os
import sys

from tools.figure_text import KERNEL_STARTUP

# An entry of None makes `import` raise ImportError; jsonschema then leaves out those formats.
for _format_checker in ("rfc3987_syntax", "isoduration", "rfc3986_validator"):
    sys.modules.setdefault(_format_checker, None)
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
os.environ["PYTHONSTARTUP"] = str(KERNEL_STARTUP)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
