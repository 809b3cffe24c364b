"""attnlib.liveview.lab and the machinery it uses (figure, encoders, controls, present mode),
driven without a browser."""

from __future__ import annotations

import asyncio
import base64
import inspect
import io
import json
import math
import threading

import ipywidgets as widgets
import numpy as np
import pytest
from lab_factories import make_lab, record_frames
from PIL import Image

import attnlib.labs
import attnlib.liveview.present as present
from attnlib.liveview.encoders import JPEG_QUALITY, encode_jpeg, encode_png
from attnlib.liveview.figure import LiveFigure
from attnlib.liveview.lab import Lab, heading_and_detail
from attnlib.liveview.text_labels import TextLabels

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


def example_parts() -> tuple:
    """Fresh (controls, make_view, update_view) of the example lab."""
    controls = {
        "slope": widgets.FloatSlider(value=1.0, min=-1, max=1.5, description="slope"),
        "shifted": widgets.Checkbox(value=False, description="shift up"),
    }
    return controls, make_view, update_view


def example_lab() -> Lab:
    return Lab(*example_parts(), figsize=(4, 2), dpi=50)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def test_lab_draws_its_default_state_on_creation() -> None:
    lab = example_lab()
    assert lab.live.frames == 1
    assert np.allclose(lab.state["y"], X)
    assert pixels(lab.picture.value).shape == (100, 200, 3)


def test_moving_a_control_updates_state_and_picture() -> None:
    lab = example_lab()
    before = lab.picture.value
    lab.controls["shifted"].value = True
    assert np.allclose(lab.state["y"], X + 0.5)
    assert lab.live.frames == 2
    assert not np.array_equal(pixels(before), pixels(lab.picture.value))


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
    blitted = pixels(lab.picture.value)
    assert np.array_equal(blitted, pixels(lab.live.render(full=True)))


def test_an_error_in_the_update_is_shown_in_the_lab_and_cleared_later() -> None:
    lab = example_lab()
    lab.controls["slope"].value = -0.5
    assert isinstance(lab.last_error, ValueError)
    assert "slope must be &gt;= 0; got -0.5" in lab.errors.value
    assert "Traceback" not in lab.errors.value  # the student's input: one sentence
    lab.controls["slope"].value = 0.5
    assert lab.last_error is None and lab.errors.value == ""


def test_an_error_message_that_ends_its_sentence_gets_no_second_full_stop() -> None:
    def refuse(view, **values):
        raise ValueError("slope must be a number.")

    controls, make, _ = example_parts()
    lab = Lab(controls, make, refuse, figsize=(4, 2), dpi=50)
    assert "a number. The picture still shows" in lab.errors.value
    assert ".." not in lab.errors.value


def test_an_error_that_is_a_bug_shows_its_traceback_folded_below_the_sentence() -> None:
    controls, make, _ = example_parts()
    lab = Lab(controls, make, lambda view, **values: 1 / 0, figsize=(4, 2), dpi=50)
    assert isinstance(lab.last_error, ZeroDivisionError)
    assert "ZeroDivisionError: division by zero" in lab.errors.value
    assert "<details>" in lab.errors.value and "Traceback" in lab.errors.value


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
    assert base64.b64decode(bundle["image/png"]) == lab.picture.value


def test_naive_render_rebuilds_the_same_picture_from_scratch() -> None:
    lab = example_lab()
    lab.controls["slope"].value = 0.2
    naive = pixels(lab.render_naive())
    assert naive.ndim == 3 and naive.shape[0] > 50
    assert lab.live.frames == 2  # the lab's own figure was not touched


# --- the picture: PNG frames, cached backgrounds, fast labels -----------------------------------


def test_encode_png_round_trips_every_pixel() -> None:
    rng = np.random.default_rng(0)
    rgba = rng.integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    decoded = pixels(encode_png(rgba))
    np.testing.assert_array_equal(decoded, rgba[:, :, :3])


@pytest.mark.parametrize("encode", [encode_png, encode_jpeg])
@pytest.mark.parametrize(
    "rgba",
    [np.zeros((3, 3), dtype=np.uint8), np.zeros((3, 3, 3), dtype=np.uint8)],
    ids=["two-dimensional", "three-channels"],
)
def test_an_encoder_rejects_a_buffer_that_is_not_rgba_bytes(encode, rgba) -> None:
    with pytest.raises(ValueError, match=r"rgba must be a \(H, W, 4\) uint8 array; got .*\(3, 3"):
        encode(rgba)


def labelled_make_view(fig):
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 2)
    (line,) = ax.plot([], [])
    return {"ax": ax, "line": line}, [line]


def labelled_update_view(view, *, slope, shifted):
    view["ax"].set_title("shifted" if shifted else "not shifted")  # a static part
    view["line"].set_data(X, slope * X)
    return {"slope": slope}


def labelled_lab() -> Lab:
    controls = {
        "slope": widgets.FloatSlider(value=1.0, min=0, max=1.5, description="slope"),
        "shifted": widgets.Checkbox(value=False, description="shift up"),
    }
    return Lab(
        controls,
        labelled_make_view,
        labelled_update_view,
        figsize=(4, 2),
        dpi=50,
        static_key=lambda slope, shifted: shifted,
    )


def test_a_static_part_named_by_static_key_is_redrawn_when_the_key_changes() -> None:
    lab = labelled_lab()
    lab.controls["shifted"].value = True
    lab.controls["slope"].value = 0.5
    lab.controls["shifted"].value = False  # back to a key whose background is cached
    cached = pixels(lab.picture.value)
    np.testing.assert_array_equal(cached, pixels(lab.live.render(full=True)))
    lab.controls["shifted"].value = True
    assert not np.array_equal(cached, pixels(lab.picture.value))


def test_text_labels_show_their_strings_where_they_are_told() -> None:
    lab = example_lab()
    ax = lab.live.figure.axes[0]
    labels = TextLabels(ax, 3)
    labels.set(["0.25", "", "1.00"], [[0.1, 1.0], [0.5, 1.0], [0.9, 1.0]])
    assert labels.texts == ["0.25", "", "1.00"]
    np.testing.assert_array_equal(labels.collection.get_offsets()[2], [0.9, 1.0])
    assert len(labels.collection.get_paths()[0].vertices) > 10  # glyph outlines
    assert len(labels.collection.get_paths()[1].vertices) <= 1  # nothing drawn for ""


# --- the layout of the controls -----------------------------------------------------------------


def test_sliders_get_a_readout_column_of_their_own() -> None:
    lab = example_lab()
    slider = lab.controls["slope"]
    assert slider.readout is False
    assert set(lab.readouts) == {"slope"}  # a checkbox has no readout
    assert lab.readouts["slope"].value == "1.00"
    slider.value = 0.25
    assert lab.readouts["slope"].value == "0.25"


def test_a_selection_slider_readout_shows_the_label_and_fits_the_longest_one() -> None:
    options = [("short", 0), ("a much longer label", 1)]
    controls = {"pick": widgets.SelectionSlider(options=options, value=0, description="pick")}

    def update(view, *, pick):
        return pick

    lab = Lab(controls, labelled_make_view, lambda view, pick: update(view, pick=pick))
    assert lab.readouts["pick"].value == "short"
    assert lab.readouts["pick"].layout.width == f"{len('a much longer label') + 1}ch"
    controls["pick"].value = 1
    assert lab.readouts["pick"].value == "a much longer label"


def test_every_control_gets_the_same_label_width_and_fills_its_row() -> None:
    lab = example_lab()
    widths = {c.style.description_width for c in lab.controls.values()}
    assert widths == {f"{len('slope') + 1}ch"}  # a checkbox's text sits right of its box
    for control in lab.controls.values():
        assert control.layout.flex == "1 1 auto" and control.layout.width == "auto"
    rows = lab.controls_box.children
    assert [row.children[0] for row in rows] == list(lab.controls.values())


def test_every_slider_readout_is_as_wide_as_the_widest_so_the_tracks_end_together() -> None:
    controls = {
        "n": widgets.IntSlider(value=1, min=1, max=9, description="n"),
        "word": widgets.SelectionSlider(options=["a", "longest"], description="word"),
    }
    lab = Lab(controls, labelled_make_view, lambda view, n, word: None)
    assert {r.layout.width for r in lab.readouts.values()} == {f"{len('longest') + 1}ch"}


def test_caption_shows_the_state_as_escaped_text() -> None:
    controls = {"slope": widgets.FloatSlider(value=1.0, min=0, max=1.5, description="slope")}
    lab = Lab(
        controls,
        make_view,
        lambda view, slope: update_view(view, slope=slope, shifted=False),
        caption=lambda state: f"<top> = {state['y'][-1]:.2f}\nsecond line",
    )
    assert lab.caption.value == "&lt;top&gt; = 1.00<br>second line"
    controls["slope"].value = 0.5
    assert lab.caption.value.startswith("&lt;top&gt; = 0.50")


def test_the_two_line_caption_is_the_heading_then_the_detail() -> None:
    state = {"heading": "tile 1 of 9", "detail": "first key block"}
    assert heading_and_detail(state) == "tile 1 of 9\nfirst key block"


def test_caption_must_be_a_function() -> None:
    controls = {"slope": widgets.FloatSlider(description="slope")}
    with pytest.raises(TypeError, match="caption must be a function or None; got str"):
        Lab(controls, make_view, update_view, caption="slope")


# Present mode: a lab at projector size.


@pytest.fixture(scope="module")
def present_lab() -> Lab:
    """One projector-sized example lab for the tests that only look at it (each costs a full
    1440-pixel draw and a JPEG)."""
    return Lab(*example_parts(), figsize=(4, 2), dpi=50, present=True)


def test_present_mode_draws_the_picture_at_projector_width(present_lab) -> None:
    lab = present_lab
    width, height = lab.live.canvas.get_width_height()
    assert width == present.PRESENT_WIDTH_PX >= 1280
    assert (width, height) == (present.PRESENT_WIDTH_PX, present.PRESENT_WIDTH_PX // 2)


def test_present_mode_raises_every_text_to_14_points_on_a_96_ppi_screen(present_lab) -> None:
    lab = present_lab
    assert pytest.approx(present.PRESENT_MIN_TEXT_PX) == 14 * 96 / 72
    assert lab.smallest_text_px() >= present.PRESENT_MIN_TEXT_PX - 1e-9
    notebook = example_lab()
    assert notebook.smallest_text_px() < present.PRESENT_MIN_TEXT_PX  # the default is untouched


def numbered_make_view(fig):
    ax = fig.add_subplot()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 2)
    ax.tick_params(labelsize=6)  # tick labels are made by the first draw, at this size
    labels = TextLabels(ax, len(X), fontsize=6)
    return {"labels": labels}, [labels.collection]


def numbered_update_view(view, *, slope, shifted):
    view["labels"].set([f"{slope * x:.1f}" for x in X], np.c_[X, slope * X])
    return {}


def test_present_mode_raises_text_labels_and_tick_labels_made_at_draw_time() -> None:
    controls = example_parts()[0]
    lab = Lab(controls, numbered_make_view, numbered_update_view, figsize=(4, 2), present=True)
    labels = lab.view["labels"]
    assert labels.fontsize * lab.live.figure.dpi / 72 >= present.PRESENT_MIN_TEXT_PX - 1e-9
    ticks = lab.live.figure.axes[0].get_xticklabels()
    assert ticks and all(
        t.get_fontsize() * lab.live.figure.dpi / 72 >= present.PRESENT_MIN_TEXT_PX - 1e-9
        for t in ticks
    )


def test_present_mode_sends_jpeg_frames_and_saves_a_jpeg_picture(present_lab) -> None:
    lab = present_lab
    assert lab.picture.format == "jpeg"
    assert Image.open(io.BytesIO(lab.picture.value)).format == "JPEG"
    bundle = lab._repr_mimebundle_()
    assert "image/jpeg" in bundle and "image/png" not in bundle


def test_present_mode_enlarges_the_controls_through_one_css_class(present_lab) -> None:
    lab = present_lab
    assert "attnlib-present" in lab._dom_classes
    styles = [c.value for c in lab.children if isinstance(c, widgets.HTML) and "<style>" in c.value]
    assert len(styles) == 1 and f"{present.PRESENT_FONT_PX}px" in styles[0]
    assert "attnlib-present" not in example_lab()._dom_classes


def test_a_present_lab_is_as_tall_as_its_title_rows_caption_lines_and_picture() -> None:
    controls = [widgets.IntSlider(description="n"), widgets.Checkbox(description="on")]
    height = present.present_height_px((10, 4), controls, "one<br>two", True, (1920, 1080))
    rows = 2 * (present.ROW_HEIGHT_PX[widgets.IntSlider] + present.ROW_MARGIN_PX)
    assert height["controls"] == rows and height["caption"] == 2 * present.CAPTION_LINE_PX
    assert height["picture"] == present.PRESENT_WIDTH_PX * 4 / 10  # shown 1:1 on full HD
    assert height["total"] == rows + 2 * present.CAPTION_LINE_PX + present.TITLE_PX + (
        present.LAB_MARGINS_PX + height["picture"]
    )


def test_a_present_lab_too_tall_for_the_screen_shrinks_its_picture_to_the_room_left() -> None:
    height = present.present_height_px((10, 6), [], "", False, (1280, 720))
    page = 1280 - present.PAGE_MARGIN_PX
    assert height["picture_width"] == page and height["picture"] == page * 0.6
    room = 720 - present.LAB_MARGINS_PX
    assert height["shown_width"] == pytest.approx(room / 0.6)


def test_a_caption_line_wider_than_the_page_counts_as_the_lines_it_wraps_to() -> None:
    line = "the lab's caption " * 12
    lines = math.ceil(present.caption_width_px(line) / (1280 - present.PAGE_MARGIN_PX))
    assert lines >= 2
    height = present.present_height_px((10, 3), [], line, False, (1280, 720))
    assert height["caption"] == lines * present.CAPTION_LINE_PX


@pytest.mark.parametrize("name", [n for n in attnlib.labs.__all__ if n.endswith("_lab")])
def test_every_lab_of_the_collection_has_a_present_mode_off_by_default(name: str) -> None:
    parameter = inspect.signature(getattr(attnlib.labs, name)).parameters.get("present")
    assert parameter is not None and parameter.default is False


def test_present_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="present must be True or False; got 'yes'"):
        Lab(*example_parts(), present="yes")


def test_encode_jpeg_keeps_the_picture_close_to_the_pixels() -> None:
    rgba = np.zeros((40, 60, 4), dtype=np.uint8)
    rgba[:, :30] = (200, 30, 30, 255)
    rgba[:, 30:] = (255, 255, 255, 255)
    decoded = np.asarray(Image.open(io.BytesIO(encode_jpeg(rgba))), dtype=int)
    assert decoded.shape == (40, 60, 3)
    assert np.abs(decoded[:, 2:26] - rgba[:, 2:26, :3]).max() <= 8  # away from the edge


def test_encode_jpeg_ignores_alpha_as_a_conversion_to_rgb_does() -> None:
    rgba = np.random.default_rng(0).integers(0, 256, size=(24, 40, 4), dtype=np.uint8)
    rgb = Image.fromarray(rgba, "RGBA").convert("RGB")
    buffer = io.BytesIO()
    rgb.save(buffer, format="jpeg", quality=JPEG_QUALITY)
    assert encode_jpeg(rgba) == buffer.getvalue()


def test_sync_controls_runs_before_each_update_and_one_move_draws_one_frame() -> None:
    controls, make, update = example_parts()

    def shift_only_above_one(controls: dict) -> None:  # a control that follows another
        if controls["slope"].value <= 1 and controls["shifted"].value:
            controls["shifted"].value = False

    lab = Lab(controls, make, update, figsize=(4, 2), dpi=50, sync_controls=shift_only_above_one)
    lab.controls["slope"].value = 1.2
    lab.controls["shifted"].value = True
    frames = lab.live.frames
    lab.controls["slope"].value = 0.5  # the sync turns "shifted" off inside this update
    assert lab.controls["shifted"].value is False
    assert lab.live.frames == frames + 1
    assert np.allclose(lab.state["y"], 0.5 * X)


# Felt latency: a move in the browser is drawn right after the kernel has reported idle.


def test_a_move_from_the_browser_is_drawn_on_the_kernel_loop_after_its_handler_returns() -> None:
    lab = example_lab()

    async def browser_moves_slope() -> tuple[int, int]:
        lab.controls["slope"].set_state({"value": 0.5})  # what the comm handler calls
        during = lab.live.frames
        await asyncio.sleep(0)  # the handler has returned: the kernel's loop runs on
        return during, lab.live.frames

    during, after = asyncio.run(browser_moves_slope())
    assert (during, after) == (1, 2)
    assert np.allclose(lab.state["y"], 0.5 * X)


def test_a_move_from_the_browser_moves_its_followers_before_the_handler_returns() -> None:
    controls, make, update = example_parts()

    def shift_only_above_one(controls: dict) -> None:
        if controls["slope"].value <= 1 and controls["shifted"].value:
            controls["shifted"].value = False

    lab = Lab(controls, make, update, figsize=(4, 2), dpi=50, sync_controls=shift_only_above_one)
    lab.controls["slope"].value = 1.2
    lab.controls["shifted"].value = True

    async def browser_moves_slope() -> tuple[bool, int]:
        lab.controls["slope"].set_state({"value": 0.5})  # the comm handler, before "idle"
        followed, frames = lab.controls["shifted"].value, lab.live.frames
        await asyncio.sleep(0)
        return followed, frames

    followed, frames_in_handler = asyncio.run(browser_moves_slope())
    assert followed is False  # the follower moved inside the handler
    assert lab.live.frames == frames_in_handler + 1  # and the move drew one frame, after it


def test_browser_moves_arriving_before_the_redraw_are_drawn_once_with_the_latest_values() -> None:
    lab = example_lab()

    async def two_moves() -> None:
        lab.controls["slope"].set_state({"value": 0.5})
        lab.controls["shifted"].set_state({"value": True})
        await asyncio.sleep(0)

    asyncio.run(two_moves())
    assert lab.live.frames == 2
    assert np.allclose(lab.state["y"], 0.5 * X + 0.5)


def test_a_change_made_by_kernel_code_is_drawn_at_once_even_inside_the_kernel_loop() -> None:
    lab = example_lab()

    async def cell_sets_slope() -> int:
        lab.controls["slope"].value = 0.25
        return lab.live.frames

    assert asyncio.run(cell_sets_slope()) == 2
    assert np.allclose(lab.state["y"], 0.25 * X)


# Thread safety: JupyterLab 4.6 delivers widget messages on a kernel subshell's thread.


def test_moves_and_hellos_from_two_threads_at_once_send_only_whole_frames() -> None:
    lab, reference = make_lab("trained_attention_lab"), make_lab("trained_attention_lab")
    sent = []
    record_frames(lab)  # the store has said hello: every frame goes through it
    lab.store.send_frame = lambda keys, frame, drop=(): sent.append((tuple(keys), frame))
    sentences = ["it was late", "the trophy did not fit because it was big", "short one"]
    failures = []

    # One round each is enough: without the figure's lock (LiveFigure.lock set to a no-op for
    # both the lab and its drawing ahead) this failed 20 runs in 20 (torn frames, ValueErrors),
    # and 10 in 10 with render() alone still locked; each hello draws ~10 frames, ~50 in all.
    def main_thread_types_sentences() -> None:
        for sentence in sentences:
            lab.controls["sentence"].value = sentence

    def subshell_moves_heads_and_greets() -> None:
        for head in [1, 2, 0]:
            lab.controls["head"].value = head
            lab.store.receive({"type": "hello"})

    def run(job) -> None:
        try:
            job()
        except Exception as err:  # pragma: no cover - reported below
            failures.append(err)

    threads = [
        threading.Thread(target=run, args=(job,))
        for job in (main_thread_types_sentences, subshell_moves_heads_and_greets)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and lab.last_error is None
    assert len(sent) > 20
    for keys, frame in sent[:: max(1, len(sent) // 25)]:  # each against a lab on one thread
        sentence, layer, head, (token, _) = json.loads(keys[-1])
        reference.controls["sentence"].value = sentence
        reference.controls["layer"].value = layer
        reference.controls["head"].value = head
        reference.controls["token"].value = token
        assert reference.current_frame().picture == frame.picture, keys
