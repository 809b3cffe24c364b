"""draw_attention_pipeline: labelled boxes and arrows, shapes computed from its arguments."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.text import Text

from attnlib.pictures.pipeline_diagram import draw_attention_pipeline

STAGES = ["X", "Q", "K", "V", "S", "scale", "softmax", "AV", "WO", "out"]
EDGES = [
    "X->Q",
    "X->K",
    "X->V",
    "Q->S",
    "K->S",
    "S->scale",
    "scale->softmax",
    "softmax->AV",
    "V->AV",
    "AV->WO",
    "WO->out",
]


def by_gid(artists) -> dict:
    return {a.get_gid(): a for a in artists}


def test_draws_one_box_with_text_per_stage(ax) -> None:
    found = by_gid(draw_attention_pipeline(4, 8, 4, 2, ax=ax))
    for stage in STAGES:
        assert isinstance(found[f"box:{stage}"], FancyBboxPatch)
        assert isinstance(found[f"boxtext:{stage}"], Text)
        assert found[f"boxtext:{stage}"].get_text()


def test_draws_one_labelled_arrow_per_edge_of_the_pipeline(ax) -> None:
    found = by_gid(draw_attention_pipeline(4, 8, 4, 2, ax=ax))
    arrows = sorted(g[len("arrow:") :] for g in found if g.startswith("arrow:"))
    assert arrows == sorted(EDGES)
    for edge in EDGES:
        assert isinstance(found[f"arrow:{edge}"], FancyArrowPatch)
        assert found[f"label:{edge}"].get_text()


def test_arrow_labels_carry_the_shapes_of_their_tensors(ax) -> None:
    # All sizes distinct, so a label with the wrong dimension cannot pass by coincidence.
    T, d_model, d_k, d_v = 3, 11, 5, 7
    found = by_gid(draw_attention_pipeline(T, d_model, d_k, d_v, ax=ax))
    expected = {
        "X->Q": (T, d_model),
        "X->K": (T, d_model),
        "X->V": (T, d_model),
        "Q->S": (T, d_k),
        "K->S": (d_k, T),  # the key arrow carries K transposed
        "S->scale": (T, T),
        "scale->softmax": (T, T),
        "softmax->AV": (T, T),
        "V->AV": (T, d_v),
        "AV->WO": (T, d_v),
        "WO->out": (T, d_model),  # the output projection restores the model width
    }
    for edge, shape in expected.items():
        assert f"({shape[0]}, {shape[1]})" in found[f"label:{edge}"].get_text(), edge


def test_projection_boxes_show_the_weight_shapes(ax) -> None:
    found = by_gid(draw_attention_pipeline(3, 11, 5, 7, ax=ax))
    assert "(11, 5)" in found["boxtext:Q"].get_text()
    assert "(11, 5)" in found["boxtext:K"].get_text()
    assert "(11, 7)" in found["boxtext:V"].get_text()
    assert "(7, 11)" in found["boxtext:WO"].get_text()


def test_draws_on_the_given_axes_and_returns_its_artists(ax) -> None:
    artists = draw_attention_pipeline(4, 8, 4, 4, ax=ax)
    assert all(a.axes is ax for a in artists)
    assert len(artists) == 2 * len(STAGES) + 2 * len(EDGES)
    assert not ax.axison


def test_makes_its_own_figure_without_an_axes() -> None:
    artists = draw_attention_pipeline(2, 4, 2, 2)
    try:
        assert artists[0].axes is not None
    finally:
        plt.close(artists[0].axes.figure)


@pytest.fixture(scope="module")
def blank_ax():
    """One Axes shared by the refusals below: each checks that it stays blank."""
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


@pytest.mark.parametrize("name", ["T", "d_model", "d_k", "d_v"])
@pytest.mark.parametrize(
    "bad, error",
    [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError), ("4", TypeError)],
)
def test_rejects_a_size_that_is_not_a_positive_integer(blank_ax, name, bad, error) -> None:
    sizes = {"T": 4, "d_model": 8, "d_k": 4, "d_v": 2, name: bad}
    with pytest.raises(error, match=rf"^{name} must"):
        draw_attention_pipeline(**sizes, ax=blank_ax)
    assert not (blank_ax.patches or blank_ax.texts), "drew on the axes before refusing"


def test_rejects_an_ax_that_is_not_an_axes() -> None:
    fig = plt.figure()
    try:
        with pytest.raises(TypeError, match="ax must be a matplotlib Axes.*Figure"):
            draw_attention_pipeline(4, 8, 4, 2, ax=fig)
    finally:
        plt.close(fig)
