"""The saturation lab: its update function and its controls, without a browser."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from attnlib import softmax
from attnlib.labs import saturation_lab
from attnlib.labs.saturation import (
    CAPTION_SEPARATOR,
    D_K_OPTIONS,
    saturation_caption,
    saturation_data,
    saturation_state,
)
from attnlib.saturation import entropy, softmax_jacobian_norm

QUERIES, KEYS = saturation_data()
DEFAULTS = {"d_k": 1, "scaled": False, "query": 0}


@pytest.fixture(scope="module")
def shared_lab():
    return saturation_lab()


@pytest.fixture
def lab(shared_lab):
    """The module's lab with its controls back at their defaults (building one costs a full
    draw of the figure: shared, that is done once for the whole module)."""
    for name, value in DEFAULTS.items():
        shared_lab.controls[name].value = value
    assert shared_lab.values() == DEFAULTS and shared_lab.last_error is None
    return shared_lab


def test_d_k_slider_steps_are_powers_of_two_from_1_to_1024() -> None:
    assert D_K_OPTIONS == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def test_state_is_the_softmax_of_the_first_d_k_coordinates() -> None:
    state = saturation_state(QUERIES, KEYS, d_k=64, scaled=True, query=3)
    by_hand = softmax(KEYS[:, :64] @ QUERIES[3, :64] / 8.0)
    assert np.allclose(state["weights"], by_hand)
    assert state["entropy"] == pytest.approx(float(entropy(by_hand)))
    assert state["max_weight"] == pytest.approx(by_hand.max())
    assert state["jacobian_norm"] == pytest.approx(float(softmax_jacobian_norm(by_hand)))


def test_curves_hold_every_slider_position_scaled_and_unscaled() -> None:
    curves = saturation_state(QUERIES, KEYS, d_k=1, scaled=False, query=0)["curves"]
    assert list(curves["d_ks"]) == list(D_K_OPTIONS)
    raw_256 = softmax(KEYS[:, :256] @ QUERIES[0, :256])
    assert curves["entropy_raw"][8] == pytest.approx(float(entropy(raw_256)))
    assert curves["jacobian_scaled"][8] == pytest.approx(
        float(softmax_jacobian_norm(softmax(KEYS[:, :256] @ QUERIES[0, :256] / 16)))
    )


def test_unscaled_large_d_k_goes_one_hot_and_the_gradient_vanishes() -> None:
    # The median over all 8 queries: a single query can meet two nearly tied keys.
    states = [saturation_state(QUERIES, KEYS, 1024, False, q) for q in range(8)]
    assert np.median([s["max_weight"] for s in states]) > 0.999
    assert np.median([s["jacobian_norm"] for s in states]) < 1e-3
    assert np.median([s["entropy"] for s in states]) < 0.01


def test_scaled_weights_and_gradient_stay_steady_across_d_k() -> None:
    for q in range(8):
        states = [saturation_state(QUERIES, KEYS, d, True, q) for d in D_K_OPTIONS]
        assert min(s["entropy"] for s in states) > 0.3 * np.log(8)
        assert min(s["jacobian_norm"] for s in states) > 0.15
        assert max(s["max_weight"] for s in states) < 0.8


def test_dragging_the_lab_unscaled_shows_saturation(lab) -> None:
    start = lab.state
    lab.controls["d_k"].value = 1024
    assert lab.state["max_weight"] > 0.999 > start["max_weight"]
    assert lab.state["jacobian_norm"] < 1e-3 < start["jacobian_norm"]
    heights = [bar.get_height() for bar in lab.view["bars"]]
    assert np.allclose(heights, lab.state["weights"])
    shown = lab.caption.value.replace("\u00a0", " ")  # no-break spaces inside each group
    assert f"d_k = 1024, unscaled, query 0:{CAPTION_SEPARATOR}max p = 1.0000" in shown


def test_caption_wraps_only_between_its_groups_never_inside_a_number() -> None:
    text = saturation_caption(
        {
            "d_k": 64,
            "scaled": True,
            "query": 2,
            "max_weight": 0.5,
            "entropy": 1.25,
            "jacobian_norm": 0.0123,
        }
    )
    groups = text.split(CAPTION_SEPARATOR)
    assert [g.replace("\u00a0", " ") for g in groups] == [
        "d_k = 64, scaled, query 2:",
        "max p = 0.5000",
        "H = 1.250 nats",
        "‖J‖_F = 1.23e-02",
    ]
    assert all(" " not in g for g in groups)  # only no-break spaces inside a group


def test_ticking_scaled_brings_the_weights_back(lab) -> None:
    lab.controls["d_k"].value = 1024
    lab.controls["scaled"].value = True
    assert lab.state["max_weight"] < 0.8 and lab.state["jacobian_norm"] > 0.15
    marker = lab.view["entropy"][2]
    assert marker.get_xdata()[0] == 1024
    assert marker.get_ydata()[0] == pytest.approx(lab.state["entropy"])


def test_query_slider_changes_the_attending_query() -> None:
    lab = saturation_lab(d_k=16, scaled=True)  # a lab of its own: it checks the start values too
    assert lab.values() == {"d_k": 16, "scaled": True, "query": 0}
    assert np.allclose(lab.state["weights"], softmax(KEYS[:, :16] @ QUERIES[0, :16] / 4.0))
    lab.controls["query"].value = 5
    by_hand = softmax(KEYS[:, :16] @ QUERIES[5, :16] / 4.0)
    assert np.allclose(lab.state["weights"], by_hand)


def test_every_control_is_described_and_nothing_failed(lab) -> None:
    assert set(lab.controls) == {"d_k", "scaled", "query"}
    assert isinstance(lab, widgets.VBox) and lab.last_error is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 0}, r"d_k must be >= 1; got d_k=0"),
        ({"d_k": 2048}, r"d_k=2048 exceeds the 1024 coordinates"),
        ({"query": 8}, r"query=8 is out of range for 8 queries"),
    ],
)
def test_state_rejects_bad_settings(kwargs: dict, message: str) -> None:
    settings = {"d_k": 4, "scaled": True, "query": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        saturation_state(QUERIES, KEYS, **settings)


def test_state_rejects_queries_and_keys_of_different_widths() -> None:
    with pytest.raises(ValueError, match=r"queries shape \(8, 1024\) and keys shape \(8, 16\)"):
        saturation_state(QUERIES, KEYS[:, :16], 4, True, 0)


def test_lab_rejects_a_d_k_off_the_slider() -> None:
    with pytest.raises(ValueError, match="d_k must be one of"):
        saturation_lab(d_k=3)


@pytest.mark.parametrize("scaled", ["no", 0, None])
def test_lab_refuses_a_scaled_flag_that_is_not_a_bool(scaled) -> None:
    # bool("no") is True: the lab would silently start with scaling on.
    with pytest.raises(TypeError, match=f"scaled must be True or False; got {scaled!r}"):
        saturation_lab(scaled=scaled)


def test_lab_refuses_a_bool_as_d_k() -> None:
    with pytest.raises(TypeError, match="d_k must be an integer; got True"):
        saturation_lab(d_k=True)


def test_jacobian_panel_is_log_scaled_and_shows_every_curve_point(lab) -> None:
    scaled_line, raw_line, _ = lab.view["jacobian"]
    ax = raw_line.axes
    assert ax.get_yscale() == "log"
    bottom, top = ax.get_ylim()
    for q in range(8):
        lab.controls["query"].value = q
        for line in (scaled_line, raw_line):
            y = line.get_ydata()
            assert (bottom < y[y > 0]).all() and (y <= top).all()


# --- the picture reads cleanly at both sizes ----------------------------------------------------


def drawn_tick_labels(ax, axis: str) -> list:
    """The tick labels a draw shows on ``axis`` ("x" or "y"): those of ticks inside the limits."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [label for tick, label in zip(ticks, labels) if low <= tick <= high]


@pytest.fixture(scope="module", params=[False, True], ids=["notebook", "present"])
def sized_lab(request):
    return saturation_lab(present=request.param)


def test_jacobian_tick_labels_stay_below_the_panels_title(sized_lab) -> None:
    lab = sized_lab
    ax = lab.view["jacobian"][0].axes
    renderer = lab.live.canvas.get_renderer()
    title = ax.title.get_window_extent(renderer)
    labels = drawn_tick_labels(ax, "y")
    assert len(labels) >= 4
    for label in labels:  # below the title's line: "10^0" beside it read as part of it
        assert label.get_window_extent(renderer).y1 < title.y0, label.get_text()


def test_every_tick_label_lies_inside_the_picture(sized_lab) -> None:
    lab = sized_lab
    renderer = lab.live.canvas.get_renderer()
    picture = lab.live.figure.bbox
    for ax in lab.live.figure.axes:
        for label in drawn_tick_labels(ax, "x") + drawn_tick_labels(ax, "y"):
            box = label.get_window_extent(renderer)
            assert picture.x0 <= box.x0 and box.x1 <= picture.x1, (label.get_text(), box.bounds)
            assert picture.y0 <= box.y0 and box.y1 <= picture.y1, (label.get_text(), box.bounds)
