"""Every lab of attnlib.labs made for tests: the trained-model lab with a stand-in model (no
download), the others as a notebook makes them. Not a test file."""

from __future__ import annotations

import functools

import numpy as np

import attnlib.labs
from attnlib.examples import INDUCTION_SEED
from attnlib.induction import Trained, train
from attnlib.liveview.lab import Lab
from attnlib.softmax import softmax

#: Every ``*_lab`` of the package.
LAB_NAMES = sorted(name for name in attnlib.labs.__all__ if name.endswith("_lab"))


class StandInModel:
    """The trained-model lab's model, replaced: tokens split on spaces, seeded weights."""

    def attention(self, sentence: str) -> tuple[list[str], np.ndarray]:
        tokens = ["[CLS]", *sentence.lower().split(), "[SEP]"]
        T = len(tokens)
        rng = np.random.default_rng(len(sentence))
        return tokens, softmax(rng.normal(size=(2, 3, T, T)), axis=-1)


@functools.cache
def induction_model() -> Trained:
    """The induction lab's model, trained once for every test that makes the lab (~1.5 s)."""
    return train(INDUCTION_SEED)


def make_lab(name: str, present: bool = False) -> Lab:
    """``attnlib.labs.<name>(present=present)``, with a stand-in model where a lab needs one
    and the induction lab's model trained once."""
    make = getattr(attnlib.labs, name)
    if name == "induction_lab":
        return make(induction_model(), present=present)
    if name == "trained_attention_lab":
        # the stand-in has 2 layers: the lab's start (layer 4) is not in it
        return make(StandInModel(), "it was late", layer=1, present=present)
    return make(present=present)


def record_frames(lab: Lab) -> dict[tuple[str, ...], object]:
    """Say "hello" to ``lab`` as a browser's store does; return every frame it sent, by keys
    (no event loop runs here, so every frame is drawn and sent at once)."""
    sent: dict[tuple[str, ...], object] = {}
    lab.store.send_frame = lambda keys, frame, drop=(): sent.__setitem__(tuple(keys), frame)
    lab.store.receive({"type": "hello"})
    return sent
