"""A pytest plugin loaded before all others (``-p tools.pytest_startup`` in pyproject's addopts).

It keeps the suite's start-up short. nbval imports nbformat, which imports jsonschema, which
imports ``rfc3987_syntax`` if it is installed (the Jupyter stack installs it) and spends about 3 s
compiling that package's grammar, in every pytest process (the controller and each xdist worker).
jsonschema only uses it to check the "iri" string formats, which no notebook schema asks for, so
the suite marks the module as absent; jsonschema then skips those formats, as it documents.
Kernels, JupyterLab and voila are separate processes and are not affected.
"""

from __future__ import annotations

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # an entry of None makes `import` raise ImportError
