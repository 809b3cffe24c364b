r"""Does a head follow what a pronoun refers to? Shifts, ranks and ablations over sentence pairs.

A *referent pair* is ``(name, first, second, noun1, noun2)``: two sentences that differ in one
word, such that the pronoun (``"it"``) refers to ``noun1`` in ``first`` and to ``noun2`` in
``second`` (:data:`attnlib.examples.WINOGRAD_PAIRS`). Three measures, each for every head:

* the **preference** of the pronoun's query for ``noun1`` over ``noun2`` in one sentence,
  :math:`a_{it,noun1} - a_{it,noun2}` (a difference of attention weights);
* the **shift** of a pair, the preference in ``first`` minus the preference in ``second``: a
  head that follows the referent shifts towards it (> 0); a head that ignores the sentence's last
  word does not move (0);
* the **leaning** of the pronoun's vector, the same difference computed on the model's output
  vectors instead of its attention weights, :math:`\cos(h_{it}, h_{noun1}) - \cos(h_{it},
  h_{noun2})` in ``first`` minus the same in ``second``, and how it changes when one head is
  removed (:func:`ablated_leanings`, with :meth:`MiniLM.forward`'s ``head_mask``): the causal
  test of a head.

:func:`head_ranks` ranks the 72 heads of a pair against each other (1 = the largest shift).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_finite
from ..masks import padding_mask
from .minilm import MiniLM

__all__ = [
    "ablated_leanings",
    "head_percentiles",
    "head_ranks",
    "leanings",
    "pair_positions",
    "preference",
    "referent_shifts",
]

#: The default pronoun of the pairs.
PRONOUN = "it"


def preference(weights: ArrayLike, query: int, first: int, second: int) -> np.ndarray:
    """How much more the query attends to key ``first`` than to key ``second``, in every head.

    Parameters
    ----------
    weights : array_like, shape (..., T, T)
        Attention weights, e.g. one sentence's ``(n_layers, n_heads, T, T)``.
    query, first, second : int
        Token positions in ``0 .. T - 1``: the pronoun and the two nouns.

    Returns
    -------
    ndarray, shape (...)
        ``weights[..., query, first] - weights[..., query, second]``, in float64.
    """
    weights = as_float_array(weights, "weights", min_ndim=2)
    T = weights.shape[-1]
    if weights.shape[-2] != T:
        raise ValueError(f"weights must have shape (..., T, T); got shape {weights.shape}")
    for name, position in (("query", query), ("first", first), ("second", second)):
        if isinstance(position, bool) or not isinstance(position, numbers.Integral):
            raise TypeError(f"{name} must be an integer token position; got {position!r}")
        if not 0 <= position < T:
            raise ValueError(f"{name}={position} is not a token position of T={T} tokens")
    weights = weights.astype(np.float64, copy=False)
    return weights[..., query, first] - weights[..., query, second]


def pair_positions(
    tokens: Sequence[str], words: Sequence[str], sentence: str = "the sentence"
) -> list[int]:
    """The position of each word among the tokens, checking that each occurs exactly once.

    Parameters
    ----------
    tokens : sequence of str
        One sentence's WordPiece tokens (lower case, ``[CLS] ... [SEP]``).
    words : sequence of str
        E.g. ``("it", "animal", "street")``; compared in lower case.
    sentence : str
        Named in the error message.

    Returns
    -------
    list of int
    """
    tokens = list(tokens)
    positions = []
    for word in words:
        found = [i for i, token in enumerate(tokens) if token == word.lower()]
        if len(found) != 1:
            raise ValueError(
                f"{word!r} must be exactly one token of {sentence!r}, so that its position is"
                f" unambiguous; it is {len(found)} of the tokens {tokens}"
            )
        positions.extend(found)
    return positions


def _check_pairs(pairs: object) -> list[tuple[str, str, str, str, str]]:
    if isinstance(pairs, tuple) and len(pairs) == 5 and all(isinstance(p, str) for p in pairs):
        raise TypeError(
            "pairs must be a sequence of pairs; got one pair. Wrap it in a list: [pair]"
        )
    try:
        items = list(pairs)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            "pairs must be a sequence of (name, first, second, noun1, noun2) tuples of strings;"
            f" got {type(pairs).__name__}"
        ) from None
    if not items:
        raise ValueError("pairs is empty: give at least one (name, first, second, noun1, noun2)")
    for i, pair in enumerate(items):
        if not (
            isinstance(pair, Sequence)
            and len(pair) == 5
            and all(isinstance(part, str) for part in pair)
        ):
            raise TypeError(
                f"pairs[{i}] must be a (name, first, second, noun1, noun2) tuple of five strings;"
                f" got {pair!r}"
            )
    return [tuple(pair) for pair in items]


def _check_model(model: object) -> MiniLM:
    if not isinstance(model, MiniLM):
        raise TypeError(
            f"model must be a MiniLM (from attnlib.pretrained.load_minilm()); got"
            f" {type(model).__name__}"
        )
    return model


def _run_pairs(model: MiniLM, pairs: list, pronoun: str, head_mask: ArrayLike | None = None):
    """One forward pass over every sentence of the pairs: the encoding and, per sentence, the
    positions of (pronoun, noun1, noun2)."""
    sentences = [s for _, first, second, _, _ in pairs for s in (first, second)]
    encoding = model.run(sentences, head_mask=head_mask)
    positions = []
    for k, (_, first, second, noun1, noun2) in enumerate(pairs):
        for j, sentence in enumerate((first, second)):
            tokens = encoding.tokens[2 * k + j]
            positions.append(pair_positions(tokens, (pronoun, noun1, noun2), sentence))
    return encoding, np.array(positions)


def referent_shifts(
    model: MiniLM, pairs: Sequence[Sequence[str]], pronoun: str = PRONOUN
) -> np.ndarray:
    """The shift of every head, pair by pair: the preference in ``first`` minus in ``second``.

    Parameters
    ----------
    model : MiniLM
    pairs : sequence of (name, first, second, noun1, noun2)
        E.g. :data:`attnlib.examples.WINOGRAD_PAIRS`. In each sentence the pronoun and both nouns
        must be exactly one token each.
    pronoun : str, default "it"

    Returns
    -------
    ndarray of float64, shape (n_pairs, n_layers, n_heads)
        ``> 0``: the head moves towards the referent as the sentence changes.
    """
    model, pairs = _check_model(model), _check_pairs(pairs)
    encoding, positions = _run_pairs(model, pairs, pronoun)
    W = encoding.weights  # (n_layers, 2 * n_pairs, n_heads, T, T)
    prefer = np.stack(
        [preference(W[:, b], *positions[b]) for b in range(len(positions))]
    )  # (2 * n_pairs, n_layers, n_heads)
    return prefer[0::2] - prefer[1::2]


def head_ranks(values: ArrayLike, tie: float = 1e-3) -> np.ndarray:
    """Rank every head against all heads of its pair: 1 = the largest value.

    A head's rank is one more than the number of heads whose value exceeds its own by more than
    ``tie``: values closer than ``tie`` share a rank, so that a difference of float32 rounding
    (about 1e-6 for attention weights) cannot reorder the heads.

    Parameters
    ----------
    values : array_like, shape (..., n_layers, n_heads)
        E.g. the shifts of :func:`referent_shifts`, (n_pairs, 6, 12).
    tie : float, default 1e-3
        Differences up to this size count as ties (here: a tenth of a percentage point of
        attention weight).

    Returns
    -------
    ndarray of int64, shape (..., n_layers, n_heads)
        Ranks in ``1 .. n_layers * n_heads``.
    """
    values = _check_values(values, tie)
    flat = values.reshape(*values.shape[:-2], -1)  # (..., n_layers * n_heads)
    above = flat[..., None, :] > flat[..., :, None] + tie  # (..., head, other head)
    return (1 + above.sum(axis=-1)).reshape(values.shape)


def head_percentiles(values: ArrayLike, tie: float = 1e-3) -> np.ndarray:
    """The share of the other heads of its pair that each head beats by more than ``tie``.

    Parameters
    ----------
    values : array_like, shape (..., n_layers, n_heads)
    tie : float, default 1e-3
        As in :func:`head_ranks`.

    Returns
    -------
    ndarray of float64, shape (..., n_layers, n_heads)
        In ``[0, 1]``: 1 for a head above all others, 0 for one above none. Without ties it is
        ``(n - rank) / (n - 1)`` for ``n = n_layers * n_heads`` heads.
    """
    values = _check_values(values, tie)
    flat = values.reshape(*values.shape[:-2], -1)
    below = flat[..., None, :] < flat[..., :, None] - tie  # (..., head, other head)
    return (below.sum(axis=-1) / (flat.shape[-1] - 1)).reshape(values.shape)


def _check_values(values: ArrayLike, tie: object) -> np.ndarray:
    values = as_float_array(values, "values", min_ndim=2)
    check_finite(values, "values")
    if isinstance(tie, bool) or not isinstance(tie, numbers.Real) or not 0 <= tie < np.inf:
        raise ValueError(f"tie must be a finite number >= 0; got tie={tie!r}")
    if values.shape[-1] * values.shape[-2] < 2:
        raise ValueError(f"values must hold at least two heads to rank; got shape {values.shape}")
    return values


def _leaning(hidden: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """cos(h_it, h_noun1) - cos(h_it, h_noun2) for every sentence; hidden (B, T, d), positions
    (B, 3) -> (B,), float64."""
    rows = np.arange(len(positions))[:, None]
    h = hidden[rows, positions].astype(np.float64)  # (B, 3, d): pronoun, noun1, noun2
    h /= np.linalg.norm(h, axis=-1, keepdims=True)
    return np.einsum("bd,bd->b", h[:, 0], h[:, 1]) - np.einsum("bd,bd->b", h[:, 0], h[:, 2])


def leanings(
    model: MiniLM,
    pairs: Sequence[Sequence[str]],
    pronoun: str = PRONOUN,
    head_mask: ArrayLike | None = None,
) -> np.ndarray:
    r"""How much the pronoun's vector leans towards its referent, pair by pair and layer by layer.

    In each sentence, :math:`\cos(h_{it}, h_{noun1}) - \cos(h_{it}, h_{noun2})` on the token
    vectors of one hidden state; the leaning of a pair is that of ``first`` minus that of
    ``second``. ``> 0``: the vector of "it" moves towards the noun it refers to.

    Parameters
    ----------
    model : MiniLM
    pairs : sequence of (name, first, second, noun1, noun2)
    pronoun : str, default "it"
    head_mask : array_like of float, shape (n_layers, n_heads), optional
        Passed to :meth:`MiniLM.run`: 0 removes a head.

    Returns
    -------
    ndarray of float64, shape (n_layers + 1, n_pairs)
        Row 0: the embedding layer's output (the input of layer 0); row ``l + 1``: the output
        of layer ``l``; row -1: the model's last vectors.
    """
    model, pairs = _check_model(model), _check_pairs(pairs)
    encoding, positions = _run_pairs(model, pairs, pronoun, head_mask)
    lean = np.stack([_leaning(hidden, positions) for hidden in encoding.hidden])
    return lean[:, 0::2] - lean[:, 1::2]


def ablated_leanings(
    model: MiniLM, pairs: Sequence[Sequence[str]], pronoun: str = PRONOUN
) -> np.ndarray:
    """The last layer's leaning of each pair with one head removed, for every head in turn.

    Removing head ``h`` of layer ``l`` sets its output to zero before ``W_O`` (``head_mask``
    of :meth:`MiniLM.forward`); the layers below ``l`` are unchanged, so their hidden states
    are reused and only layers ``l`` to the last are run again, the 12 heads of a layer in one
    batch: the same numbers as the last row of :func:`leanings` with that ``head_mask``, to
    float32 rounding.

    Parameters
    ----------
    model : MiniLM
    pairs : sequence of (name, first, second, noun1, noun2)
    pronoun : str, default "it"

    Returns
    -------
    ndarray of float64, shape (n_layers, n_heads, n_pairs)
        Entry ``[l, h, k]``: the leaning of pair ``k`` without head ``h`` of layer ``l``.
    """
    model, pairs = _check_model(model), _check_pairs(pairs)
    encoding, positions = _run_pairs(model, pairs, pronoun)
    c = model.config
    B, T = encoding.ids.shape
    H = c.n_heads
    # the 12 ablations of a layer run as one batch of 12 copies of the sentences, copy h without
    # head h: (H * B, ...) rows, head-major
    key_mask = np.tile(padding_mask(encoding.lengths, T).reshape(B, 1, 1, T), (H, 1, 1, 1))
    keep = np.repeat(1 - np.eye(H, dtype=np.float32), B, axis=0)  # (H * B, H)
    result = np.empty((c.n_layers, H, len(pairs)))
    for layer in range(c.n_layers):
        x = np.tile(encoding.hidden[layer], (H, 1, 1))  # (H * B, T, d_model)
        for above in range(layer, c.n_layers):
            x, _ = model.encoder_layer(x, above, key_mask, keep if above == layer else None)
        lean = _leaning(x, np.tile(positions, (H, 1))).reshape(H, B)
        result[layer] = lean[:, 0::2] - lean[:, 1::2]
    return result
