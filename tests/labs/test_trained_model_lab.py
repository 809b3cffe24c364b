"""The trained-model lab: each control changes what it should, and sentences are encoded once.

Most tests drive the lab with a small stand-in model (deterministic weights per sentence, so they
run in milliseconds and show exactly what is drawn); the last ones use the real all-MiniLM-L6-v2.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from attnlib.labs.trained_attention import (
    LABEL_CHARS,
    MAX_TOKENS,
    SUGGESTED_SENTENCES,
    AttentionCache,
    trained_attention_lab,
)
from attnlib.liveview.lab import Lab
from attnlib.pretrained import ModelNotAvailableError
from attnlib.softmax import softmax

SENTENCE = "The animal didn't cross the street because it was too tired"
IT = ["[CLS]", *SENTENCE.lower().split()].index("it")  # the stand-in model's position of "it"


class StandInModel:
    """Splits on spaces; weights: a softmax of scores seeded by the sentence, (2, 3, T, T)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def attention(self, sentence: str) -> tuple[list[str], np.ndarray]:
        self.calls.append(sentence)
        tokens = ["[CLS]", *sentence.lower().split(), "[SEP]"]
        T = len(tokens)
        rng = np.random.default_rng(len(sentence))
        return tokens, softmax(rng.normal(scale=2.0, size=(2, 3, T, T)), axis=-1)


@pytest.fixture(scope="module")
def model() -> StandInModel:
    return StandInModel()


@pytest.fixture(scope="module")
def shared_lab(model):
    return trained_attention_lab(model, SENTENCE, layer=1, head=2)


@pytest.fixture
def lab(shared_lab):
    """The module's lab, back at its first state (building one takes ~0.9 s of CPU)."""
    shared_lab.controls["sentence"].value = SENTENCE
    shared_lab.controls["layer"].value = 1
    shared_lab.controls["head"].value = 2
    shared_lab.controls["token"].value = IT
    assert shared_lab.last_error is None and shared_lab.state["tokens"][IT] == "it"
    return shared_lab


def face_colours(lab) -> np.ndarray:
    return np.asarray(lab.view["mesh"].get_facecolor()).reshape(MAX_TOKENS, MAX_TOKENS, 4)


def bar_heights(lab) -> np.ndarray:
    """The drawn bars' heights, read back from their rectangles."""
    return np.array([path.vertices[:, 1].max() for path in lab.view["bars"].get_paths()])


# --- the controls -------------------------------------------------------------------------------


def test_the_controls_are_sentence_layer_head_and_token(lab) -> None:
    assert list(lab.controls) == ["sentence", "layer", "head", "token"]


def test_the_sentence_box_is_a_text_box_that_updates_on_enter(lab) -> None:
    box = lab.controls["sentence"]
    assert isinstance(box, widgets.Text)
    assert box.continuous_update is False and box.ensure_option is False


def test_the_first_picture_is_the_row_of_it(lab, model) -> None:
    assert lab.last_error is None
    tokens, weights = model.attention(SENTENCE)
    it = tokens.index("it")
    assert lab.state["token"] == it and lab.state["tokens"][it] == "it"
    np.testing.assert_array_equal(bar_heights(lab), weights[1, 2, it])
    assert lab.view["row_box"].get_y() == pytest.approx(it - 0.5)


def test_moving_the_head_redraws_that_heads_weights(lab, model) -> None:
    _, weights = model.attention(SENTENCE)
    frames = lab.live.frames
    lab.controls["head"].value = 0
    assert lab.live.frames == frames + 1
    np.testing.assert_array_equal(lab.state["weights"], weights[1, 0])
    T = len(lab.state["tokens"])
    drawn = face_colours(lab)[:T, :T, :3]
    expected = face_colours_of(weights[1, 0])
    np.testing.assert_allclose(drawn, expected)


def face_colours_of(weights: np.ndarray) -> np.ndarray:
    from matplotlib import colormaps

    return colormaps["Blues"](weights)[..., :3]


def test_moving_the_layer_redraws_that_layers_weights(lab, model) -> None:
    _, weights = model.attention(SENTENCE)
    lab.controls["layer"].value = 0
    np.testing.assert_array_equal(lab.state["weights"], weights[0, 2])
    np.testing.assert_array_equal(bar_heights(lab), weights[0, 2, lab.state["token"]])


def test_moving_the_token_moves_the_outlined_row_and_the_bars(lab, model) -> None:
    _, weights = model.attention(SENTENCE)
    lab.controls["token"].value = 3
    assert lab.view["row_box"].get_y() == pytest.approx(2.5)
    np.testing.assert_array_equal(bar_heights(lab), weights[1, 2, 3])


def test_the_caption_names_the_strongest_key(lab) -> None:
    j = int(np.argmax(lab.state["row"]))
    assert lab.state["top"][0] == (j, lab.state["tokens"][j], float(lab.state["row"][j]))
    assert f"{lab.state['tokens'][j]!r} {lab.state['row'][j]:.2f}" in lab.caption.value.replace(
        "&#x27;", "'"
    )


# --- sentences ----------------------------------------------------------------------------------


def test_a_new_sentence_is_encoded_once_and_then_read_from_the_cache(lab, model) -> None:
    assert "A cat sat" not in model.calls
    lab.controls["sentence"].value = "A cat sat"
    assert model.calls.count("A cat sat") == 1
    lab.controls["sentence"].value = SENTENCE
    lab.controls["sentence"].value = "A cat sat"
    lab.controls["head"].value = 1
    assert model.calls.count("A cat sat") == 1
    assert lab.state["tokens"] == ("[CLS]", "a", "cat", "sat", "[SEP]")


def test_a_new_sentence_relabels_the_token_slider_and_keeps_the_same_word(lab) -> None:
    lab.controls["sentence"].value = "so it goes"
    labels = [label for label, _ in lab.controls["token"].options]
    assert labels == ["0: [CLS]", "1: so", "2: it", "3: goes", "4: [SEP]"]
    assert lab.state["token"] == 2  # "it" is still the query
    lab.controls["sentence"].value = "no such word"
    assert lab.state["token"] == 2 and lab.state["tokens"][2] == "such"  # same position


def test_a_short_sentence_gets_one_bar_per_token(lab) -> None:
    lab.controls["sentence"].value = "short one"
    assert len(lab.view["bars"].get_paths()) == 4
    np.testing.assert_array_equal(bar_heights(lab), lab.state["row"])
    assert lab.view["ax_map"].get_xlim() == (-0.5, 3.5)


def test_a_sentence_too_long_to_draw_is_one_plain_sentence_in_the_lab(lab) -> None:
    lab.controls["sentence"].value = "word " * MAX_TOKENS
    assert isinstance(lab.last_error, ValueError)
    assert f"the lab draws at most {MAX_TOKENS}" in lab.errors.value
    assert "Traceback" not in lab.errors.value and "live.py" not in lab.errors.value
    lab.controls["sentence"].value = "fine again"
    assert lab.last_error is None and lab.errors.value == ""


def test_a_new_sentence_keeps_the_query_token_where_the_new_sentence_has_it(lab) -> None:
    lab.controls["sentence"].value = "the animal was tired because it ran"
    lab.controls["token"].value = 6  # "it"
    lab.controls["sentence"].value = "the trophy did not fit because it was big"
    assert lab.state["tokens"][lab.state["token"]] == "it"
    assert lab.readouts["token"].value == "7: it"


def test_the_cache_drops_the_least_recently_used_sentence() -> None:
    model = StandInModel()
    cache = AttentionCache(model, size=2)
    cache("a")
    cache("b")
    cache("a")
    cache("c")  # drops "b"
    cache("a")
    cache("b")
    assert model.calls == ["a", "b", "c", "b"]
    assert cache.encodes == 4


# --- bad input ----------------------------------------------------------------------------------


def test_a_layer_out_of_range_raises_naming_the_range(model) -> None:
    with pytest.raises(ValueError, match=r"layer must be in \[0, 1\] and head in \[0, 2\]"):
        trained_attention_lab(model, SENTENCE, layer=2)


def test_a_token_position_out_of_range_raises(model) -> None:
    with pytest.raises(ValueError, match=r"token must be a position in \[0, 3\]"):
        trained_attention_lab(model, "a b", layer=0, token=4)


def test_a_sentence_that_is_not_a_string_raises(model) -> None:
    with pytest.raises(TypeError, match="sentence must be a string; got int"):
        AttentionCache(model)(3)


# --- the picture at both sizes ------------------------------------------------------------------

#: The longest sentence the lab draws, of long words (one longer than a label holds whole).
LONGEST = " ".join(
    ("somewhere", "understanding", "because", "crossed")[i % 4] for i in range(MAX_TOKENS - 2)
)


@pytest.fixture(scope="module", params=[False, True], ids=["notebook", "present"])
def sized_lab(request, model):
    return trained_attention_lab(model, SENTENCE, present=request.param)


def test_a_token_too_long_for_a_label_is_cut_there_and_named_whole_on_the_slider(lab) -> None:
    lab.controls["sentence"].value = "misunderstanding it"
    cut = "misunderstanding"[: LABEL_CHARS - 1] + "…"
    for labels in (
        lab.view["ax_map"].get_xticklabels(),
        lab.view["ax_map"].get_yticklabels(),
        lab.view["ax_bar"].get_xticklabels(),
    ):
        assert [label.get_text() for label in labels] == ["[CLS]", cut, "it", "[SEP]"]
    assert lab.controls["token"].options[1] == ("1: misunderstanding", 1)


# --- with the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_lab():
    return trained_attention_lab()


def test_by_default_the_lab_loads_the_real_model_and_draws_its_weights(real_lab) -> None:
    lab = real_lab
    tokens, weights = lab.cache.model.attention(SENTENCE)
    assert type(lab.cache.model).__name__ == "MiniLM"
    assert lab.state["tokens"] == tuple(tokens) and tokens[lab.state["token"]] == "it"
    layer, head = lab.state["layer"], lab.state["head"]
    np.testing.assert_array_equal(lab.state["weights"], weights[layer, head])
    assert lab.last_error is None


def test_the_lab_starts_on_a_head_whose_choice_of_noun_flips_with_the_referent(real_lab) -> None:
    """Notebook 13's clear flip: in each sentence the two nouns get >= 5% of it's weight together
    and the referent >= 2 points more than the other noun (animal if tired, street if wide)."""
    model, layer, head = real_lab.cache.model, real_lab.state["layer"], real_lab.state["head"]
    assert (layer, head) == (4, 0)
    for sentence, referent, other in (
        (SUGGESTED_SENTENCES[0], "animal", "street"),
        (SUGGESTED_SENTENCES[1], "street", "animal"),
    ):
        tokens, weights = model.attention(sentence)
        row = weights[layer, head, tokens.index("it")]
        a, b = row[tokens.index(referent)], row[tokens.index(other)]
        assert a + b >= 0.05 and a - b >= 0.02, (sentence, a, b)


def test_every_suggested_sentence_fits_the_lab_and_has_the_query_it(real_lab) -> None:
    for sentence in SUGGESTED_SENTENCES:
        tokens, _ = real_lab.cache(sentence)  # raises for a sentence too long to draw
        assert "it" in tokens, sentence


def test_without_the_model_the_lab_shows_what_is_missing_in_its_place(monkeypatch) -> None:
    import attnlib.pretrained

    lines = "The all-MiniLM-L6-v2 model is not on this computer yet (no network).\nFetch it once"

    def no_model(*args, **kwargs):
        raise ModelNotAvailableError(lines)

    monkeypatch.setattr(attnlib.pretrained, "load_minilm", no_model)
    shown = trained_attention_lab(present=True)  # raises nothing
    assert isinstance(shown, widgets.HTML) and not isinstance(shown, Lab)
    assert "is not on this computer yet (no network).\nFetch it once" in shown.value
    assert "Traceback" not in shown.value and "run this cell again" in shown.value
