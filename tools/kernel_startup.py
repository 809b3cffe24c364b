"""What every kernel the test suite and ``tools/run_notebooks.py`` start runs before a cell.

It is the kernels' ``PYTHONSTARTUP`` file (set by ``tools/pytest_startup.py`` and
``tools.run_notebooks.kernel_environment``). IPython runs it in the notebook's namespace with
this folder on ``sys.path``, so it leaves no name behind. It installs the figure-text check
(:mod:`tools.figure_text`) before any cell imports pyplot.
"""

import figure_text as _figure_text

_figure_text.install()
del _figure_text
