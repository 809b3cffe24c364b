"""The grouped-query lab: each control changes what it should, and the drawn numbers are right."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.heads import kv_head_index
from attnlib.kv_cache import kv_cache_bytes
from attnlib.labs.gqa import (
    HEAD_COUNTS,
    TOKEN_COUNTS,
    divisors,
    format_bytes,
    gqa_lab,
    gqa_numbers,
)

DEFAULTS = {"n_heads": 32, "n_kv_heads": 8, "n_tokens": 8192}


@pytest.fixture(scope="module")
def shared_lab():
    return gqa_lab()


@pytest.fixture
def lab(shared_lab):
    """The module's lab, with its controls back at their defaults."""
    shared_lab.controls["n_heads"].value = DEFAULTS["n_heads"]
    shared_lab.controls["n_kv_heads"].value = DEFAULTS["n_kv_heads"]
    shared_lab.controls["n_tokens"].value = DEFAULTS["n_tokens"]
    assert shared_lab.values() == DEFAULTS
    return shared_lab


def bar_widths(lab) -> dict[str, float]:
    """The memory each bar reaches (bars start at the left edge of the axis)."""
    return {name: bar.get_x() + bar.get_width() for name, bar in lab.view["bars"].items()}


# --- the controls -------------------------------------------------------------------------------


def test_default_state_is_a_32_layer_gqa_model_with_a_1_gib_cache(lab) -> None:
    assert lab.last_error is None
    assert lab.state["kind"] == "GQA" and lab.state["group"] == 4
    assert lab.state["bytes_total"]["this"] == 2**30
    assert lab.caption.value.endswith("x 8,192 tokens = 1 GiB")


def test_kv_heads_slider_offers_exactly_the_divisors_of_n_heads(lab) -> None:
    for n_heads in HEAD_COUNTS:
        lab.controls["n_heads"].value = n_heads
        assert list(lab.controls["n_kv_heads"].options) == divisors(n_heads)
        assert n_heads % lab.state["n_kv_heads"] == 0


def test_kv_heads_keep_their_value_when_it_still_divides(lab) -> None:
    lab.controls["n_heads"].value = 48
    assert lab.controls["n_kv_heads"].value == 8


def test_kv_heads_fall_to_the_largest_divisor_below_when_not(lab) -> None:
    lab.controls["n_heads"].value = 12
    assert lab.controls["n_kv_heads"].value == 6
    assert lab.state["n_kv_heads"] == 6 and lab.state["kind"] == "GQA"


def test_moving_n_heads_draws_one_frame_even_when_the_kv_options_change(lab) -> None:
    frames = lab.live.frames
    lab.controls["n_heads"].value = 12  # options change and n_kv_heads falls from 8 to 6
    assert lab.live.frames == frames + 1
    lab.controls["n_kv_heads"].value = 3
    assert lab.live.frames == frames + 2


def test_n_heads_control_redraws_one_marker_and_one_link_per_query_head(lab) -> None:
    lab.controls["n_heads"].value = 16
    assert lab.view["queries"].get_offsets().shape == (16, 2)
    assert len(lab.view["links"].get_segments()) == 16


def test_n_kv_heads_control_regroups_the_links(lab) -> None:
    lab.controls["n_kv_heads"].value = 2
    assert lab.view["kv_heads"].get_offsets().shape == (2, 2)
    ends = np.array([segment[1] for segment in lab.view["links"].get_segments()])
    kv_xy = np.asarray(lab.view["kv_heads"].get_offsets())
    np.testing.assert_array_equal(ends, kv_xy[kv_head_index(32, 2)])


@pytest.mark.parametrize(("n_kv_heads", "kind"), [(32, "MHA"), (4, "GQA"), (1, "MQA")])
def test_heading_names_the_kind_of_attention(lab, n_kv_heads, kind) -> None:
    lab.controls["n_kv_heads"].value = n_kv_heads
    assert lab.state["kind"] == kind
    assert lab.caption.value.startswith(f"{kind}:")


def test_n_tokens_control_scales_every_bar(lab) -> None:
    before = bar_widths(lab)
    lab.controls["n_tokens"].value = 4 * DEFAULTS["n_tokens"]
    after = bar_widths(lab)
    for name in before:
        assert after[name] == pytest.approx(4 * before[name])


def test_caption_spells_out_the_cache_arithmetic(lab) -> None:
    lab.controls["n_kv_heads"].value = 2
    assert lab.caption.value == (
        "GQA: 32 query heads share 2 K/V heads, 16 query heads per K/V head<br>"
        "KV cache = 2 (K and V) x 32 layers x 2 K/V heads x d_head 128 x 2 bytes"
        " = 32 KiB per token; x 8,192 tokens = 256 MiB"
    )


def test_bars_show_mha_this_model_and_mqa_caches(lab) -> None:
    lab.controls["n_kv_heads"].value = 4
    widths = bar_widths(lab)
    expected = {
        name: kv_cache_bytes(8192, 32, n_kv, 128, np.float16)
        for name, n_kv in (("MHA", 32), ("this", 4), ("MQA", 1))
    }
    assert widths == pytest.approx(expected)
    assert lab.view["sizes"].texts == [format_bytes(expected[name]) for name in expected]
    assert lab.view["sizes"].texts[1] == "512 MiB"


# --- the pure functions -------------------------------------------------------------------------


def test_numbers_of_a_llama_like_model_at_8192_tokens() -> None:
    numbers = gqa_numbers(32, 8, 8192)
    assert numbers["bytes_per_token"] == {"MHA": 512 * 1024, "this": 128 * 1024, "MQA": 16 * 1024}
    assert numbers["bytes_total"]["MHA"] == 4 * 2**30
    np.testing.assert_array_equal(numbers["kv_index"], np.arange(32) // 4)


def test_the_query_head_count_changes_only_the_mha_bar() -> None:
    a, b = gqa_numbers(16, 4, 1024), gqa_numbers(64, 4, 1024)
    assert a["bytes_total"]["this"] == b["bytes_total"]["this"]
    assert a["bytes_total"]["MQA"] == b["bytes_total"]["MQA"]
    assert b["bytes_total"]["MHA"] == 4 * a["bytes_total"]["MHA"]


def test_divisors_are_sorted_and_complete() -> None:
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(1) == [1]


@pytest.mark.parametrize(
    ("n", "text"),
    [(512, "512 B"), (2048, "2 KiB"), (3 * 2**19, "1.5 MiB"), (2**30, "1 GiB"), (2**41, "2 TiB")],
)
def test_format_bytes_uses_binary_units(n, text) -> None:
    assert format_bytes(n) == text


# --- bad input ----------------------------------------------------------------------------------


def test_kv_heads_that_do_not_divide_raise() -> None:
    with pytest.raises(ValueError, match="n_kv_heads=3 does not divide n_heads=32"):
        gqa_lab(n_kv_heads=3)
    with pytest.raises(ValueError, match="n_kv_heads=5 does not divide n_heads=8"):
        gqa_numbers(8, 5, 100)


def test_an_unoffered_head_count_or_context_raises_listing_the_choices() -> None:
    with pytest.raises(ValueError, match=r"n_heads must be one of \(1, 2, 4"):
        gqa_lab(n_heads=10, n_kv_heads=2)
    with pytest.raises(ValueError, match=r"n_tokens must be one of \(512, 1024"):
        gqa_lab(n_tokens=1000)
    assert TOKEN_COUNTS[0] == 512 and TOKEN_COUNTS[-1] == 131072


@pytest.mark.parametrize("present", [False, True], ids=["notebook", "present"])
def test_the_80_gb_line_cuts_no_size_label(present: bool) -> None:
    # MHA caches of 16 to 96 GiB: bars that end just left (or right) of the line.
    from attnlib.labs.gqa import _ACCELERATOR

    lab = gqa_lab(present=present)
    sizes = lab.view["sizes"]
    ax = sizes.collection.axes
    points_to_pixels = lab.live.figure.dpi / 72
    lab.controls["n_tokens"].value = TOKEN_COUNTS[-1]
    for n_heads in (8, 12, 16, 24, 32, 48):
        lab.controls["n_heads"].value = n_heads
        lab.controls["n_kv_heads"].value = n_heads
        line_x = ax.transData.transform((_ACCELERATOR, 0))[0]
        offsets = ax.transData.transform(sizes.collection.get_offsets())
        for text, path, (x, _) in zip(sizes.texts, sizes.collection.get_paths(), offsets):
            extents = path.get_extents()
            left, right = x + extents.x0 * points_to_pixels, x + extents.x1 * points_to_pixels
            assert not left - 2 < line_x < right + 2, (n_heads, text)
