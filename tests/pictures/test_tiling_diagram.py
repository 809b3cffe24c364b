"""tile_order and tile_order_diagram: the picture of tiled attention's schedule."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text

from attnlib import causal_mask
from attnlib.pictures.tiling_diagram import tile_order, tile_order_diagram
from attnlib.tiling import tiled_attention_steps

rng = np.random.default_rng(0)
Q, K, V = rng.normal(size=(12, 4)), rng.normal(size=(12, 4)), rng.normal(size=(12, 2))


def steps(block_size: int = 4, causal: bool = False):
    return list(tiled_attention_steps(Q, K, V, block_size=block_size, causal=causal))


def labels(artists) -> list[str]:
    return [a.get_text() for a in artists if isinstance(a, Text)]


def test_tile_order_numbers_each_tile_in_the_order_it_is_computed() -> None:
    order = tile_order(steps(), 12, 12)
    expected = np.kron(np.arange(1, 10).reshape(3, 3), np.ones((4, 4), dtype=int))
    np.testing.assert_array_equal(order, expected)


def test_causal_tile_order_leaves_the_tiles_above_the_diagonal_at_zero() -> None:
    order = tile_order(steps(causal=True), 12, 12)
    assert sorted(np.unique(order)) == list(range(7))  # 6 tiles and the skipped zeros
    assert (order[:4, 4:] == 0).all() and (order[4:8, 8:] == 0).all()
    assert (order[causal_mask(12)] > 0).all()


def test_diagram_labels_every_tile_and_the_skipped_ones() -> None:
    drawn = tile_order_diagram(steps(), 12, 12)  # on a new figure
    plt.close(drawn[0].figure)
    assert labels(drawn) == [str(n) for n in range(1, 10)]
    drawn = tile_order_diagram(steps(causal=True), 12, 12, mask=causal_mask(12))
    plt.close(drawn[0].figure)
    assert labels(drawn) == ["1", "skipped", "skipped", "2", "3", "skipped", "4", "5", "6"]


def test_diagram_draws_on_the_given_axes_with_grid_lines_between_tiles(ax) -> None:
    artists = tile_order_diagram(steps(block_size=3), 12, 12, ax=ax, title="blocks of 3")
    assert all(a.axes is ax for a in artists)
    assert len(ax.lines) == 2 * 3  # 3 inner edges each way
    assert ax.get_title() == "blocks of 3"


def test_diagram_with_a_mask_shades_the_forbidden_pairs(ax) -> None:
    tile_order_diagram(steps(causal=True), 12, 12, mask=causal_mask(12), ax=ax)
    shade = ax.images[1].get_array()
    np.testing.assert_array_equal(np.ma.getmaskarray(shade), causal_mask(12))


def test_bad_input_raises_naming_what_was_wrong() -> None:
    with pytest.raises(TypeError, match="steps must hold TileStep records; got int"):
        tile_order([1, 2], 12, 12)
    with pytest.raises(ValueError, match="outside T_q=8, T_k=12"):
        tile_order(steps(), 8, 12)
    with pytest.raises(ValueError, match=r"mask must have shape \(T_q, T_k\) = \(12, 12\)"):
        tile_order_diagram(steps(), 12, 12, mask=np.ones((3, 3), dtype=bool))
