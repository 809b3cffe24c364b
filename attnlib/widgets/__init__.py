"""Live slider labs: each ``*_lab(...)`` returns an ipywidgets container to display in a cell.

The shared machinery (a figure drawn once and updated in place, errors shown in the lab) is in
:mod:`attnlib.widgets.live`; its docstring says how to write a new lab. The frames a lab draws
ahead for the browser, so that a move shows its picture at once, are in
:mod:`attnlib.widgets.predrawn`.
"""

from .gradients import gradient_lab
from .heads import gqa_lab
from .masking import masking_lab
from .saturation import saturation_lab
from .tiles import tiling_lab
from .trained_model import trained_attention_lab

__all__ = [
    "gradient_lab",
    "gqa_lab",
    "masking_lab",
    "saturation_lab",
    "tiling_lab",
    "trained_attention_lab",
]
