"""The tiling lab: each control changes what it should, and the drawn state is tiled attention's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_rgba

from attnlib import causal_mask, scaled_dot_product_attention
from attnlib.labs.tiling import (
    BLOCK_SIZES,
    tiling_example,
    tiling_lab,
    tiling_schedule,
    tiling_state,
)

Q, K, V = tiling_example()
T = Q.shape[0]
DEFAULTS = {"block_size": 4, "step": 5, "causal": False}
MASKED_GREY = (0.80, 0.80, 0.80, 1.0)


@pytest.fixture(scope="module")
def shared_lab():
    return tiling_lab()


@pytest.fixture
def lab(shared_lab):
    """The module's lab, with its controls back at their defaults."""
    for name in ("causal", "block_size", "step"):  # step last: its maximum follows the others
        shared_lab.controls[name].value = DEFAULTS[name]
    assert shared_lab.values() == DEFAULTS
    return shared_lab


def cell_colours(lab) -> np.ndarray:
    return np.asarray(lab.view["image"].get_facecolor()).reshape(T, T, 4)


def tile_box(lab) -> tuple[float, float, float, float]:
    box = lab.view["box"]
    return box.get_x(), box.get_y(), box.get_width(), box.get_height()


# --- the controls -------------------------------------------------------------------------------


def test_default_state_is_the_second_key_block_of_the_second_query_block(lab) -> None:
    assert lab.last_error is None
    assert (lab.state.step, lab.state.n_steps) == (5, 9)
    current = lab.state.current
    assert (current.q_block, current.k_block) == (1, 1)
    assert tile_box(lab) == (3.5, 3.5, 4, 4)
    assert "tile 5 of 9" in lab.caption.value


def test_step_slider_moves_the_outlined_tile_and_redraws(lab) -> None:
    frames = lab.live.frames
    lab.controls["step"].value = 9
    assert lab.live.frames == frames + 1
    assert tile_box(lab) == (7.5, 7.5, 4, 4)
    assert lab.state.current.last
    assert "last key block" in lab.state.detail


def test_block_size_sets_the_number_of_tiles_and_the_grid(lab) -> None:
    for block_size in BLOCK_SIZES:
        lab.controls["block_size"].value = block_size
        per_side = T // block_size
        assert lab.controls["step"].max == per_side**2 == lab.state.n_steps
        assert len(lab.view["grid"].get_segments()) == 2 * (per_side - 1)


def test_step_is_clamped_when_a_larger_block_leaves_fewer_tiles(lab) -> None:
    lab.controls["block_size"].value = 2
    lab.controls["step"].value = 30
    lab.controls["block_size"].value = 6
    assert lab.controls["step"].value == 4 == lab.state.step
    assert lab.last_error is None


def test_causal_checkbox_skips_future_tiles_and_greys_the_masked_pairs(lab) -> None:
    lab.controls["causal"].value = True
    assert lab.controls["step"].max == 6 == lab.state.n_steps  # 3 + 2 + 1 tiles
    lab.controls["step"].value = 6
    colours = cell_colours(lab)
    np.testing.assert_array_equal(colours[~causal_mask(T)], np.broadcast_to(MASKED_GREY, (66, 4)))
    assert (colours[causal_mask(T)][:, :3] != MASKED_GREY[:3]).any(axis=-1).all()


def test_tiles_still_to_come_are_faded_and_done_ones_are_not(lab) -> None:
    lab.controls["step"].value = 1
    faded = cell_colours(lab)
    lab.controls["step"].value = 9
    full = cell_colours(lab)
    np.testing.assert_array_equal(faded[:4, :4], full[:4, :4])  # the first tile: done in both
    later = np.ones((T, T), dtype=bool)
    later[:4, :4] = False
    assert (faded[later][:, :3].min(axis=-1) >= 0.75).all()  # blended 75% towards white
    assert (full[later][:, :3].min(axis=-1) < 0.75).any()


def test_partial_output_paths_end_at_acc_over_l_and_reach_the_exact_output(lab) -> None:
    for step in range(1, 10):
        lab.controls["step"].value = step
        current = lab.state.current
        ends = np.asarray(lab.view["dots"].get_offsets())[-len(current.output) :]
        np.testing.assert_allclose(ends, current.output[:, :2])
        targets = np.asarray(lab.view["targets"].get_offsets())
        np.testing.assert_allclose(targets, lab.state.schedule.exact[current.rows, :2])
        if current.last:
            np.testing.assert_allclose(ends, targets, rtol=0, atol=1e-14)


def test_normaliser_bars_show_l_of_the_current_rows_and_final_l_of_the_rows_done(lab) -> None:
    lab.controls["step"].value = 5  # rows 0-3 done, rows 4-7 current
    widths = [path.vertices[:, 0].max() for path in lab.view["l_bars"].get_paths()]
    assert len(widths) == 8
    np.testing.assert_allclose(widths[:4], lab.state.l_rows[:4])
    np.testing.assert_allclose(widths[4:], lab.state.l)
    edges = lab.view["l_bars"].get_edgecolor()
    crimson = np.array(to_rgba("crimson"))
    np.testing.assert_array_equal((edges[4:] == crimson).all(axis=-1), lab.state.grew)


def test_running_max_marks_sit_at_m_of_the_current_rows(lab) -> None:
    lab.controls["step"].value = 4
    x, y = lab.view["m_marks"].get_data()
    np.testing.assert_array_equal(x, lab.state.m)
    np.testing.assert_array_equal(y, [4, 5, 6, 7])


# --- the plain function -------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, database=None)
@given(block_size=st.integers(1, 13), causal=st.booleans(), data=st.data())
def test_after_every_tile_each_allowed_pair_is_processed_and_outputs_are_exact(
    block_size, causal, data
) -> None:
    last = tiling_state(Q, K, V, block_size=block_size, step=10**6, causal=causal)
    allowed = causal_mask(T) if causal else np.ones((T, T), dtype=bool)
    assert last.step == last.n_steps
    assert (last.processed | ~allowed).all()
    expected, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T) if causal else None)
    np.testing.assert_allclose(last.schedule.exact, expected, rtol=0, atol=1e-15)
    step = data.draw(st.integers(1, last.n_steps))
    state = tiling_state(Q, K, V, block_size=block_size, step=step, causal=causal)
    current = state.current
    assert state.processed.sum() == sum(
        (s.rows.stop - s.rows.start) * (s.cols.stop - s.cols.start)
        for s in state.schedule.steps[:step]
    )
    assert state.paths.shape == (current.k_block + 1, current.rows.stop - current.rows.start, 2)
    np.testing.assert_array_equal(state.paths[-1], current.output)
    if current.last:
        assert state.errors.max() < 1e-14


def test_grew_marks_the_rows_whose_maximum_rose_at_this_tile() -> None:
    state = tiling_state(Q, K, V, block_size=4, step=5)
    previous = tiling_state(Q, K, V, block_size=4, step=4).current
    np.testing.assert_array_equal(state.grew, state.m > previous.m[:, 0])
    assert state.grew.any() and not state.grew.all()
    first = tiling_state(Q, K, V, block_size=4, step=4)
    assert not first.grew.any()  # a first key block rescales nothing that was there


def test_row_max_and_row_l_are_the_plain_softmax_max_and_normaliser() -> None:
    state = tiling_state(Q, K, V, block_size=3, step=1, causal=True)
    scores = np.where(causal_mask(T), Q @ K.T / 2.0, -np.inf)
    np.testing.assert_array_equal(state.schedule.row_max, scores.max(axis=-1))
    np.testing.assert_allclose(
        state.schedule.row_l, np.exp(scores - scores.max(axis=-1, keepdims=True)).sum(axis=-1)
    )


def test_example_is_seeded_and_shaped_for_the_lab() -> None:
    a, b = tiling_example(), tiling_example()
    assert [x.shape for x in a] == [(12, 4), (12, 4), (12, 2)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], tiling_example(seed=9)[0])


# --- bad input ----------------------------------------------------------------------------------


def test_block_size_outside_the_offered_choices_raises() -> None:
    with pytest.raises(ValueError, match=r"block_size must be one of \(2, 3, 4, 6\); got 5"):
        tiling_lab(block_size=5)


def test_giving_only_some_of_q_k_v_raises() -> None:
    with pytest.raises(ValueError, match="give all of Q, K and V, or none"):
        tiling_lab(Q=Q)


def test_batched_or_cross_attention_inputs_raise_naming_the_shapes() -> None:
    with pytest.raises(ValueError, match=r"without a batch.*Q shape \(2, 12, 4\)"):
        tiling_state(np.stack([Q, Q]), K, V)
    with pytest.raises(ValueError, match=r"Q shape \(3, 4\), K shape \(12, 4\)"):
        tiling_state(Q[:3], K, V)


def test_values_of_one_coordinate_cannot_be_drawn_in_the_plane() -> None:
    with pytest.raises(ValueError, match=r"V needs d_v >= 2; got \(12, 1\)"):
        tiling_lab(Q, K, V[:, :1])


def test_step_below_one_raises() -> None:
    with pytest.raises(ValueError, match="step must be >= 1; got step=0"):
        tiling_state(Q, K, V, step=0)


# --- the outputs panel reads cleanly at both sizes ----------------------------------------------


@pytest.fixture(scope="module", params=[False, True], ids=["notebook", "present"])
def sized_lab(request):
    return tiling_lab(present=request.param)


def test_outputs_panel_tick_labels_do_not_touch(sized_lab) -> None:
    ax = sized_lab.view["dots"].axes
    renderer = sized_lab.live.canvas.get_renderer()
    for ticks, labels, limits in (
        (ax.get_xticks(), ax.get_xticklabels(), ax.get_xlim()),
        (ax.get_yticks(), ax.get_yticklabels(), ax.get_ylim()),
    ):
        shown = [lab.get_window_extent(renderer) for t, lab in zip(ticks, labels)
                 if limits[0] <= t <= limits[1]]  # fmt: skip
        assert len(shown) >= 3
        for a, b in zip(shown, shown[1:]):
            assert not a.padded(2).overlaps(b), (a.bounds, b.bounds)


def test_every_value_label_shown_lies_inside_the_outputs_panel(sized_lab) -> None:
    ax = sized_lab.view["dots"].axes
    renderer = sized_lab.live.canvas.get_renderer()
    panel = ax.get_window_extent(renderer)
    (x_low, x_high), (y_low, y_high) = ax.get_xlim(), ax.get_ylim()
    shown = [a for a in ax.texts if x_low <= a.xy[0] <= x_high and y_low <= a.xy[1] <= y_high]
    assert len(shown) >= 5
    for label in shown:
        box = label.get_window_extent(renderer)
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1, (label.get_text(), box.bounds)
        assert panel.y0 <= box.y0 and box.y1 <= panel.y1, (label.get_text(), box.bounds)


# --- every text reads and every point shows -----------------------------------------------------


def every_output_the_lab_can_draw() -> np.ndarray:
    """Every partial and exact output of every block size and mask: (n, 2)."""
    points = []
    for block_size in BLOCK_SIZES:
        for causal in (False, True):
            schedule = tiling_schedule(Q, K, V, block_size=block_size, causal=causal)
            points += [step.output for step in schedule.steps] + [schedule.exact]
    return np.concatenate(points)[:, :2]


def test_every_value_and_output_is_drawn_whole_inside_the_outputs_panel(sized_lab) -> None:
    view = sized_lab.view
    ax = view["dots"].axes
    px_per_pt = sized_lab.live.figure.dpi / 72
    panel = ax.get_window_extent(sized_lab.live.canvas.get_renderer())
    value_radius = view["seen_values"].get_markersize() / 2 * px_per_pt
    # the largest marker an output gets: the exact output's open circle
    targets = view["targets"]
    output_radius = (np.sqrt(targets.get_sizes()[0]) + targets.get_linewidths()[0]) / 2 * px_per_pt
    for points, radius in (
        (view["V"], value_radius),
        (every_output_the_lab_can_draw(), output_radius),
    ):
        for x, y in ax.transData.transform(points):
            assert panel.x0 + radius <= x <= panel.x1 - radius, (x, y, panel.bounds)
            assert panel.y0 + radius <= y <= panel.y1 - radius, (x, y, panel.bounds)


def test_value_labels_touch_no_other_label_and_no_other_value(sized_lab) -> None:
    view = sized_lab.view
    ax = view["dots"].axes
    renderer = sized_lab.live.canvas.get_renderer()
    labels = [text for text in ax.texts if text.get_text().isdigit()]
    assert [int(text.get_text()) for text in labels] == list(range(T))
    boxes = [text.get_window_extent(renderer).padded(2) for text in labels]
    points = ax.transData.transform(view["V"])
    for j, box in enumerate(boxes):
        for i, other in enumerate(boxes[j + 1 :], start=j + 1):
            assert not box.overlaps(other), (j, i)
        for i, (x, y) in enumerate(points):
            assert i == j or not box.contains(x, y), (j, i)
