r"""Induction heads: a two-layer, attention-only causal transformer trained in numpy.

The task: sequences of random tokens whose second half repeats the first. From the middle on, a
model can predict the next token only by looking back: find the earlier copy of the current
token, and copy the token that followed it. Trained on such data, two heads appear (Elhage et
al. 2021; Olsson et al. 2022): a **previous-token head** in layer 0 (position :math:`i` attends
to :math:`i - 1` and writes "my predecessor was *a*" into the residual stream) and an
**induction head** in layer 1, whose keys read what the previous-token head wrote, so that the
current token *a* finds the position right after the earlier *a*.

The model, built from the collection's own pieces::

    x_0 = W_E[tokens] + W_pos[:T]                       (learned positions; or sinusoidal, or
                                                         RoPE on the queries and keys)
    x_{l+1} = x_l + concat_h(softmax(causal(q_h k_h^T / sqrt(d_head))) v_h) W_O[l]
    logits = x_L W_U

with :math:`q = x W_Q[l]`, :math:`k = x W_K[l]`, :math:`v = x W_V[l]` split into heads
(:func:`attnlib.split_heads`), the causal mask of :func:`attnlib.causal_mask` and the softmax of
:mod:`attnlib.softmax`. No MLP, no LayerNorm. The backward pass is written out by hand, line by
line against the forward pass, with the softmax line of :mod:`attnlib.gradients`; Adam is a few
lines, with a cosine decay of the step size.

Public functions (each checks its arguments and names the one that is wrong):

* :func:`train` -> :class:`Trained` (parameters, loss history, checkpoints);
* :func:`repeated_sequences`: the evaluation data, ``(n, 2 * half_length)``;
* :func:`head_scores`: previous-token and induction score of every head (of one pattern:
  :func:`pattern_scores`);
* :func:`loss_on_repeats`: the loss on the predictions an induction head can make, with heads
  ablated on request;
* :func:`run`: logits and attention weights; :func:`summary`: the figures of one trained model;
  :func:`training_curves`: its loss, its two heads' scores and their attention patterns at every
  checkpoint (what the induction lab shows).

The training data: each row holds random filler and a segment of random length repeated once;
the loss counts only the predictions inside the second copy. A trial made before this module
was written chose both: rows of exactly the evaluation format let a model find a shortcut
(heads that look a fixed distance back), and with the loss on every position no induction head
formed in 3,000 steps.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from ._validation import (
    as_float_array,
    check_allocation,
    check_finite,
    check_int,
    check_positive_real,
    check_probabilities,
)
from .gradients import _softmax_backward
from .heads import _merge_heads, _split_heads
from .masks import causal_mask
from .positions import rope, sinusoidal
from .softmax import _softmax_inplace

__all__ = [
    "POSITIONS",
    "Checkpoint",
    "Curves",
    "Params",
    "Run",
    "Summary",
    "Trained",
    "drop_step",
    "head_scores",
    "init_params",
    "loss_on_repeats",
    "pattern_scores",
    "repeated_sequences",
    "run",
    "summary",
    "train",
    "training_curves",
]

#: How word order enters the model: a trained table added to the embeddings, the fixed
#: sinusoidal table of notebook 09, or RoPE's rotation of the queries and keys.
POSITIONS: tuple[str, ...] = ("learned", "sinusoidal", "rope")

#: The names of the trained arrays of :class:`Params`, in order.
_ARRAYS = ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U")


# --- the parameters -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Params:
    """The weights of the model; they carry its sizes.

    Parameters
    ----------
    W_E : ndarray, shape (vocab, d_model)
        Token embedding: row ``t`` is the vector of token ``t``.
    W_pos : ndarray, shape (context, d_model), or None
        Learned position vectors (``positions="learned"``); None for the other schemes.
    W_Q, W_K, W_V : ndarray, shape (n_layers, d_model, n_heads * d_head)
        Per layer, the query, key and value projections; head ``h`` owns the columns
        ``[h * d_head, (h + 1) * d_head)`` (notebook 07).
    W_O : ndarray, shape (n_layers, n_heads * d_head, d_model)
        Per layer, the output projection of the concatenated heads.
    W_U : ndarray, shape (d_model, vocab)
        Unembedding: the residual stream's last state times ``W_U`` gives the logits.
    n_heads : int
        Heads per layer.
    context : int
        The longest sequence the model reads (the rows of ``W_pos`` when learned).
    positions : {"learned", "sinusoidal", "rope"}
        How positions enter: ``W_pos`` added to the embeddings, :func:`attnlib.positions.sinusoidal`
        added to them, or :func:`attnlib.positions.rope` applied to each head's queries and keys.

    Raises
    ------
    TypeError, ValueError
        If an array is not a finite real array of the shape its companions imply (the message
        names it and the shapes seen).
    """

    W_E: np.ndarray
    W_pos: np.ndarray | None
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_U: np.ndarray
    n_heads: int
    context: int
    positions: str = "learned"

    def __post_init__(self) -> None:
        _check_params_fields(self)

    @property
    def vocab(self) -> int:
        """The number of token ids, ``W_E.shape[0]``."""
        return self.W_E.shape[0]

    @property
    def d_model(self) -> int:
        """The width of the residual stream."""
        return self.W_E.shape[1]

    @property
    def n_layers(self) -> int:
        """The number of attention layers."""
        return self.W_Q.shape[0]

    @property
    def d_head(self) -> int:
        """The width of one head's queries, keys and values."""
        return self.W_Q.shape[2] // self.n_heads

    @property
    def n_parameters(self) -> int:
        """The number of trained numbers."""
        return sum(a.size for a in self.arrays().values())

    @property
    def dtype(self) -> np.dtype:
        """float64, or float32 (the arrays share it)."""
        return self.W_E.dtype

    def arrays(self) -> dict[str, np.ndarray]:
        """The trained arrays by name (``W_pos`` only when it is learned)."""
        return {n: getattr(self, n) for n in _ARRAYS if getattr(self, n) is not None}

    def astype(self, dtype: type | np.dtype) -> Params:
        """A copy whose arrays are cast to ``dtype`` (float32 or float64)."""
        return replace(self, **{n: a.astype(dtype) for n, a in self.arrays().items()})

    def __repr__(self) -> str:
        return (
            f"Params(vocab={self.vocab}, context={self.context}, d_model={self.d_model},"
            f" n_layers={self.n_layers}, n_heads={self.n_heads}, d_head={self.d_head},"
            f" positions={self.positions!r}, {self.n_parameters:,} parameters)"
        )


def _check_params_fields(p: Params) -> None:
    """Convert and check the fields of ``p`` in place (a frozen dataclass: object.__setattr__)."""
    n_heads = check_int(p.n_heads, "n_heads")
    context = check_int(p.context, "context", minimum=2)
    if p.positions not in POSITIONS:
        raise ValueError(f"positions must be one of {POSITIONS}; got positions={p.positions!r}")
    arrays = {}
    for name in _ARRAYS:
        value = getattr(p, name)
        if name == "W_pos" and value is None:
            if p.positions == "learned":
                raise ValueError(
                    "W_pos is None, but positions='learned' needs a (context, d_model) table"
                )
            continue
        arr = as_float_array(value, name)
        check_finite(arr, name)
        arrays[name] = arr
    # one dtype for all: float32 if every array is float32 (training computes in it), else 64
    dtype = np.result_type(*arrays.values())
    dtype = dtype if dtype == np.float32 else np.dtype(np.float64)
    arrays = {name: a.astype(dtype, copy=False) for name, a in arrays.items()}
    vocab, d_model = _shape_of(arrays["W_E"], "W_E", 2)
    n_layers, _, width = _shape_of(arrays["W_Q"], "W_Q", 3)
    if n_layers < 1 or width < 1 or width % n_heads:
        raise ValueError(
            f"W_Q must have shape (n_layers, d_model, n_heads * d_head) with n_layers >= 1 and"
            f" n_heads={n_heads} dividing its last axis; got W_Q shape {arrays['W_Q'].shape}"
        )
    expected = {
        "W_E": (vocab, d_model),
        "W_Q": (n_layers, d_model, width),
        "W_K": (n_layers, d_model, width),
        "W_V": (n_layers, d_model, width),
        "W_O": (n_layers, width, d_model),
        "W_U": (d_model, vocab),
        "W_pos": (context, d_model),
    }
    for name, arr in arrays.items():
        if arr.shape != expected[name]:
            raise ValueError(
                f"{name} must have shape {expected[name]} (vocab={vocab}, d_model={d_model},"
                f" n_layers={n_layers}, n_heads * d_head={width}, context={context}, from W_E and"
                f" W_Q); got {name} shape {arr.shape}"
            )
    if p.W_pos is not None and p.positions != "learned":
        raise ValueError(
            f"W_pos is given, but positions={p.positions!r} uses no learned table; pass W_pos=None"
        )
    paired = {"sinusoidal": ("d_model", d_model), "rope": ("d_head", width // n_heads)}
    if p.positions in paired and paired[p.positions][1] % 2:
        what, size = paired[p.positions]
        raise ValueError(
            f"positions={p.positions!r} works on pairs of coordinates and needs an even {what};"
            f" got {what}={size}"
        )
    for name, arr in arrays.items():
        object.__setattr__(p, name, arr)
    object.__setattr__(p, "n_heads", n_heads)
    object.__setattr__(p, "context", context)


def _shape_of(arr: np.ndarray, name: str, ndim: int) -> tuple[int, ...]:
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got {name} shape {arr.shape}")
    return arr.shape


def init_params(
    rng: np.random.Generator,
    *,
    vocab: int = 30,
    context: int = 32,
    d_model: int = 32,
    n_layers: int = 2,
    n_heads: int = 2,
    d_head: int = 16,
    positions: str = "learned",
) -> Params:
    """Random starting weights: normal entries of standard deviation ``1/sqrt(fan_in)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    vocab, context, d_model, n_layers, n_heads, d_head : int
        The sizes (see :class:`Params`); ``context`` >= 2.
    positions : {"learned", "sinusoidal", "rope"}, default "learned"

    Returns
    -------
    Params
        With these sizes; the position table only for ``positions="learned"``.
    """
    _check_rng(rng)
    sizes = _check_sizes(vocab, context, d_model, n_layers, n_heads, d_head, positions)
    vocab, context, d_model, n_layers, n_heads, d_head = sizes
    return _init_params(rng, vocab, context, d_model, n_layers, n_heads, d_head, positions)


def _init_params(
    rng: np.random.Generator,
    vocab: int,
    context: int,
    d_model: int,
    n_layers: int,
    n_heads: int,
    d_head: int,
    positions: str,
) -> Params:
    width = n_heads * d_head

    def normal(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return rng.standard_normal(shape) / math.sqrt(fan_in)

    return Params(
        W_E=normal((vocab, d_model), d_model),
        W_pos=normal((context, d_model), d_model) if positions == "learned" else None,
        W_Q=normal((n_layers, d_model, width), d_model),
        W_K=normal((n_layers, d_model, width), d_model),
        W_V=normal((n_layers, d_model, width), d_model),
        W_O=normal((n_layers, width, d_model), width),
        W_U=normal((d_model, vocab), d_model),
        n_heads=n_heads,
        context=context,
        positions=positions,
    )


# --- argument checks ----------------------------------------------------------------------------


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator, such as np.random.default_rng(0); got"
            f" {type(rng).__name__}"
        )
    return rng


def _check_sizes(
    vocab: object,
    context: object,
    d_model: object,
    n_layers: object,
    n_heads: object,
    d_head: object,
    positions: object,
) -> tuple[int, int, int, int, int, int]:
    sizes = (
        check_int(vocab, "vocab", minimum=2),
        check_int(context, "context", minimum=4),
        check_int(d_model, "d_model"),
        check_int(n_layers, "n_layers"),
        check_int(n_heads, "n_heads"),
        check_int(d_head, "d_head"),
    )
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {POSITIONS}; got positions={positions!r}")
    if positions == "sinusoidal" and sizes[2] % 2:
        raise ValueError(f"positions='sinusoidal' needs an even d_model; got d_model={sizes[2]}")
    if positions == "rope" and sizes[5] % 2:
        raise ValueError(f"positions='rope' needs an even d_head; got d_head={sizes[5]}")
    return sizes


def _check_params(params: object) -> Params:
    if isinstance(params, Trained):
        raise TypeError("params must be a Params; got a Trained record: pass trained.params")
    if not isinstance(params, Params):
        raise TypeError(
            f"params must be an attnlib.induction.Params (trained.params); got"
            f" {type(params).__name__}"
        )
    return params


def _check_tokens(tokens: ArrayLike, params: Params, *, repeated: bool) -> np.ndarray:
    """``tokens`` as an int array (n, T) of ids below the vocabulary that fits the context;
    with ``repeated``, of even length with the second half equal to the first."""
    arr = np.asarray(tokens)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"tokens must be an array of integer token ids; got dtype {arr.dtype} with shape"
            f" {arr.shape}"
        )
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
        raise ValueError(
            f"tokens must have shape (n, T), n >= 1 sequences of T >= 2 tokens; got shape"
            f" {arr.shape}"
        )
    if arr.shape[1] > params.context:
        raise ValueError(
            f"tokens has sequences of T={arr.shape[1]} tokens, longer than the model's context of"
            f" {params.context} (tokens shape {arr.shape})"
        )
    if arr.min() < 0 or arr.max() >= params.vocab:
        raise ValueError(
            f"tokens must hold ids 0 to vocab - 1 = {params.vocab - 1}; got ids from {arr.min()}"
            f" to {arr.max()} (tokens shape {arr.shape})"
        )
    if repeated:
        half = arr.shape[1] // 2
        odd = arr.shape[1] % 2
        differ = 0 if odd else int((arr[:, :half] != arr[:, half:]).any(axis=1).sum())
        if odd or differ:
            raise ValueError(
                f"tokens must be repeated sequences, shape (n, 2 * half_length) with the second"
                f" half equal to the first (repeated_sequences makes them); got shape"
                f" {arr.shape}" + (f", {differ} rows whose halves differ" if differ else "")
            )
    # the attention weights (n_layers, n, n_heads, T, T) in float64, kept for the scores
    n, T = arr.shape
    check_allocation(
        (params.n_layers, n, params.n_heads, T, T),
        np.float64,
        f"the attention weights (n_layers, n, n_heads, T, T) of tokens shape {arr.shape}",
    )
    return arr.astype(np.intp, copy=False)


def _check_ablate(ablate: object, params: Params) -> np.ndarray | None:
    """None, or the gates (n_layers, n_heads): 0 for each (layer, head) pair named, else 1."""
    if ablate is None:
        return None
    if isinstance(ablate, (str, bytes)) or not isinstance(ablate, Iterable):
        raise TypeError(
            f"ablate must be None or a list of (layer, head) pairs, such as [(1, 0)]; got"
            f" {ablate!r}"
        )
    gates = np.ones((params.n_layers, params.n_heads))
    for pair in ablate:
        if (
            not isinstance(pair, Sequence)
            or isinstance(pair, str)
            or len(pair) != 2
            or not all(
                isinstance(i, numbers.Integral) and not isinstance(i, (bool, np.bool_))
                for i in pair
            )
        ):
            raise TypeError(
                f"ablate must list (layer, head) pairs of two integers, such as [(1, 0)]; got"
                f" the entry {pair!r}"
            )
        layer, head = int(pair[0]), int(pair[1])
        if not (0 <= layer < params.n_layers and 0 <= head < params.n_heads):
            raise ValueError(
                f"ablate names ({layer}, {head}), but the model has layers 0 to"
                f" {params.n_layers - 1} and heads 0 to {params.n_heads - 1}"
            )
        gates[layer, head] = 0.0
    return gates


# --- the forward pass ---------------------------------------------------------------------------


class _Layer(NamedTuple):
    """What one layer's backward pass needs from its forward pass."""

    x: np.ndarray  # (n, T, d_model): the layer's input (the residual stream)
    q: np.ndarray  # (n, H, T, d_head): queries (rotated under RoPE)
    k: np.ndarray  # (n, H, T, d_head): keys (rotated under RoPE)
    v: np.ndarray  # (n, H, T, d_head)
    weights: np.ndarray  # (n, H, T, T)
    z: np.ndarray  # (n, T, H * d_head): the heads' outputs, merged (after the gates)


def _forward(
    p: Params, tokens: np.ndarray, gates: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, list[_Layer]]:
    """Logits (n, T, vocab), the last residual state (n, T, d_model) and each layer's record,
    for checked arguments. ``gates`` (n_layers, n_heads) multiplies each head's output."""
    T = tokens.shape[1]
    x = p.W_E[tokens]
    if p.positions == "learned":
        x = x + p.W_pos[:T]
    elif p.positions == "sinusoidal":
        x = x + sinusoidal(T, p.d_model).astype(x.dtype)
    mask = causal_mask(T)
    scale = 1.0 / math.sqrt(p.d_head)
    layers = []
    for layer in range(p.n_layers):
        q, k, v = (_split_heads(x @ W[layer], p.n_heads) for W in (p.W_Q, p.W_K, p.W_V))
        if p.positions == "rope":
            q, k = rope(q), rope(k)
        weights = _softmax_inplace(q @ np.swapaxes(k, -1, -2), mask=mask, scale=scale)
        heads = weights @ v
        if gates is not None:
            heads *= gates[layer][:, None, None]
        z = _merge_heads(heads)
        layers.append(_Layer(x, q, k, v, weights, z))
        x = x + z @ p.W_O[layer]
    return x @ p.W_U, x, layers


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _loss_and_gradients(
    p: Params, tokens: np.ndarray, counted: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """The mean cross-entropy of the counted next-token predictions, and its gradient with
    respect to every trained array of ``p``.

    ``tokens`` (n, T + 1): the model reads ``tokens[:, :-1]`` and predicts ``tokens[:, 1:]``;
    ``counted`` (n, T) is 1 for the predictions in the loss, else 0.
    """
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    counted = counted.astype(p.dtype, copy=False)
    logits, x_last, layers = _forward(p, inputs)
    log_p = _log_softmax(logits)
    chosen = np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]
    total = counted.sum()
    loss = -(chosen * counted).sum() / total

    # Backward, one line per forward line, last layer first.
    # logits = x_L W_U, cross-entropy: d logits = softmax(logits) - one_hot(target)
    d_logits = np.exp(log_p)
    np.put_along_axis(
        d_logits, targets[..., None], np.take_along_axis(d_logits, targets[..., None], -1) - 1, -1
    )
    d_logits *= (counted / total)[..., None]
    grads = {"W_U": _flat(x_last).T @ _flat(d_logits)}
    dx = d_logits @ p.W_U.T
    scale = 1.0 / math.sqrt(p.d_head)
    dW = {name: np.empty_like(getattr(p, name)) for name in ("W_Q", "W_K", "W_V", "W_O")}
    for layer in reversed(range(p.n_layers)):
        x, q, k, v, weights, z = layers[layer]
        # x_out = x + z W_O: the residual passes dx through unchanged, and
        dW["W_O"][layer] = _flat(z).T @ _flat(dx)
        d_heads = _split_heads(dx @ p.W_O[layer].T, p.n_heads)  # (n, H, T, d_head)
        # heads = weights v
        d_weights = d_heads @ np.swapaxes(v, -1, -2)
        dv = np.swapaxes(weights, -1, -2) @ d_heads
        # weights = softmax(scale * q k^T) on the causal mask (masked weights are 0 and stay 0)
        d_scores = scale * _softmax_backward(weights, d_weights)
        dq = d_scores @ k
        dk = np.swapaxes(d_scores, -1, -2) @ q
        if p.positions == "rope":  # a rotation's transpose turns back: rope at -position
            back = -np.arange(x.shape[1], dtype=np.float64)  # rope casts to the dtype of dq
            dq, dk = rope(dq, back), rope(dk, back)
        dx = dx.copy()
        for name, d in (("W_Q", dq), ("W_K", dk), ("W_V", dv)):  # q = x W_Q, ...
            d = _merge_heads(d)  # (n, T, H * d_head)
            dW[name][layer] = _flat(x).T @ _flat(d)
            dx += d @ getattr(p, name)[layer].T
    grads.update(dW)
    # x_0 = W_E[tokens] (+ W_pos): each token's row collects the gradient of its positions
    one_hot = np.zeros((inputs.size, p.vocab), dtype=p.dtype)
    one_hot[np.arange(inputs.size), inputs.ravel()] = 1.0
    grads["W_E"] = one_hot.T @ _flat(dx)
    if p.positions == "learned":
        grads["W_pos"] = np.zeros_like(p.W_pos)
        grads["W_pos"][: inputs.shape[1]] = dx.sum(axis=0)
    return float(loss), grads


def _flat(a: np.ndarray) -> np.ndarray:
    """(n, T, width) -> (n * T, width)."""
    return a.reshape(-1, a.shape[-1])


class Run(NamedTuple):
    """What :func:`run` returns.

    Attributes
    ----------
    logits : ndarray, shape (n, T, vocab)
        Row ``[b, i]`` predicts token ``i + 1`` of sequence ``b``.
    weights : ndarray, shape (n_layers, n, n_heads, T, T)
        Every head's attention weights; zero above the diagonal (causal).
    """

    logits: np.ndarray
    weights: np.ndarray


def run(params: Params, tokens: ArrayLike, ablate: Iterable | None = None) -> Run:
    """The model's logits and attention weights on ``tokens``.

    Parameters
    ----------
    params : Params
    tokens : array_like of int, shape (n, T)
        Token ids below ``params.vocab``, ``2 <= T <= params.context``.
    ablate : list of (layer, head) pairs, optional
        Heads whose output is zeroed (their weights are still computed and returned).

    Returns
    -------
    Run
        ``logits`` (n, T, vocab) and ``weights`` (n_layers, n, n_heads, T, T).
    """
    params = _check_params(params)
    tokens = _check_tokens(tokens, params, repeated=False)
    gates = _check_ablate(ablate, params)
    logits, _, layers = _forward(params, tokens, gates)
    return Run(logits, np.stack([layer.weights for layer in layers]))


# --- the data -----------------------------------------------------------------------------------


def repeated_sequences(
    rng: np.random.Generator, n: int, half_length: int, vocab: int
) -> np.ndarray:
    """Sequences of random tokens whose second half repeats the first: the evaluation data.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness (use a generator the training never saw).
    n : int
        Number of sequences (>= 1).
    half_length : int
        Tokens in each half (>= 1).
    vocab : int
        Tokens are drawn uniformly from ``0 .. vocab - 1`` (vocab >= 2).

    Returns
    -------
    ndarray of int, shape (n, 2 * half_length)
        ``tokens[:, half_length:] == tokens[:, :half_length]``.
    """
    _check_rng(rng)
    n = check_int(n, "n")
    half_length = check_int(half_length, "half_length")
    vocab = check_int(vocab, "vocab", minimum=2)
    check_allocation((n, 2 * half_length), np.int64, f"the tokens of n={n} sequences")
    first = rng.integers(0, vocab, size=(n, half_length))
    return np.concatenate([first, first], axis=1)


def _training_batch(
    rng: np.random.Generator, n: int, length: int, vocab: int, repeats: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Training rows (n, length) and the predictions counted in the loss (n, length - 1).

    Each row is random filler with one segment of random length ``L`` (from 4, or
    ``length // 2`` if that is less, to ``length // 2``) repeated straight after itself, at a
    random offset ``f``. The counted predictions are those
    made inside the second copy about its next token: positions ``f + L`` to ``f + 2L - 2``.
    Without ``repeats`` the rows are all random (the same predictions counted): the baseline.
    """
    tokens = rng.integers(0, vocab, size=(n, length))
    seg = rng.integers(min(4, length // 2), length // 2 + 1, size=(n, 1))
    start = (rng.random((n, 1)) * (length - 2 * seg + 1)).astype(np.intp)
    pos = np.arange(length)[None, :]
    if repeats:
        second = (pos >= start + seg) & (pos < start + 2 * seg)
        earlier = np.take_along_axis(tokens, np.clip(pos - seg, 0, None), axis=1)
        tokens = np.where(second, earlier, tokens)
    counted = (pos[:, :-1] >= start + seg) & (pos[:, :-1] <= start + 2 * seg - 2)
    return tokens, counted.astype(np.float64)


# --- training -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """The parameters after ``step`` steps of training (step 0: the random start)."""

    step: int
    params: Params


@dataclass(frozen=True, eq=False)
class Trained:
    """A trained model, its training curve and checkpoints.

    Attributes
    ----------
    params : Params
        The weights after the last step.
    half_length : int
        The half length of the evaluation sequences (the ``half_length`` of :func:`train`):
        pass it to :func:`repeated_sequences`.
    vocab : int
        The number of token ids.
    loss : ndarray, shape (steps,)
        The training loss at each step (on that step's batch, before its update).
    checkpoints : tuple of Checkpoint
        The parameters at the stored steps, in order, from step 0 (the random start) to the
        last step.
    seed : int
        The seed of ``np.random.default_rng`` that drew the start and every batch.
    settings : dict
        Every keyword of :func:`train`, so that ``train(seed, **settings)`` repeats the run.
    """

    params: Params
    half_length: int
    vocab: int
    loss: np.ndarray
    checkpoints: tuple[Checkpoint, ...]
    seed: int
    settings: dict = field(default_factory=dict)

    @property
    def steps(self) -> tuple[int, ...]:
        """The stored steps."""
        return tuple(c.step for c in self.checkpoints)

    def at(self, step: int) -> Params:
        """The parameters at the latest stored step <= ``step``."""
        step = check_int(step, "step", minimum=0)
        return [c for c in self.checkpoints if c.step <= step][-1].params

    def __repr__(self) -> str:
        return (
            f"Trained(seed={self.seed}, {len(self.loss)} steps, final loss"
            f" {self.loss[-20:].mean():.3f}, {len(self.checkpoints)} checkpoints, {self.params!r})"
        )


def train(
    seed: int,
    steps: int = 400,
    *,
    vocab: int = 30,
    context: int = 32,
    d_model: int = 32,
    n_layers: int = 2,
    n_heads: int = 2,
    d_head: int = 16,
    positions: str = "learned",
    batch_size: int = 16,
    learning_rate: float = 0.03,
    repeats: bool = True,
    checkpoint_every: int = 20,
    half_length: int = 12,
) -> Trained:
    r"""Train the model from ``np.random.default_rng(seed)``: Adam, cosine decay, one BLAS thread.

    Each step draws ``batch_size`` training rows of ``context + 1`` tokens (random filler
    around one segment of random length repeated once: see the module docstring), computes the
    mean cross-entropy of the predictions inside the second copy and its gradient (the backward
    pass by hand), and takes one Adam step (:math:`\beta = (0.9, 0.99)`) of size
    ``learning_rate * (1 + cos(pi t / steps)) / 2`` at step ``t``.

    Parameters
    ----------
    seed : int
        Seed of the one random generator (start and batches): the run is reproducible.
    steps : int, default 400
        Adam steps.
    vocab, context, d_model, n_layers, n_heads, d_head : int
        The sizes of the model (:class:`Params`): by default 30 tokens, a context of 32, width
        32, two layers of two heads of 16: 11,136 parameters.
    positions : {"learned", "sinusoidal", "rope"}, default "learned"
    batch_size : int, default 16
    learning_rate : float, default 0.03
        Adam's step size at the start (it decays to 0 along a cosine).
    repeats : bool, default True
        False trains the baseline: all-random rows, the same predictions counted, nothing to
        copy.
    checkpoint_every : int, default 20
        Store the parameters every this many steps (and at step 0 and the last step).
    half_length : int, default 12
        The half length of the evaluation sequences, recorded for the caller
        (``2 * half_length <= context``). Training does not use it: its segments have random
        lengths, 4 to ``context // 2``; 12 sits inside that range, clear of the context's end.

    Returns
    -------
    Trained
        With the final ``params``, ``half_length``, ``vocab``, the ``loss`` of every step and
        the ``checkpoints``.

    Notes
    -----
    Training computes in float32, which moves half the bytes of float64 and on this model takes
    about half the time; the parameters and checkpoints are returned in float64 (the same
    values). numpy's BLAS is limited to one thread while training (threadpoolctl): on matrices
    this small more threads gave no speed-up, and one thread keeps the run predictable on a
    shared machine (``benchmarks/induction_training.py`` measures both choices).
    Training is chaotic: the exact losses after the drop differ in their last digits from one
    CPU to another; the heads that form, and roughly when, do not.
    """
    seed = check_int(seed, "seed", minimum=0)
    steps = check_int(steps, "steps")
    sizes = _check_sizes(vocab, context, d_model, n_layers, n_heads, d_head, positions)
    vocab, context = sizes[0], sizes[1]
    batch_size = check_int(batch_size, "batch_size")
    learning_rate = check_positive_real(learning_rate, "learning_rate")
    if not isinstance(repeats, (bool, np.bool_)):
        raise TypeError(f"repeats must be True or False; got {repeats!r}")
    checkpoint_every = check_int(checkpoint_every, "checkpoint_every")
    half_length = check_int(half_length, "half_length", minimum=2)
    if 2 * half_length > context:
        raise ValueError(
            f"half_length={half_length} makes evaluation sequences of {2 * half_length} tokens,"
            f" longer than context={context}"
        )
    settings = {
        "steps": steps,
        "vocab": vocab,
        "context": context,
        "d_model": sizes[2],
        "n_layers": sizes[3],
        "n_heads": sizes[4],
        "d_head": sizes[5],
        "positions": positions,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "repeats": bool(repeats),
        "checkpoint_every": checkpoint_every,
        "half_length": half_length,
    }
    rng = np.random.default_rng(seed)
    params = _init_params(rng, *sizes, positions).astype(np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        params, loss, checkpoints = _adam(
            params, rng, steps, batch_size, learning_rate, bool(repeats), checkpoint_every
        )
    return Trained(params, half_length, vocab, loss, checkpoints, seed, settings)


def _adam(
    params: Params,
    rng: np.random.Generator,
    steps: int,
    batch_size: int,
    learning_rate: float,
    repeats: bool,
    checkpoint_every: int,
    betas: tuple[float, float] = (0.9, 0.99),
    eps: float = 1e-8,
) -> tuple[Params, np.ndarray, tuple[Checkpoint, ...]]:
    """Adam with a cosine decay of the step size; the arrays of ``params`` are updated in place
    (they are the caller's fresh copies), each checkpoint stores a float64 copy."""
    b1, b2 = betas
    arrays = params.arrays()
    m = {name: np.zeros_like(a) for name, a in arrays.items()}  # mean of the gradients
    s = {name: np.zeros_like(a) for name, a in arrays.items()}  # mean of their squares
    loss = np.empty(steps)
    checkpoints = [Checkpoint(0, _copy(params))]
    for t in range(1, steps + 1):
        tokens, counted = _training_batch(
            rng, batch_size, params.context + 1, params.vocab, repeats
        )
        loss[t - 1], grads = _loss_and_gradients(params, tokens, counted)
        lr = learning_rate * 0.5 * (1 + math.cos(math.pi * (t - 1) / steps))
        for name, a in arrays.items():
            g = grads[name]
            m[name] = b1 * m[name] + (1 - b1) * g
            s[name] = b2 * s[name] + (1 - b2) * g * g
            a -= lr * (m[name] / (1 - b1**t)) / (np.sqrt(s[name] / (1 - b2**t)) + eps)
        if t % checkpoint_every == 0 or t == steps:
            checkpoints.append(Checkpoint(t, _copy(params)))
    return _copy(params), loss, tuple(checkpoints)


def _copy(p: Params) -> Params:
    """A float64 copy (of the float32 values training computes with)."""
    return p.astype(np.float64)


# --- what is measured ---------------------------------------------------------------------------


def pattern_scores(weights: ArrayLike) -> dict[str, np.ndarray]:
    r"""The previous-token and induction score of attention patterns on repeated sequences.

    For a pattern :math:`A` of a sequence of :math:`T = 2h` tokens whose second half repeats
    the first (positions counted from 0): the **previous-token score** is the mean of
    :math:`A_{i, i-1}` over :math:`i = 1 .. 2h - 1`, and the **induction score** the mean of
    :math:`A_{i, i-h+1}` over :math:`i = h .. 2h - 1` (the weight on the token that followed
    the earlier copy of token :math:`i`).

    Parameters
    ----------
    weights : array_like, shape (..., T, T)
        Attention weights, rows summing to 1, ``T = 2h`` even.

    Returns
    -------
    dict
        ``"previous_token"`` and ``"induction"``, each an ndarray of shape ``(...)``, in [0, 1].
    """
    A = as_float_array(weights, "weights", min_ndim=2)
    T = A.shape[-1]
    if A.shape[-2] != T or T < 2 or T % 2:
        raise ValueError(
            f"weights must have shape (..., T, T) with T = 2h even, one row per query of a"
            f" repeated sequence; got shape {A.shape}"
        )
    check_probabilities(A, "weights")
    return _scores(A)


def _scores(weights: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`pattern_scores` of checked weights (..., T, T)."""
    T = weights.shape[-1]
    h = T // 2
    i = np.arange(1, T)
    j = np.arange(h, T)
    return {
        "previous_token": weights[..., i, i - 1].mean(axis=-1),
        "induction": weights[..., j, j - h + 1].mean(axis=-1),
    }


def head_scores(
    params: Params, tokens: ArrayLike, ablate: Iterable | None = None
) -> dict[str, np.ndarray]:
    r"""The previous-token and induction score of every head, on repeated sequences.

    With ``h`` the half length and positions counted from 0:

    * **previous-token score**: the mean attention weight from position :math:`i` to
      :math:`i - 1`, over :math:`i = 1 .. 2h - 1` and the sequences;
    * **induction score**: the mean weight from position :math:`i \ge h` to :math:`i - h + 1`,
      the token that followed the earlier copy of token :math:`i`.

    Both are means of attention weights, so they lie in [0, 1]. A head that attends evenly to
    every key scores about the mean of :math:`1/(i + 1)` (chance).

    Parameters
    ----------
    params : Params
    tokens : array_like of int, shape (n, 2 * h)
        Repeated sequences (:func:`repeated_sequences`), ``2 * h <= params.context``.
    ablate : list of (layer, head) pairs, optional
        Heads whose output is zeroed first (e.g. the previous-token head, to see what the
        induction head does without it).

    Returns
    -------
    dict
        ``"previous_token"`` and ``"induction"``, each an ndarray of shape
        ``(n_layers, n_heads)``.
    """
    params = _check_params(params)
    tokens = _check_tokens(tokens, params, repeated=True)
    gates = _check_ablate(ablate, params)
    _, _, layers = _forward(params, tokens, gates)
    return _mean_scores(layers)


def _mean_scores(layers: list[_Layer]) -> dict[str, np.ndarray]:
    """The scores of every head (n_layers, n_heads), averaged over the sequences."""
    per_sequence = [_scores(layer.weights) for layer in layers]  # each (n, n_heads)
    return {
        name: np.stack([s[name].mean(axis=0) for s in per_sequence])
        for name in ("previous_token", "induction")
    }


def _loss_on_repeats(p: Params, tokens: np.ndarray, gates: np.ndarray | None) -> float:
    return _repeat_loss(_forward(p, tokens, gates)[0], tokens)


def _repeat_loss(logits: np.ndarray, tokens: np.ndarray) -> float:
    """The loss on repeats from the logits (n, 2h, vocab) of the whole sequences: the
    predictions at h .. 2h - 2 (causal, so the last token changes none of them)."""
    h = tokens.shape[1] // 2
    log_p = _log_softmax(logits[:, h:-1])
    return float(-np.take_along_axis(log_p, tokens[:, h + 1 :, None], axis=-1).mean())


def loss_on_repeats(params: Params, tokens: ArrayLike, ablate: Iterable | None = None) -> float:
    """The mean cross-entropy of the predictions an induction head can make.

    Those are the predictions at positions ``h .. 2h - 2`` of each repeated sequence (of tokens
    ``h + 1 .. 2h - 1``); the first token of the second half cannot be predicted and is left
    out. Chance (a uniform guess) is ``ln(vocab)``.

    Parameters
    ----------
    params : Params
    tokens : array_like of int, shape (n, 2 * h)
        Repeated sequences (:func:`repeated_sequences`), ``2 * h <= params.context``, h >= 2.
    ablate : list of (layer, head) pairs, optional
        Heads whose output is zeroed: ``[(1, 0)]`` removes head 0 of layer 1.

    Returns
    -------
    float
        In nats.
    """
    params = _check_params(params)
    tokens = _check_tokens(tokens, params, repeated=True)
    if tokens.shape[1] < 4:
        raise ValueError(
            f"tokens must have a half length of at least 2 (some prediction to score); got"
            f" shape {tokens.shape}"
        )
    gates = _check_ablate(ablate, params)
    return _loss_on_repeats(params, tokens, gates)


def drop_step(loss: ArrayLike, window: int = 20) -> int | None:
    """The step of the sudden drop: where the training loss, averaged over ``window`` steps,
    first falls below half its starting value.

    Parameters
    ----------
    loss : array_like, shape (steps,)
        A training curve (``Trained.loss``: entry ``t - 1`` is the loss of step ``t``),
        starting near ``ln(vocab)``.
    window : int, default 20
        Steps averaged (the curve of small batches is noisy).

    Returns
    -------
    int or None
        The middle step of the first window whose mean is below half the mean of the first
        window (steps counted from 1); None if the loss never gets there.
    """
    loss = as_float_array(loss, "loss", min_ndim=1)
    window = check_int(window, "window")
    if loss.ndim != 1 or loss.size < window:
        raise ValueError(
            f"loss must be 1-D with at least window={window} steps; got shape {loss.shape}"
        )
    check_finite(loss, "loss")
    running = np.convolve(loss, np.ones(window) / window, mode="valid")
    below = np.flatnonzero(running < running[0] / 2)
    return int(below[0]) + 1 + window // 2 if below.size else None


class Summary(NamedTuple):
    """The figures of one trained model on held-out repeated sequences (:func:`summary`).

    Attributes
    ----------
    previous_token_head, induction_head : tuple of int
        (layer, head) of the best previous-token head of layer 0 and induction head of layer 1.
    previous_token_score, induction_score : float
        Their scores.
    loss : float
        :func:`loss_on_repeats` of the model.
    ablated_loss : float
        The same with the induction head zeroed.
    ablation_ratio : float
        ``ablated_loss / loss``.
    drop_step : int or None
        :func:`drop_step` of the training curve.
    formed : bool
        The induction score is at least 0.5 and the ablation at least doubles the loss.
    """

    previous_token_head: tuple[int, int]
    previous_token_score: float
    induction_head: tuple[int, int]
    induction_score: float
    loss: float
    ablated_loss: float
    ablation_ratio: float
    drop_step: int | None
    formed: bool


#: The induction score a head must reach, and the factor by which zeroing it must raise the
#: loss on repeats, for :func:`summary` to count the heads as formed.
FORMED_SCORE, FORMED_RATIO = 0.5, 2.0


def summary(trained: Trained, tokens: ArrayLike) -> Summary:
    """Did the heads form? The best layer-0 previous-token head and layer-1 induction head,
    their scores, and the loss on repeats with and without the induction head.

    Parameters
    ----------
    trained : Trained
        A model of at least two layers.
    tokens : array_like of int, shape (n, 2 * h)
        Held-out repeated sequences.

    Returns
    -------
    Summary
    """
    if not isinstance(trained, Trained):
        raise TypeError(
            f"trained must be a Trained record (from train); got {type(trained).__name__}"
        )
    p = trained.params
    if p.n_layers < 2:
        raise ValueError(f"summary needs a model of at least 2 layers; got n_layers={p.n_layers}")
    tokens = _check_tokens(tokens, p, repeated=True)
    logits, _, layers = _forward(p, tokens)
    scores = _mean_scores(layers)
    prev = (0, int(np.argmax(scores["previous_token"][0])))
    ind = (1, int(np.argmax(scores["induction"][1])))
    loss = _repeat_loss(logits, tokens)
    ablated = _loss_on_repeats(p, tokens, _check_ablate([ind], p))
    score = float(scores["induction"][ind])
    return Summary(
        prev,
        float(scores["previous_token"][prev]),
        ind,
        score,
        loss,
        ablated,
        ablated / loss,
        drop_step(trained.loss) if trained.loss.size >= 20 else None,
        bool(score >= FORMED_SCORE and ablated >= FORMED_RATIO * loss),
    )


class Curves(NamedTuple):
    """The two heads' scores and the held-out loss at every checkpoint (:func:`training_curves`).

    Attributes
    ----------
    steps : ndarray of int, shape (n_checkpoints,)
        The stored steps, from 0.
    loss_on_repeats : ndarray, shape (n_checkpoints,)
        :func:`loss_on_repeats` at each stored step.
    heads : tuple of (int, int)
        (layer, head) of the previous-token head and the induction head of the final model.
    previous_token, induction : ndarray, shape (n_checkpoints,)
        Their scores at each stored step.
    patterns : ndarray, shape (n_checkpoints, 2, 2h, 2h)
        The two heads' attention weights on the first held-out sequence at each stored step
        (what the induction lab shows).
    """

    steps: np.ndarray
    loss_on_repeats: np.ndarray
    heads: tuple[tuple[int, int], tuple[int, int]]
    previous_token: np.ndarray
    induction: np.ndarray
    patterns: np.ndarray


def training_curves(trained: Trained, tokens: ArrayLike) -> Curves:
    """The loss on repeats and the scores of the final model's two heads, checkpoint by
    checkpoint: how the heads formed.

    Parameters
    ----------
    trained : Trained
        A model of at least two layers.
    tokens : array_like of int, shape (n, 2 * h)
        Held-out repeated sequences.

    Returns
    -------
    Curves
    """
    final = summary(trained, tokens)  # checks trained and tokens
    tokens = np.asarray(tokens).astype(np.intp)
    heads = (final.previous_token_head, final.induction_head)
    losses, previous, induced, patterns = [], [], [], []
    for checkpoint in trained.checkpoints:
        logits, _, layers = _forward(checkpoint.params, tokens)
        scores = _mean_scores(layers)
        previous.append(scores["previous_token"][heads[0]])
        induced.append(scores["induction"][heads[1]])
        losses.append(_repeat_loss(logits, tokens))
        patterns.append([layers[layer].weights[0, head] for layer, head in heads])
    return Curves(
        np.array(trained.steps),
        np.array(losses),
        heads,
        np.array(previous),
        np.array(induced),
        np.array(patterns),
    )
