"""Where a lab's picture draws its texts: for tests that no text covers another or leaves.

A text is the rectangle its layout takes (rotated with it), in pixels of the rendered picture:
every ``Text`` a full draw of the figure draws (tick labels, titles, legends, annotations) and
every label of a :class:`attnlib.liveview.text_labels.TextLabels`.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import numpy as np
from matplotlib.text import Text

#: The smallest text a lab picture may have at notebook size, in pixels (present mode's floor is
#: ``attnlib.liveview.present.PRESENT_MIN_TEXT_PX``, which ``Lab`` itself enforces).
NOTEBOOK_MIN_TEXT_PX = 9.5

#: How far two texts may overlap (antialiased edges), in pixels.
SLACK_PX = 0.5

_CORNERS = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) / 2


def drawn_texts(
    lab, draw: Callable[[], object] | None = None
) -> list[tuple[str, np.ndarray, object]]:
    """(text, its four corners in pixels (4, 2), the axes it must stay in or None) of each text.

    The labels of a ``TextLabels`` must stay inside their axes; other texts (tick labels, axis
    labels, titles) sit outside the axes by design and only have to stay in the picture.
    ``draw`` draws the whole figure (default: its canvas's ``draw``); a full redraw of the lab,
    ``lambda: lab.live.render(full=True)``, serves too (it also draws the animated texts).
    """
    figure = lab.live.figure
    renderer = lab.live.canvas.get_renderer()
    drawn: list[Text] = []
    draw_text = Text.draw

    def recording_draw(text: Text, renderer) -> None:
        if text.get_visible() and text.get_text().strip():
            drawn.append(text)
        draw_text(text, renderer)

    with mock.patch.object(Text, "draw", recording_draw):
        (draw or figure.canvas.draw)()
    found = []
    for text in drawn:
        box = text.get_window_extent(renderer)  # the upright box around the rotated text
        angle = text.get_rotation()
        upright = box
        if angle % 360:
            text.set_rotation(0)
            upright = text.get_window_extent(renderer)
            text.set_rotation(angle)
        cos, sin = np.cos(np.radians(angle)), np.sin(np.radians(angle))
        corners = _CORNERS * [upright.width, upright.height] @ [[cos, sin], [-sin, cos]]
        centre = [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]
        found.append((text.get_text(), corners + centre, None))
    points_to_pixels = figure.dpi / 72
    for collection in figure.findobj(lambda artist: hasattr(artist, "attnlib_text_labels")):
        if not collection.get_visible():
            continue
        labels = collection.attnlib_text_labels
        offsets = collection.get_offset_transform().transform(collection.get_offsets())
        for text, path, offset in zip(labels.texts, collection.get_paths(), offsets):
            if text.strip():
                extents = path.get_extents()
                corners = (_CORNERS + 0.5) * [extents.width, extents.height] + extents.p0
                found.append((text, corners * points_to_pixels + offset, collection.axes))
    return found


def overlap(a: np.ndarray, b: np.ndarray, slack: float = SLACK_PX) -> bool:
    """Whether two convex quadrilaterals (4, 2) overlap by more than ``slack`` pixels."""
    for quad in (a, b):
        for edge in np.roll(quad, -1, axis=0) - quad:
            normal = np.array([-edge[1], edge[0]]) / np.hypot(*edge)
            along_a, along_b = a @ normal, b @ normal
            if min(along_a.max(), along_b.max()) - max(along_a.min(), along_b.min()) <= slack:
                return False  # a separating direction
    return True


def text_faults(lab, draw: Callable[[], object] | None = None) -> list[str]:
    """Each text that covers another text or leaves the picture (or its axes), in words;
    ``draw`` as for :func:`drawn_texts`."""
    renderer = lab.live.canvas.get_renderer()
    picture = lab.live.figure.bbox
    texts = drawn_texts(lab, draw)
    # Two quadrilaterals whose upright boxes overlap by at most the slack along x or along y
    # overlap by at most the slack along one of their edges' normals too (the least overlap
    # over all directions is met at an edge's normal), so only pairs of overlapping boxes are
    # tested in full.
    lows = np.array([corners.min(axis=0) for _, corners, _ in texts]).reshape(-1, 2)
    highs = np.array([corners.max(axis=0) for _, corners, _ in texts]).reshape(-1, 2)
    along = np.minimum(highs[:, None], highs[None]) - np.maximum(lows[:, None], lows[None])
    boxes_overlap = (along > SLACK_PX).all(axis=-1)
    faults = []
    for i, (text, corners, ax) in enumerate(texts):
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        frame = picture if ax is None else ax.get_window_extent(renderer)
        if x0 < frame.x0 - 0.5 or x1 > frame.x1 + 0.5 or y0 < frame.y0 - 0.5 or y1 > frame.y1 + 0.5:
            where = "the picture" if ax is None else "its axes"
            faults.append(f"{text!r} at {np.round(corners).tolist()} leaves {where}")
        for j in np.flatnonzero(boxes_overlap[i, i + 1 :]) + i + 1:
            other, other_corners, _ = texts[j]
            if overlap(corners, other_corners):
                faults.append(f"{text!r} covers {other!r}")
    return faults
