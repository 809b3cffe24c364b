"""head_split_blocks and plot_head_split: the picture of splitting a matrix into heads."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from attnlib.pictures.colours import group_colour
from attnlib.pictures.head_split import head_split_blocks, plot_head_split

T, N_HEADS, D_HEAD = 3, 4, 2  # notebook 07's sizes: every axis a different length
D_MODEL = N_HEADS * D_HEAD


def test_each_head_block_holds_its_heads_columns_token_by_token() -> None:
    blocks = head_split_blocks(T, N_HEADS, D_HEAD)
    for i in range(N_HEADS):
        np.testing.assert_array_equal(
            blocks["split"][i], blocks["matrix"][:, i * D_HEAD : (i + 1) * D_HEAD]
        )


def test_the_reshape_without_transpose_runs_on_in_reading_order() -> None:
    blocks = head_split_blocks(T, N_HEADS, D_HEAD)
    np.testing.assert_array_equal(blocks["reshape only"].ravel(), np.arange(T * D_MODEL))
    assert not np.array_equal(blocks["reshape only"], blocks["split"])


@pytest.mark.parametrize(("wrong_reshape", "panels"), [(True, 3), (False, 2)])
def test_plot_draws_one_numbered_cell_per_entry_of_each_panel(ax, wrong_reshape, panels) -> None:
    drawn = plot_head_split(T, N_HEADS, D_HEAD, ax=ax, wrong_reshape=wrong_reshape)
    assert len(drawn["cells"].get_paths()) == panels * T * D_MODEL
    numbers = sorted(int(text.get_text()) for text in drawn["numbers"])
    assert numbers == sorted(list(range(T * D_MODEL)) * panels)


def test_every_cell_takes_the_colour_of_the_head_that_owns_its_number(ax) -> None:
    drawn = plot_head_split(T, N_HEADS, D_HEAD, ax=ax)
    for text, colour in zip(drawn["numbers"], drawn["cells"].get_facecolors()):
        owner = (int(text.get_text()) % D_MODEL) // D_HEAD  # the column's head
        np.testing.assert_allclose(colour[:3], to_rgba(group_colour(owner))[:3])


def test_each_split_block_shows_its_heads_numbers_one_row_per_token(ax) -> None:
    drawn = plot_head_split(T, N_HEADS, D_HEAD, ax=ax, wrong_reshape=False)
    matrix = head_split_blocks(T, N_HEADS, D_HEAD)["matrix"]
    split = drawn["numbers"][T * D_MODEL :]  # after the matrix's own cells
    columns = sorted({round(t.get_position()[0], 6) for t in split})
    for i in range(N_HEADS):
        in_block = [
            t for t in split if t.get_position()[0] in columns[i * D_HEAD : (i + 1) * D_HEAD]
        ]
        by_place = sorted(in_block, key=lambda t: (t.get_position()[1], t.get_position()[0]))
        values = np.array([int(t.get_text()) for t in by_place]).reshape(T, D_HEAD)
        np.testing.assert_array_equal(values, matrix[:, i * D_HEAD : (i + 1) * D_HEAD])


def test_zero_heads_raise_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="n_heads must be >= 1"):
        head_split_blocks(3, 0, 2)
