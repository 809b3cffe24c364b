"""The live-view engine: labelled controls above a matplotlib figure that follows them at once.

It knows nothing about attention and imports nothing from the rest of attnlib
(``tests/project/test_layers.py`` checks it); the labs in :mod:`attnlib.labs` are built on the
three names below. One job per module:

=====================  ===========================================================================
:mod:`.lab`            the Lab: controls, figure, caption and errors; a move draws one frame
:mod:`.showing`        where a frame goes: straight into the widgets, or into the browser's store
:mod:`.ahead`          drawing ahead: the frames one move away, sent before they are asked for
:mod:`.frames`         the browser's frame store (an anywidget; its script is ``frames.js``)
:mod:`.static`         a lab's static form: every state's frame, for a page without a kernel
:mod:`.keys`           control positions and state keys; every private ipywidgets access
:mod:`.figure`         the figure redrawn in place over a cached background
:mod:`.encoders`       PNG and JPEG encoders of a frame
:mod:`.controls`       the controls' layout and readouts
:mod:`.present`        projector size
:mod:`.text_labels`    many text labels drawn as one artist
=====================  ===========================================================================
"""

from .lab import Lab, heading_and_detail
from .text_labels import TextLabels

__all__ = ["Lab", "TextLabels", "heading_and_detail"]
