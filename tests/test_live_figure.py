"""attnlib.widgets.live: the lab machinery, driven without a browser."""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from attnlib.widgets.live import Lab, LiveFigure

X = np.linspace(0, 1, 5)


def make_view(fig):
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 2)
    (line,) = ax.plot([], [])
    label = ax.text(0.05, 1.8, " ")
    return {"line": line, "label": label}, [line, label]


def update_view(view, *, slope, shifted):
    if slope < 0:
        raise ValueError(f"slope must be >= 0; got {slope}")
    y = slope * X + (0.5 if shifted else 0.0)
    view["line"].set_data(X, y)
    view["label"].set_text(f"slope {slope:.2f}")
    return {"y": y}


def example_lab() -> Lab:
    controls = {
        "slope": widgets.FloatSlider(value=1.0, min=-1, max=1.5, description="slope"),
        "shifted": widgets.Checkbox(value=False, description="shift up"),
    }
    return Lab(controls, make_view, update_view, figsize=(4, 2), dpi=50)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def test_lab_draws_its_default_state_on_creation() -> None:
    lab = example_lab()
    assert lab.live.frames == 1
    assert np.allclose(lab.state["y"], X)
    assert pixels(lab.live.image.value).shape == (100, 200, 3)


def test_moving_a_control_updates_state_and_picture() -> None:
    lab = example_lab()
    before = lab.live.image.value
    lab.controls["shifted"].value = True
    assert np.allclose(lab.state["y"], X + 0.5)
    assert lab.live.frames == 2
    assert not np.array_equal(pixels(before), pixels(lab.live.image.value))


def test_update_changes_artists_in_place_never_rebuilds_the_figure() -> None:
    lab = example_lab()
    figure, line, n_axes = lab.live.figure, lab.view["line"], len(lab.live.figure.axes)
    lab.controls["slope"].value = 0.3
    assert lab.live.figure is figure and lab.view["line"] is line
    assert len(figure.axes) == n_axes and len(figure.axes[0].lines) == 1
    assert np.allclose(line.get_ydata(), 0.3 * X)


def test_partial_redraw_gives_the_same_pixels_as_a_full_redraw() -> None:
    lab = example_lab()
    lab.controls["slope"].value = 0.7
    lab.controls["shifted"].value = True
    blitted = pixels(lab.live.image.value)
    lab.live.refresh(full=True)
    assert np.array_equal(blitted, pixels(lab.live.image.value))


def test_an_error_in_the_update_is_shown_in_the_lab_and_cleared_later() -> None:
    lab = example_lab()
    lab.controls["slope"].value = -0.5
    assert isinstance(lab.last_error, ValueError)
    shown = "".join(o["text"] for o in lab.errors.outputs)
    assert "slope must be >= 0; got -0.5" in shown
    lab.controls["slope"].value = 0.5
    assert lab.last_error is None and lab.errors.outputs == ()


def test_every_control_needs_a_description() -> None:
    controls = {"slope": widgets.FloatSlider(), "shifted": widgets.Checkbox(description="x")}
    with pytest.raises(ValueError, match="'slope' has no description"):
        Lab(controls, make_view, update_view)


def test_controls_must_be_value_widgets() -> None:
    with pytest.raises(TypeError, match="'slope' must be an ipywidgets value widget; got str"):
        Lab({"slope": "fast"}, make_view, update_view)


def test_animated_artists_must_be_artists() -> None:
    with pytest.raises(TypeError, match="got int"):
        LiveFigure().animate([3])


def test_saved_output_carries_the_widget_view_and_a_png_of_the_picture() -> None:
    lab = example_lab()
    bundle = lab._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.model_id
    assert base64.b64decode(bundle["image/png"]) == lab.live.image.value


def test_naive_render_rebuilds_the_same_picture_from_scratch() -> None:
    lab = example_lab()
    lab.controls["slope"].value = 0.2
    naive = pixels(lab.render_naive())
    assert naive.ndim == 3 and naive.shape[0] > 50
    assert lab.live.frames == 2  # the lab's own figure was not touched
