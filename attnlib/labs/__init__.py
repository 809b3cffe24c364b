"""Live labs: each ``*_lab(...)`` returns a :class:`~attnlib.liveview.Lab` to display in a cell.

``X_lab`` lives in ``attnlib/labs/X.py``: a lab is its controls, a ``make_view`` and an
``update_view`` of its own, handed to :class:`~attnlib.liveview.Lab`; the machinery that shows it
(drawing, the browser's frame store, drawing ahead, projector size) is :mod:`attnlib.liveview`'s.
"""

from .gqa import gqa_lab
from .gradient import gradient_lab
from .induction import induction_lab
from .masking import masking_lab
from .positions import positions_lab
from .saturation import saturation_lab
from .tiling import tiling_lab
from .trained_attention import trained_attention_lab

__all__ = [
    "gqa_lab",
    "gradient_lab",
    "induction_lab",
    "masking_lab",
    "positions_lab",
    "saturation_lab",
    "tiling_lab",
    "trained_attention_lab",
]
