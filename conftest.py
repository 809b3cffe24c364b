"""Root pytest configuration.

jupyter_core warns about its platformdirs migration when nbval starts a kernel; with
``filterwarnings = error`` that warning would fail the run, so opt in to the new behaviour.
"""

import os

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
