"""Deprecated: the labs are :mod:`attnlib.labs` now; this alias goes in the next release.

``attnlib.widgets.X_lab`` and the old module names (``attnlib.widgets.heads``, ``.tiles``,
``.gradients``, ``.trained_model``, ``.masking``, ``.saturation``) still import, with a
DeprecationWarning.
"""

import sys
import warnings

from ..labs import (
    __all__,  # noqa: F401
    gqa,
    gqa_lab,  # noqa: F401
    gradient,
    gradient_lab,  # noqa: F401
    masking,
    masking_lab,  # noqa: F401
    saturation,
    saturation_lab,  # noqa: F401
    tiling,
    tiling_lab,  # noqa: F401
    trained_attention,
    trained_attention_lab,  # noqa: F401
)

warnings.warn(
    "attnlib.widgets is renamed attnlib.labs; import the labs from there",
    DeprecationWarning,
    stacklevel=2,
)

for _old, _new in {
    "gradients": gradient,
    "heads": gqa,
    "masking": masking,
    "saturation": saturation,
    "tiles": tiling,
    "trained_model": trained_attention,
}.items():
    sys.modules[f"{__name__}.{_old}"] = _new
