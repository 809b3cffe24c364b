"""Colours for groups in a picture (head groups, tile rows): a colour-blind-safe sequence.

``GROUP_COLOURS`` is Matthew Petroff's ten-colour sequence (matplotlib's ``petroff10``, shipped
with matplotlib 3.10+; spelled out here so that older matplotlib draws the same). Its colours
stay apart under simulated protanopia, deuteranopia and tritanopia
(``tests/pictures/test_colours.py`` checks every lab's group colours so). Use them in order:
the first ``n`` for ``n`` groups.
Colour is never the only cue for the one element that matters: mark it by shape or text too.
"""

from __future__ import annotations

__all__ = ["GROUP_COLOURS", "group_colour"]

#: Petroff's 10-colour sequence (Petroff 2021, "Accessible color sequences for data
#: visualization"), in order.
GROUP_COLOURS: tuple[str, ...] = (
    "#3f90da",
    "#ffa90e",
    "#bd1f01",
    "#94a4a2",
    "#832db6",
    "#a96b59",
    "#e76300",
    "#b9ac70",
    "#717581",
    "#92dadd",
)


def group_colour(i: int) -> str:
    """The colour of group ``i`` (0-based; after ten groups the sequence repeats)."""
    return GROUP_COLOURS[i % len(GROUP_COLOURS)]
