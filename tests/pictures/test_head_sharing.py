"""Which query head reads which KV head, and the picture of that map."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.heads import attention_kind, kv_head_index
from attnlib.pictures.head_sharing import group_colors, plot_head_sharing, sharing_layout

#: Every (n_heads, n_kv_heads) with n_heads <= 12 and n_kv_heads dividing it: 35 pairs, all checked.
DIVISOR_PAIRS = [(n, d) for n in range(1, 13) for d in range(1, n + 1) if n % d == 0]


def test_grouped_query_heads_read_consecutive_groups() -> None:
    np.testing.assert_array_equal(kv_head_index(8, 2), [0, 0, 0, 0, 1, 1, 1, 1])


def test_mha_maps_each_query_head_to_its_own_kv_head_and_mqa_to_one() -> None:
    np.testing.assert_array_equal(kv_head_index(6, 6), np.arange(6))
    np.testing.assert_array_equal(kv_head_index(6, 1), np.zeros(6))


def test_every_kv_head_serves_the_same_number_of_query_heads() -> None:
    for n_heads, n_kv_heads in DIVISOR_PAIRS:
        index = kv_head_index(n_heads, n_kv_heads)
        assert (np.diff(index) >= 0).all(), (n_heads, n_kv_heads)
        np.testing.assert_array_equal(
            np.bincount(index, minlength=n_kv_heads),
            n_heads // n_kv_heads,
            err_msg=f"n_heads={n_heads}, n_kv_heads={n_kv_heads}",
        )


def test_kind_names_mha_gqa_and_mqa() -> None:
    assert [attention_kind(8, k) for k in (8, 4, 1)] == ["MHA", "GQA", "MQA"]
    assert attention_kind(1, 1) == "MHA"


@pytest.mark.parametrize("func", [kv_head_index, attention_kind, sharing_layout])
def test_a_kv_head_count_that_does_not_divide_raises(func) -> None:
    with pytest.raises(ValueError, match="n_kv_heads=3 does not divide n_heads=8"):
        func(8, 3)


def test_zero_heads_raise() -> None:
    with pytest.raises(ValueError, match="n_heads must be >= 1"):
        kv_head_index(0, 1)


def test_each_link_joins_a_query_head_to_the_kv_head_it_reads() -> None:
    for pair in DIVISOR_PAIRS:
        query_xy, kv_xy, links = sharing_layout(*pair)
        np.testing.assert_array_equal(links[:, 0], query_xy, err_msg=f"{pair}")
        np.testing.assert_array_equal(links[:, 1], kv_xy[kv_head_index(*pair)], err_msg=f"{pair}")


def test_each_kv_head_sits_under_the_middle_of_its_query_heads() -> None:
    for pair in DIVISOR_PAIRS:
        query_xy, kv_xy, _ = sharing_layout(*pair)
        index = kv_head_index(*pair)
        for j, (x, y) in enumerate(kv_xy):
            assert x == pytest.approx(query_xy[index == j, 0].mean()) and y == 0, (pair, j)


def test_neighbouring_kv_heads_get_different_colours() -> None:
    colors = group_colors(32)
    assert (np.abs(np.diff(colors, axis=0)).sum(axis=1) > 0).all()


def test_plot_draws_one_marker_per_head_and_one_link_per_query_head(ax) -> None:
    artists = plot_head_sharing(8, 2, ax=ax)
    assert artists["queries"].get_offsets().shape == (8, 2)
    assert artists["kv_heads"].get_offsets().shape == (2, 2)
    assert len(artists["links"].get_segments()) == 8
    assert ax.get_title() == "n_heads = 8, n_kv_heads = 2 (GQA)"


def test_plot_colours_each_query_head_like_its_kv_head(ax) -> None:
    artists = plot_head_sharing(6, 3, ax=ax)
    kv_colors = artists["kv_heads"].get_facecolors()
    np.testing.assert_array_equal(
        artists["queries"].get_facecolors(), kv_colors[kv_head_index(6, 3)]
    )


def test_plot_numbers_small_head_counts_only(ax) -> None:
    small = plot_head_sharing(4, 2, ax=ax)
    numbers = [t.get_text() for t in small["texts"] if t.get_text().isdigit()]
    assert numbers == ["0", "1", "2", "3", "0", "1"]
    ax.clear()
    large = plot_head_sharing(32, 8, ax=ax)
    assert not [t for t in large["texts"] if t.get_text().isdigit()]
