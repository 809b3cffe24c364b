"""The trained-model lab: type a sentence, pick a layer, a head and a token; see real attention.

Left, the (T, T) attention weights of one head of all-MiniLM-L6-v2 on your sentence, with the
chosen token's row outlined; right, that row as bars, one per key. Above the picture, a caption
names the keys the token attends to most. The controls are the sentence (a text box with a few
suggestions: type any sentence of up to ``MAX_TOKENS`` tokens and press Enter), the layer,
the head and the token.

A new sentence is encoded once by the numpy model (:mod:`attnlib.pretrained`, tens of
milliseconds) and its weights of every layer and head are kept in an :class:`AttentionCache`; a
move of the layer, head or token slider then only recolours the picture. The token labels are
static parts of the figure: the lab caches one background per sentence (``static_key``), so a
sentence seen before redraws fast too.

The numbers come from :func:`update_trained_view`, a plain function, which is how the tests drive
the lab without a browser. The lab starts on layer 4, head 0 with the query *it*: the one head
whose preference between the two nouns clearly flips with the referent in notebook 13's
sentence pair. Without the model (no cached copy, no network) the lab shows the few lines of
:class:`attnlib.pretrained.ModelNotAvailableError` in its place instead of raising, so a page of
several labs (the lab bench under voila) still shows the others.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._validation import check_int
from ..liveview import Lab
from ..pictures.cell_mesh import cell_mesh, set_cell_colours, weight_colorbar
from ..pictures.heatmap import attention_axes, token_ticks

__all__ = [
    "LABEL_CHARS",
    "MAX_TOKENS",
    "START_HEAD",
    "START_LAYER",
    "SUGGESTED_SENTENCES",
    "TITLE",
    "AttentionCache",
    "model_missing_note",
    "trained_attention_caption",
    "trained_attention_lab",
    "update_trained_view",
]

#: The longest sentence the lab draws, in tokens including [CLS] and [SEP]: as many token labels
#: of 10 px (the labs' floor is 9.5 px) as fit side by side on each axis without touching.
MAX_TOKENS = 20

#: The longest token label drawn whole; a longer one is cut to this length, ending in "…" (the
#: token slider and the caption name it in full).
LABEL_CHARS = 10

#: The sentences offered in the text box (any other sentence can be typed), as notebook 13 checks
#: them: two pairs in one frame whose last word moves the referent of *it* from the first noun to
#: the second (animal/street, dog/road: a few heads shift their weight with it), a control whose
#: word changes but whose referent stays (tired/scared: the animal both times), and a pair in
#: another frame (trophy/suitcase), on which none of those heads shifts.
SUGGESTED_SENTENCES: tuple[str, ...] = (
    "The animal didn't cross the street because it was too tired",
    "The animal didn't cross the street because it was too wide",
    "The dog didn't cross the road because it was too tired",
    "The dog didn't cross the road because it was too wide",
    "The animal didn't cross the street because it was too scared",
    "The trophy didn't fit into the suitcase because it was too big",
    "The trophy didn't fit into the suitcase because it was too small",
)
#: The head the lab starts on: layer 4, head 0 (notebook 13's clear flip with the referent).
START_LAYER, START_HEAD = 4, 0
#: The lab's title line.
TITLE = "Attention in a trained model: all-MiniLM-L6-v2, any sentence, any head"

_CMAP = colormaps["Blues"]
_BAR = "#1f77b4"
_EMPTY = (1.0, 1.0, 1.0, 0.0)


class AttentionCache:
    """Every layer's and head's attention weights per sentence, encoded once by the model.

    Parameters
    ----------
    model : attnlib.pretrained.MiniLM
        Anything with ``attention(sentence) -> (tokens, weights)``.
    size : int, default 64
        Sentences kept; the least recently used is dropped first.

    Attributes
    ----------
    encodes : int
        How many times the model was run (tests use it to see that a cached sentence is not
        encoded again).
    """

    def __init__(self, model: Any, size: int = 64) -> None:
        self.model = model
        self.size = check_int(size, "size")
        self.encodes = 0
        self._entries: OrderedDict[str, tuple[tuple[str, ...], np.ndarray]] = OrderedDict()

    def __call__(self, sentence: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The tokens of ``sentence`` and its weights, shape (n_layers, n_heads, T, T)."""
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a string; got {type(sentence).__name__}")
        entry = self._entries.get(sentence)
        if entry is None:
            tokens, weights = self.model.attention(sentence)
            self.encodes += 1
            if len(tokens) > MAX_TOKENS:
                raise ValueError(
                    f"the sentence has {len(tokens)} tokens; the lab draws at most {MAX_TOKENS}"
                    f" (including [CLS] and [SEP]): shorten it"
                )
            entry = (tuple(tokens), weights)
            self._entries[sentence] = entry
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(sentence)
        return entry


def _make_view(figure: Figure) -> tuple[dict[str, Any], list[Artist]]:
    """Build the two panels once, for up to MAX_TOKENS tokens; return the animated artists.

    The heat map is one mesh of MAX_TOKENS x MAX_TOKENS cells, of which a sentence of T tokens
    colours the first T x T and sets the axis limits to them; the bars are one PolyCollection
    with one rectangle per token.
    """
    n = MAX_TOKENS
    ax_map = figure.add_axes((0.12, 0.04, 0.36, 0.72))
    ax_bar = figure.add_axes((0.58, 0.2, 0.4, 0.62))
    mesh = cell_mesh(ax_map, n)  # a sentence sets the limits to its T x T cells
    attention_axes(ax_map)
    row_box = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor="crimson", linewidth=2.0)
    ax_map.add_patch(row_box)
    weight_colorbar(figure, ax_map, _CMAP)

    # All bars are one collection of rectangles: one draw call instead of one per bar.
    bars = PolyCollection([], facecolors=_BAR, edgecolors="none")
    ax_bar.add_collection(bars, autolim=False)
    ax_bar.set_ylim(0, 1.0)
    ax_bar.set_ylabel("attention weight")
    ax_bar.set_title("the outlined row: how much the token attends to each key", fontsize=10)
    ax_bar.grid(axis="y", alpha=0.3)
    view = {
        "ax_map": ax_map,
        "ax_bar": ax_bar,
        "mesh": mesh,
        "row_box": row_box,
        "bars": bars,
        "tokens": None,
    }
    return view, [mesh, row_box, bars]


def _bar_outlines(heights: np.ndarray, width: float = 0.75) -> np.ndarray:
    """Rectangles for bars of these heights at x = 0, 1, ...: shape (n, 4, 2) corner points."""
    x = np.arange(len(heights))[:, None] + np.array([-0.5, -0.5, 0.5, 0.5]) * width
    y = np.zeros((len(heights), 4))
    y[:, 1:3] = np.asarray(heights)[:, None]
    return np.stack([x, y], axis=-1)


def _set_tokens(view: dict[str, Any], tokens: tuple[str, ...]) -> None:
    """Label the axes with the sentence's tokens and fit the limits to them (static parts)."""
    if tokens == view["tokens"]:
        return
    T = len(tokens)
    ax_map, ax_bar = view["ax_map"], view["ax_bar"]
    labels = [tok if len(tok) <= LABEL_CHARS else tok[: LABEL_CHARS - 1] + "…" for tok in tokens]
    token_ticks(ax_map, labels)
    ax_map.set_xlim(-0.5, T - 0.5)
    ax_map.set_ylim(T - 0.5, -0.5)
    ax_bar.set_xticks(
        range(T), labels, rotation=50, ha="right", rotation_mode="anchor", fontsize=10
    )
    ax_bar.set_xlim(-0.6, T - 0.4)
    view["row_box"].set_width(T)
    view["tokens"] = tokens


def _check_layer_head(layer: Any, head: Any, weights: np.ndarray) -> tuple[int, int]:
    """``layer`` and ``head`` as ints inside ``weights``' (n_layers, n_heads, T, T), or raise."""
    n_layers, n_heads = weights.shape[:2]
    layer = check_int(layer, "layer", minimum=0)
    head = check_int(head, "head", minimum=0)
    if layer >= n_layers or head >= n_heads:
        raise ValueError(
            f"layer must be in [0, {n_layers - 1}] and head in [0, {n_heads - 1}]; got"
            f" layer={layer}, head={head}"
        )
    return layer, head


def update_trained_view(
    view: dict[str, Any],
    *,
    cache: AttentionCache,
    sentence: str,
    layer: int,
    head: int,
    token: int,
) -> dict[str, Any]:
    """Draw one head's weights on a sentence, with one token's row outlined and as bars.

    Parameters
    ----------
    view : dict
        What ``_make_view`` built.
    cache : AttentionCache
        Encodes a sentence the first time it is seen.
    sentence : str
    layer, head : int
        ``0 <= layer < n_layers``, ``0 <= head < n_heads``.
    token : int
        The query token, ``0 <= token < T``; a larger index (left from a longer sentence) is
        clamped to the last token.

    Returns
    -------
    dict
        ``tokens`` (T,), ``weights`` (T, T) of this head, ``row`` (T,), ``layer``, ``head``,
        ``token`` (as drawn), ``top`` (the three keys with the largest weights, as
        ``(index, token, weight)``) and ``entropy`` (of the row, in nats).
    """
    tokens, all_weights = cache(sentence)
    layer, head = _check_layer_head(layer, head, all_weights)
    T = len(tokens)
    token = min(check_int(token, "token", minimum=0), T - 1)
    weights = all_weights[layer, head]
    row = weights[token]

    _set_tokens(view, tokens)
    colours = np.empty((MAX_TOKENS, MAX_TOKENS, 4))
    colours[:] = _EMPTY
    colours[:T, :T] = _CMAP(weights)
    set_cell_colours(view["mesh"], colours)
    view["row_box"].set_y(token - 0.5)
    view["bars"].set_verts(_bar_outlines(row))
    top = [(int(j), tokens[j], float(row[j])) for j in np.argsort(row)[::-1][:3]]
    entropy = float(-(row * np.log(np.maximum(row, 1e-30))).sum())
    return {
        "tokens": tokens,
        "weights": weights,
        "row": row,
        "layer": layer,
        "head": head,
        "token": token,
        "top": top,
        "entropy": entropy,
    }


def trained_attention_caption(state: dict[str, Any]) -> str:
    """The lab's line of text: the chosen token, its strongest keys and the row's entropy."""
    tokens = state["tokens"]
    keys = ", ".join(f"{tok!r} {w:.2f}" for _, tok, w in state["top"])
    return (
        f"layer {state['layer']}, head {state['head']}: {tokens[state['token']]!r} attends most"
        f" to {keys}\nentropy of the row {state['entropy']:.2f} nats (uniform over"
        f" {len(tokens)} tokens: {np.log(len(tokens)):.2f}; one-hot: 0)"
    )


def _token_follower(cache: AttentionCache) -> Callable[[dict], None]:
    """The lab's ``sync_controls``: the token slider lists the tokens of the sentence shown."""

    def sync_tokens(controls: dict) -> None:
        tokens, _ = cache(controls["sentence"].value)  # a sentence the model refuses raises
        slider = controls["token"]
        options = tuple((f"{i}: {tok}", i) for i, tok in enumerate(tokens))
        if tuple(slider.options) != options:
            old = slider.value if slider.value is not None else 0
            word = {i: label for label, i in slider.options}.get(old, "").split(": ", 1)[-1]
            # the same word if the new sentence has it ("it" stays "it"), else the same position
            keep = tokens.index(word) if word in tokens else min(old, len(tokens) - 1)
            with slider.hold_sync():  # one message: the browser never sees the old index
                slider.options = options  # with the new, possibly shorter, options
                slider.value = keep

    return sync_tokens


def model_missing_note(error: Exception) -> widgets.HTML:
    """What the lab shows in its place when the model cannot be had: the error's few lines
    (what is missing, why, the command that fetches it) under the lab's title."""
    note = widgets.HTML(
        f"<b>{html.escape(TITLE)}</b>"
        '<div style="color:#b00020">This lab needs the model, and it is not here:</div>'
        f"<pre>{html.escape(str(error))}</pre>"
        "<div>Then run this cell again (under voila: reload the page).</div>"
    )
    note.add_class("attnlib-lab-missing")
    return note


def trained_attention_lab(
    model: Any = None,
    sentence: str = SUGGESTED_SENTENCES[0],
    layer: int = START_LAYER,
    head: int = START_HEAD,
    token: int | str | None = "it",
    present: bool = False,
) -> Lab | widgets.HTML:
    """A live lab: a sentence, a layer, a head and a token of all-MiniLM-L6-v2's attention.

    Parameters
    ----------
    model : attnlib.pretrained.MiniLM, optional
        Default: :func:`attnlib.pretrained.load_minilm` (about 1 s; downloads once). If it raises
        :class:`~attnlib.pretrained.ModelNotAvailableError`, the lab returns
        :func:`model_missing_note` of it instead (nothing is raised).
    sentence : str
        The sentence shown first; the text box also suggests :data:`SUGGESTED_SENTENCES`.
    layer, head : int, default 4 and 0
        The head shown first (:data:`START_LAYER`, :data:`START_HEAD`).
    token : int or str or None, default "it"
        The query token shown first: a position, or the first token equal to this string
        (position 1 if the sentence has none, or if None).
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.lab.Lab or ipywidgets.HTML
        The lab, or the note of what is missing. Controls ``sentence`` (a text box: type, then
        Enter), ``layer``, ``head``, ``token``;
        ``lab.state`` holds the numbers on show (see :func:`update_trained_view`) and
        ``lab.cache`` the encoded sentences.
    """
    if model is None:
        from ..pretrained import ModelNotAvailableError, load_minilm

        try:
            model = load_minilm()
        except ModelNotAvailableError as err:  # a page of labs shows the others
            return model_missing_note(err)
    cache = AttentionCache(model)
    tokens, weights = cache(sentence)
    layer, head = _check_layer_head(layer, head, weights)
    n_layers, n_heads = weights.shape[:2]
    if isinstance(token, str):
        token = tokens.index(token) if token in tokens else min(1, len(tokens) - 1)
    elif token is None:
        token = min(1, len(tokens) - 1)
    token = check_int(token, "token", minimum=0)
    if token >= len(tokens):
        raise ValueError(
            f"token must be a position in [0, {len(tokens) - 1}] of {list(tokens)}; got {token}"
        )
    suggestions = list(dict.fromkeys([sentence, *SUGGESTED_SENTENCES]))
    controls = {
        "sentence": widgets.Combobox(
            value=sentence,
            options=suggestions,
            ensure_option=False,
            continuous_update=False,  # encode on Enter or when the box loses focus
            placeholder="type a sentence, then press Enter",
            description="sentence",
        ),
        "layer": widgets.IntSlider(value=layer, min=0, max=n_layers - 1, description="layer"),
        "head": widgets.IntSlider(value=head, min=0, max=n_heads - 1, description="head"),
        "token": widgets.SelectionSlider(
            options=[(f"{i}: {tok}", i) for i, tok in enumerate(tokens)],
            value=token,
            description="query token",
        ),
    }

    def static_key(*, sentence: str, **_: Any) -> tuple[str, ...]:
        return cache(sentence)[0]

    lab = Lab(
        controls,
        _make_view,
        partial(update_trained_view, cache=cache),
        figsize=(10.6, 4.6),
        dpi=72,
        title=TITLE,
        caption=trained_attention_caption,
        static_key=static_key,
        present=present,
        sync_controls=_token_follower(cache),
    )
    lab.cache = cache
    return lab
