"""Live labs: each ``*_lab(...)`` returns a :class:`~attnlib.labs.lab.Lab` to display in a cell.

``X_lab`` lives in ``attnlib/labs/X.py``, beside the machinery every lab shares, one job per
module: :mod:`~attnlib.labs.lab` (the Lab), :mod:`~attnlib.labs.figure` (the figure redrawn in
place) and :mod:`~attnlib.labs.encoders`, :mod:`~attnlib.labs.controls` (their layout),
:mod:`~attnlib.labs.present` (projector size), :mod:`~attnlib.labs.states` (state keys),
:mod:`~attnlib.labs.frames` (the browser's store, the one writer of what a lab shows),
:mod:`~attnlib.labs.ahead` (frames drawn ahead) and :mod:`~attnlib.labs.text_labels`.
"""

from .gqa import gqa_lab
from .gradient import gradient_lab
from .masking import masking_lab
from .positions import positions_lab
from .saturation import saturation_lab
from .tiling import tiling_lab
from .trained_attention import trained_attention_lab

__all__ = [
    "gqa_lab",
    "gradient_lab",
    "masking_lab",
    "positions_lab",
    "saturation_lab",
    "tiling_lab",
    "trained_attention_lab",
]
