"""Group colours stay apart for readers with a colour-vision deficiency.

Each colour is seen as by a dichromat (Machado, Oliveira & Fernandes 2009, severity 1: a 3x3
matrix on linear RGB), then compared in CIELAB (CIE76 distance; ~2 is just noticeable, and
colours that must name groups at a glance need well over 10). Checked: the palette labs are to
use (``attnlib.pictures.colours``) and the colours each lab draws its groups in now.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from attnlib.labs import saturation
from attnlib.labs import tiling as tiles
from attnlib.pictures import colours, head_sharing

#: Machado et al. (2009), Table 1 at severity 1.0, applied to linear RGB.
DEFICIENCIES = {
    "normal vision": np.eye(3),
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}
#: The smallest CIE76 distance allowed between two group colours, as any reader sees them.
MIN_DISTANCE = 15.0
#: sRGB (D65) to CIE XYZ, and the D65 white point.
SRGB_TO_XYZ = np.array(
    [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
)
WHITE = np.array([0.95047, 1.0, 1.08883])


def to_linear(rgb: np.ndarray) -> np.ndarray:
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def to_lab(linear: np.ndarray) -> np.ndarray:
    xyz = linear @ SRGB_TO_XYZ.T / WHITE
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], 1)


def smallest_distance(colour_list, deficiency: np.ndarray) -> float:
    """The smallest CIELAB distance between two of the colours, as seen with ``deficiency``."""
    linear = to_linear(np.array([to_rgb(c) for c in colour_list]))
    lab = to_lab(np.clip(linear @ deficiency.T, 0, 1))
    distance = np.linalg.norm(lab[:, None] - lab[None], axis=-1)
    return distance[~np.eye(len(lab), dtype=bool)].min()


#: The colours each picture tells its groups apart by, at their most groups (distinct colours).
GROUPS = {
    "the palette for labs (attnlib.pictures.colours)": colours.GROUP_COLOURS,
    "GQA lab: K/V head groups (head_sharing.group_colors)": head_sharing.group_colors(10),
    "tiling lab: query rows of a tile": tiles._ROW_COLOURS[: max(tiles.BLOCK_SIZES)],
    "saturation lab: scaled, unscaled and largest bars": list(saturation.BAR_COLOURS.values()),
}


@pytest.mark.parametrize("deficiency", DEFICIENCIES)
@pytest.mark.parametrize("picture", GROUPS)
def test_group_colours_stay_apart_under_colour_vision_deficiency(
    picture: str, deficiency: str
) -> None:
    distance = smallest_distance(GROUPS[picture], DEFICIENCIES[deficiency])
    assert distance >= MIN_DISTANCE, (
        f"{picture}: two groups are {distance:.1f} apart with {deficiency} (need {MIN_DISTANCE})"
    )


def test_the_simulation_tells_a_palette_that_fails_from_one_that_passes() -> None:
    """tab10's first four colours (blue, orange, green, red) merge green and red/orange for a
    deuteranope, as is well known; under normal vision they are far apart."""
    tab = matplotlib.color_sequences["tab10"][:4]
    assert smallest_distance(tab, DEFICIENCIES["normal vision"]) > 30
    assert smallest_distance(tab, DEFICIENCIES["deuteranopia"]) < 10


@pytest.mark.skipif("petroff10" not in matplotlib.color_sequences, reason="matplotlib < 3.10")
def test_group_colours_are_matplotlibs_petroff10() -> None:
    """Colour by colour, channel by channel, within one step of 8-bit colour."""
    np.testing.assert_allclose(
        np.array([to_rgb(c) for c in colours.GROUP_COLOURS]),
        np.array([to_rgb(c) for c in matplotlib.color_sequences["petroff10"]]),
        rtol=0,
        atol=1 / 255,
    )
