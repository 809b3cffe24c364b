"""attention_heatmap: draws the matrix it is given, labelled, and returns its artists."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attnlib.pictures.heatmap import attention_heatmap

W = np.array([[0.9, 0.1, 0.0], [0.2, 0.3, 0.5]])


def test_image_holds_the_matrix_with_queries_as_rows(ax) -> None:
    image, _ = attention_heatmap(W, ax=ax)
    np.testing.assert_array_equal(image.get_array(), W)
    assert image.get_clim() == (0.0, 1.0)


def test_every_cell_is_annotated_row_by_row_with_fmt(ax) -> None:
    _, texts = attention_heatmap(W, ax=ax, fmt="{:.1f}")
    assert [t.get_text() for t in texts] == ["0.9", "0.1", "0.0", "0.2", "0.3", "0.5"]
    assert [t.get_position() for t in texts[:2]] == [(0, 0), (1, 0)]


def test_dark_cells_get_white_text(ax) -> None:
    _, texts = attention_heatmap(W, ax=ax)
    assert texts[0].get_color() == "white" and texts[1].get_color() == "black"


def test_labels_name_the_rows_and_columns(ax) -> None:
    attention_heatmap(W, query_labels=["a", "b"], key_labels=["x", "y", "z"], ax=ax, title="T")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert ax.get_title() == "T"


def test_annotate_false_writes_no_text(ax) -> None:
    _, texts = attention_heatmap(W, ax=ax, annotate=False)
    assert texts == [] and len(ax.texts) == 0


def test_scores_use_their_own_colour_range(ax) -> None:
    image, _ = attention_heatmap([[5.0, -3.0], [1.0, 2.0]], ax=ax, vmin=None, vmax=None)
    assert image.get_clim() == (-3.0, 5.0)


def test_without_an_axes_it_draws_in_a_new_figure() -> None:
    image, _ = attention_heatmap(W)
    try:
        assert image.axes is not None and image.axes.figure is not None
    finally:
        plt.close(image.axes.figure)
