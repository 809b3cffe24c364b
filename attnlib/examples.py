"""The fixed data of the source lessons, as read-only arrays. Data only: answers are computed.

``ORDER_*``: the hand-traceable "Order was late it" example (the complaint-bot lesson). Rows of
X are the four tokens; Q = X @ W_Q etc. gives the Q, K, V printed in the lesson.

``T2_*``: the T=2, d_k=4, d_v=2 worked example (the symbols-and-shapes lesson), given directly as
Q, K, V.

``TWO_KEY_*``: exercise 2 of the same lesson, one query over two keys with d_k taken as 4.

``ANIMAL_*``: the numbers that the "animal crossed the road" lesson quotes from its figure
(which the text lacks): one query and one key, row 1 of the weight matrix, and the value
entries that row 1 of the output combines.

``saturation_data``, ``tiling_example``, ``MASKING_SENTENCE`` and ``masking_scores``,
``POSITIONS_SENTENCE`` and ``positions_weights``: the seeded data of notebooks 04, 10, 06 and 09
and of their labs (:mod:`attnlib.labs`).

``INDUCTION_SEED`` and ``induction_held_out``: notebook 14's first training seed and its held-out
repeated sequences, which the induction lab shows too.

``WINOGRAD_PAIRS``, ``REFERENT_CONTROL`` and ``SIMILARITY_SENTENCES``: the sentences notebook 13
runs through the trained model.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_int
from .induction import repeated_sequences


def _frozen(rows: list) -> np.ndarray:
    arr = np.array(rows, dtype=np.float64)
    arr.setflags(write=False)
    return arr


#: Token strings, in row order of ORDER_X.
ORDER_TOKENS: tuple[str, ...] = ("Order", "was", "late", "it")
#: Embeddings, shape (4, 4): one row per token of ORDER_TOKENS.
ORDER_X = _frozen([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
#: Query projection W_Q, shape (d_model, d_k) = (4, 4).
ORDER_W_Q = _frozen([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]])
#: Key projection W_K, shape (4, 4).
ORDER_W_K = _frozen([[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]])
#: Value projection W_V, shape (d_model, d_v) = (4, 4).
ORDER_W_V = _frozen([[2, 0, 0, 1], [0, 1, 0, 0], [0, 0, 3, 0], [1, 0, 0, 1]])

#: Queries of the T=2 example, shape (2, 4).
T2_Q = _frozen([[2.0, 0.0, 2.0, 0.0], [0.0, 4.0, 0.0, 2.0]])
#: Keys of the T=2 example, shape (2, 4).
T2_K = _frozen([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
#: Values of the T=2 example, shape (2, 2).
T2_V = _frozen([[1.0, 2.0], [3.0, 0.0]])

#: Exercise 2 of 004: the query, shape (1, 2).
TWO_KEY_Q = _frozen([[1.0, 2.0]])
#: Its keys k_0, k_1, shape (2, 2).
TWO_KEY_K = _frozen([[2.0, 1.0], [0.0, 2.0]])
#: Its values v_0, v_1, shape (2, 2).
TWO_KEY_V = _frozen([[10.0, 0.0], [0.0, 20.0]])
#: The d_k the exercise states for its scale (sqrt(4) = 2), although its vectors have length 2.
TWO_KEY_D_K = 4

#: The "animal" lesson's query of token 1, as its figure shows it, shape (2,).
ANIMAL_Q1 = _frozen([1.0, 0.5])
#: Its key of token 1, shape (2,).
ANIMAL_K1 = _frozen([1.1, 0.4])
#: Row 1 of its attention weights, over tokens 1..4, shape (4,), rounded to two decimals.
ANIMAL_WEIGHTS_ROW1 = _frozen([0.31, 0.26, 0.25, 0.18])
#: The value entries (first column of V, tokens 1..4) that output row 1 combines, shape (4,).
ANIMAL_V_COLUMN = _frozen([2.0, 0.5, 1.5, 0.0])

#: The widest d_k of notebook 04's data: each query and key has this many coordinates.
SATURATION_D = 1024


def saturation_data(n_tokens: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded queries and keys of notebook 04 and its lab: standard-normal, 1024 coordinates.

    Parameters
    ----------
    n_tokens : int, default 8
        Number of tokens T (queries and keys).
    seed : int, default 0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    queries, keys : ndarray, shape (T, 1024)
    """
    n_tokens = check_int(n_tokens, "n_tokens", minimum=2)
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    queries = rng.standard_normal((n_tokens, SATURATION_D))
    keys = rng.standard_normal((n_tokens, SATURATION_D))
    return queries, keys


def tiling_example(
    T: int = 12, d_k: int = 4, d_v: int = 2, seed: int = 8
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tiling lab's small example (notebook 10): seeded standard-normal Q, K and V.

    ``rng = np.random.default_rng(seed)``; then ``Q``, ``K``, ``V`` in that order, each
    ``rng.normal(size=...)``. With the default ``1/sqrt(d_k)`` scale the scores have a standard
    deviation near 1.

    Returns
    -------
    Q : ndarray, shape (T, d_k)
    K : ndarray, shape (T, d_k)
    V : ndarray, shape (T, d_v)
    """
    T, d_k, d_v = check_int(T, "T"), check_int(d_k, "d_k"), check_int(d_v, "d_v")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    return rng.normal(size=(T, d_k)), rng.normal(size=(T, d_k)), rng.normal(size=(T, d_v))


#: The example sentence of notebook 06, one token per word.
MASKING_SENTENCE: tuple[str, ...] = (
    "The",
    "animal",
    "crossed",
    "the",
    "road",
    "because",
    "it",
    "was",
    "tired",
)


def masking_scores(seed: int = 6, d_model: int = 8, d_k: int = 4) -> np.ndarray:
    """Scaled scores ``Q K^T / sqrt(d_k)`` of :data:`MASKING_SENTENCE`, as notebook 06 makes them.

    ``rng = np.random.default_rng(seed)``; ``X = rng.normal(size=(T, d_model))``; then
    ``W_Q`` and ``W_K`` (in that order, each ``rng.normal(size=(d_model, d_k)) / sqrt(d_model)``);
    ``Q = X W_Q``, ``K = X W_K``.

    Returns
    -------
    ndarray, shape (T, T)
        Row i holds query i's scores against every key; T = 9.
    """
    seed = check_int(seed, "seed", minimum=0)
    d_model = check_int(d_model, "d_model")
    d_k = check_int(d_k, "d_k")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(len(MASKING_SENTENCE), d_model))
    W_Q = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    W_K = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
    return (X @ W_Q) @ (X @ W_K).T / np.sqrt(d_k)


#: The sentence of the positions lab (notebook 09); "the" twice, so that attention without
#: positions shows two identical columns.
POSITIONS_SENTENCE: tuple[str, ...] = ("the", "dog", "bites", "the", "man")


def positions_weights(seed: int = 9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Embeddings and projections of :data:`POSITIONS_SENTENCE`: ``X`` (5, 8), ``W_Q``,
    ``W_K`` (8, 8).

    ``rng = np.random.default_rng(seed)``; one embedding per distinct word (the two "the" share
    theirs, in sorted order of the words), then ``W_Q`` and ``W_K``, each
    ``rng.normal(size=(8, 8)) / sqrt(8)``.
    """
    seed = check_int(seed, "seed", minimum=0)
    d = 8
    rng = np.random.default_rng(seed)
    table = {word: rng.normal(size=d) for word in sorted(set(POSITIONS_SENTENCE))}
    X = np.array([table[word] for word in POSITIONS_SENTENCE])
    W_Q = rng.normal(size=(d, d)) / np.sqrt(d)
    W_K = rng.normal(size=(d, d)) / np.sqrt(d)
    return X, W_Q, W_K


#: The training seed of notebook 14's first model and of the induction lab (not a tuning seed).
INDUCTION_SEED = 10


def induction_held_out(half_length: int = 12, vocab: int = 30) -> np.ndarray:
    """Notebook 14's held-out repeated sequences: 100 rows of ``2 * half_length`` tokens, the
    second half equal to the first, from ``np.random.default_rng(2024)``
    (:func:`attnlib.induction.repeated_sequences`)."""
    return repeated_sequences(np.random.default_rng(2024), 100, half_length, vocab)


_TIRED = "The animal didn't cross the street because it was too tired"
_WIDE = "The animal didn't cross the street because it was too wide"


def _pair(name: str, template: str, first_word: str, second_word: str) -> tuple[str, ...]:
    first_noun, second_noun = name.split("/")
    return (
        name,
        template.format(first_word),
        template.format(second_word),
        first_noun,
        second_noun,
    )


#: Winograd-style sentence pairs for notebook 13, each ``(name, first, second, noun1, noun2)``:
#: in ``first`` the pronoun "it" refers to ``noun1``, in ``second`` to ``noun2``, and the two
#: sentences differ in one word. The first is the attention lesson's "animal/street" pair (made
#: from "The animal didn't cross the street because it was too tired", the example of Google's
#: 2017 Transformer blog post); the other fifteen are classic pairs of the Winograd Schema
#: Challenge (Levesque, Davis and Morgenstern, 2012, the WSC273 collection), shortened where a
#: second "it" or a rare word was in the way, and chosen before any head was measured: every
#: pronoun "it" and both nouns are single tokens of the model, each once in its sentence. Their
#: order is fixed: notebook 13 chooses heads on the odd-numbered pairs and tests them on the
#: even-numbered ones, and the other way round.
WINOGRAD_PAIRS: tuple[tuple[str, str, str, str, str], ...] = (
    ("animal/street", _TIRED, _WIDE, "animal", "street"),
    _pair(
        "trophy/suitcase",
        "The trophy didn't fit into the suitcase because it was too {}",
        "big",
        "small",
    ),
    _pair(
        "table/doorway",
        "The table won't fit through the doorway because it is too {}",
        "wide",
        "narrow",
    ),
    _pair(
        "sculpture/shelf",
        "The sculpture rolled off the shelf because it wasn't {}",
        "anchored",
        "level",
    ),
    _pair("fish/worm", "The fish ate the worm. It was {}", "hungry", "tasty"),
    _pair(
        "cup/bottle", "I poured water from the bottle into the cup until it was {}", "full", "empty"
    ),
    _pair("pot/shelf", "I couldn't put the pot on the shelf because it was too {}", "tall", "high"),
    _pair("drain/hair", "The drain is clogged with hair. It has to be {}", "cleaned", "removed"),
    _pair(
        "cake/refrigerator",
        "I put the cake away in the refrigerator. It has a lot of {}",
        "butter",
        "leftovers",
    ),
    _pair(
        "truck/bus",
        "The delivery truck zoomed by the school bus because it was going so {}",
        "fast",
        "slow",
    ),
    _pair(
        "tree/roof",
        "The tree fell down and crashed through the roof of my house. Now I have to get it {}",
        "removed",
        "repaired",
    ),
    _pair(
        "rag/knife",
        "I used an old rag to clean the knife, and then I put it in the {}",
        "trash",
        "drawer",
    ),
    _pair(
        "chair/piano",
        "Sam pulled up a chair to the piano, but it was broken, so he had to {} instead",
        "stand",
        "sing",
    ),
    _pair(
        "ball/table",
        "The large ball crashed right through the table because it was made of {}",
        "steel",
        "styrofoam",
    ),
    _pair(
        "cat/dog",
        "The dog chased the cat, which ran up a tree. It waited at the {}",
        "top",
        "bottom",
    ),
    _pair(
        "sack/bag",
        "The sack of potatoes had been placed {} the bag of flour, so it had to be moved first",
        "above",
        "below",
    ),
)

#: A control for :data:`WINOGRAD_PAIRS`, in the same form: the adjective changes but the referent
#: does not (the animal both times), so a head that follows the referent should hardly move.
REFERENT_CONTROL: tuple[str, str, str, str, str] = (
    "control (tired/scared)",
    _TIRED,
    _TIRED.replace("tired", "scared"),
    "animal",
    "street",
)

#: The sentences of notebook 13's score statistics and similarity table: the animal pair, two
#: paraphrase pairs that share few words, and one unrelated sentence.
SIMILARITY_SENTENCES: tuple[str, ...] = (
    _TIRED,
    _WIDE,
    "A man is playing a guitar on the stage.",
    "Someone is strumming an instrument in front of an audience.",
    "The stock market fell sharply after the announcement.",
    "Shares dropped quickly once the news was released.",
    "My order was late and it was cold.",
)
