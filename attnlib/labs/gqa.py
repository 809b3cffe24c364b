"""The grouped-query lab: choose query heads, K/V heads and context length; watch the KV cache.

Top, which query heads share which K/V heads (query head ``i`` reads K/V head
``i // (n_heads // n_kv_heads)``); bottom, the KV-cache memory of a whole model at the chosen
context length, for this model and for its MHA and MQA versions (same query heads, n_kv_heads =
n_heads and 1). The model is otherwise fixed: 32 layers, d_head = 128, float16, batch 1.

The K/V-heads slider only offers divisors of the current number of query heads: when n_heads
moves, its options are recomputed (keeping the current value when it still divides, else the
largest divisor below it), within the same update, so the picture is drawn once per move.

The numbers come from :func:`gqa_numbers`, a plain function; :func:`update_gqa_view` puts them
on the figure's artists in place, with the two lines of text above the picture (``heading`` and
``detail``: text in the page, not in the picture, so that no glyph is rendered per frame). Both
run without a browser, which is how the tests drive the lab.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from numpy.typing import DTypeLike

from .._validation import check_int
from ..heads import attention_kind, kv_head_index
from ..kv_cache import kv_cache_bytes
from ..liveview import Lab, TextLabels, heading_and_detail
from ..pictures.head_sharing import group_colors, sharing_layout

__all__ = [
    "HEAD_COUNTS",
    "MODEL",
    "TOKEN_COUNTS",
    "divisors",
    "format_bytes",
    "gqa_lab",
    "gqa_numbers",
    "update_gqa_view",
]

#: The query-head counts the lab offers.
HEAD_COUNTS: tuple[int, ...] = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64)
#: The context lengths the lab offers (tokens).
TOKEN_COUNTS: tuple[int, ...] = tuple(2**k for k in range(9, 18))  # 512 .. 131,072
#: The fixed part of the lab's model (a Llama-like decoder).
MODEL: dict[str, Any] = {"n_layers": 32, "d_head": 128, "dtype": "float16"}

_X_MIN, _X_MAX = 2.0**20, 2.0**40  # the memory axis, 1 MiB .. 1 TiB
_ACCELERATOR = 80e9  # bytes: the memory of one large (80 GB) accelerator, for scale
_ROWS = ("MHA", "this", "MQA")  # bar order, top to bottom
#: How far a size label reaches along the memory axis, in octaves (factors of 2): "128 GiB" takes
#: 1.8 at notebook size and 2.0 at projector size.
_LABEL_OCTAVES = 2.1


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order: the valid ``n_kv_heads`` for ``n`` heads."""
    n = check_int(n, "n")
    return [d for d in range(1, n + 1) if n % d == 0]


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units: ``"512 B"``, ``"128 KiB"``, ``"1.00 GiB"``, ``"3.5 TiB"``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            text = f"{value:.0f}" if value == int(value) else f"{value:.3g}"
            return f"{text} {unit}"
    return f"{n:.0f} B"


def gqa_numbers(
    n_heads: int,
    n_kv_heads: int,
    n_tokens: int,
    n_layers: int = MODEL["n_layers"],
    d_head: int = MODEL["d_head"],
    dtype: DTypeLike = MODEL["dtype"],
) -> dict[str, Any]:
    """What the lab shows for one setting: the head-sharing map and the KV-cache bytes.

    Parameters
    ----------
    n_heads : int
        Query heads per layer.
    n_kv_heads : int
        Key/value heads per layer; must divide ``n_heads``.
    n_tokens : int
        Context length: tokens held in the cache.
    n_layers, d_head, dtype
        The rest of the model; default :data:`MODEL`.

    Returns
    -------
    dict
        ``kind`` ("MHA", "GQA" or "MQA"), ``group`` (query heads per K/V head), ``kv_index``
        (shape (n_heads,): the K/V head of each query head), ``bytes_per_token`` and
        ``bytes_total`` (dicts over ``"MHA"``, ``"this"``, ``"MQA"``: n_kv_heads = n_heads,
        the chosen n_kv_heads, 1), and the arguments.
    """
    kv_index = kv_head_index(n_heads, n_kv_heads)
    n_tokens = check_int(n_tokens, "n_tokens")
    kv_counts = {"MHA": n_heads, "this": n_kv_heads, "MQA": 1}
    per_token = {k: kv_cache_bytes(1, n_layers, c, d_head, dtype) for k, c in kv_counts.items()}
    return {
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "n_tokens": n_tokens,
        "n_layers": n_layers,
        "d_head": d_head,
        "dtype": str(np.dtype(dtype)),
        "kind": attention_kind(n_heads, n_kv_heads),
        "group": n_heads // n_kv_heads,
        "kv_index": kv_index,
        "bytes_per_token": per_token,
        "bytes_total": {k: b * n_tokens for k, b in per_token.items()},
    }


def _make_view(figure: Figure) -> tuple[dict[str, Any], list[Artist]]:
    """Build both panels once; return the artists an update changes."""
    ax_map = figure.add_axes((0.13, 0.55, 0.85, 0.43))
    ax_map.set_xlim(0, 1)
    ax_map.set_ylim(-0.4, 1.4)
    ax_map.set_axis_off()
    ax_map.text(-0.01, 1, "query heads", ha="right", va="center", fontsize=10)
    ax_map.text(-0.01, 0, "K/V heads", ha="right", va="center", fontsize=10)
    links = LineCollection([], linewidths=1.2, zorder=1)
    ax_map.add_collection(links)
    queries = ax_map.scatter([], [], edgecolors="black", linewidths=0.6, zorder=2)
    kv_heads = ax_map.scatter([], [], marker="s", edgecolors="black", linewidths=0.6, zorder=2)

    ax_mem = figure.add_axes((0.31, 0.13, 0.5, 0.33))
    ax_mem.set_xscale("log", base=2)
    ax_mem.set_xlim(_X_MIN, _X_MAX)
    ax_mem.set_ylim(-0.6, 2.6)
    ticks = [2.0**k for k in range(20, 41, 5)]
    ax_mem.set_xticks(ticks, [format_bytes(t) for t in ticks], fontsize=9)
    ax_mem.minorticks_off()
    ax_mem.set_yticks([])
    ax_mem.set_xlabel("KV-cache memory of the whole model (log scale)", fontsize=9)
    ax_mem.axvline(_ACCELERATOR, color="crimson", linestyle="--", linewidth=1.2)
    ax_mem.text(_ACCELERATOR * 1.1, -0.3, "80 GB", color="crimson", va="center", fontsize=9)
    colors = {"MHA": "#9e9e9e", "this": "#1f77b4", "MQA": "#9e9e9e"}
    y = {name: 2 - i for i, name in enumerate(_ROWS)}
    bars = {
        name: ax_mem.barh(y[name], 0, left=_X_MIN, height=0.62, color=colors[name])[0]
        for name in _ROWS
    }
    for name, label in zip(_ROWS, ("MHA", "this model", "MQA")):
        ax_mem.text(_X_MIN / 1.15, y[name], label, ha="right", va="center", fontsize=9.5)
    ax_mem.set_title(
        f"KV cache of a {MODEL['n_layers']}-layer model, d_head = {MODEL['d_head']},"
        f" {MODEL['dtype']}, batch 1",
        fontsize=9.5,
    )
    sizes = TextLabels(ax_mem, len(_ROWS), fontsize=9, ha="left")
    view = {
        "links": links,
        "queries": queries,
        "kv_heads": kv_heads,
        "bars": bars,
        "sizes": sizes,
    }
    return view, [links, queries, kv_heads, *bars.values(), sizes.collection]


def update_gqa_view(
    view: dict[str, Any], *, n_heads: int, n_kv_heads: int, n_tokens: int
) -> dict[str, Any]:
    """Put the numbers for these control values on the view's artists, in place.

    Returns
    -------
    dict
        :func:`gqa_numbers` of the values, plus the caption's two lines, ``heading`` and
        ``detail``.
    """
    state = gqa_numbers(n_heads, n_kv_heads, n_tokens)
    query_xy, kv_xy, segments = sharing_layout(n_heads, n_kv_heads)
    colors = group_colors(n_kv_heads)
    size = 150 if n_heads <= 16 else (70 if n_heads <= 32 else 30)
    view["links"].set_segments(segments)
    view["links"].set_color(colors[state["kv_index"]])
    view["queries"].set_offsets(query_xy)
    view["queries"].set_facecolors(colors[state["kv_index"]])
    view["queries"].set_sizes([size])
    view["kv_heads"].set_offsets(kv_xy)
    view["kv_heads"].set_facecolors(colors)
    view["kv_heads"].set_sizes([size * 1.4])

    totals = [state["bytes_total"][name] for name in _ROWS]
    for name, total in zip(_ROWS, totals):
        view["bars"][name].set_width(total - _X_MIN)
    centres = [bar.get_y() + bar.get_height() / 2 for bar in view["bars"].values()]
    # Each size just right of its bar; one the 80 GB line would cut goes right of the line.
    starts = [total * 1.15 for total in totals]
    starts = [_ACCELERATOR * 1.1 if x < _ACCELERATOR < x * 2**_LABEL_OCTAVES else x for x in starts]
    view["sizes"].set(
        [format_bytes(total) for total in totals],
        [(x, y - 0.11) for x, y in zip(starts, centres)],
    )

    group = state["group"]
    if state["kind"] == "MHA":
        heading = f"MHA: each of the {n_heads} query heads has its own K and V"
    elif state["kind"] == "MQA":
        heading = f"MQA: all {n_heads} query heads share one K and V"
    else:
        heading = (
            f"GQA: {n_heads} query heads share {n_kv_heads} K/V heads,"
            f" {group} query heads per K/V head"
        )
    per_token = state["bytes_per_token"]["this"]
    bytes_per_number = np.dtype(state["dtype"]).itemsize
    detail = (
        f"KV cache = 2 (K and V) x {state['n_layers']} layers x {n_kv_heads} K/V heads x"
        f" d_head {state['d_head']} x {bytes_per_number} bytes = {format_bytes(per_token)} per"
        f" token; x {n_tokens:,} tokens = {format_bytes(per_token * n_tokens)}"
    )
    return {**state, "heading": heading, "detail": detail}


def sync_kv_options(controls: dict) -> None:
    """The lab's ``sync_controls``: offer only the K/V head counts that divide the query heads.

    When the current count no longer divides, the largest divisor below it is kept.
    """
    kv = controls["n_kv_heads"]
    valid = tuple(divisors(controls["n_heads"].value))
    if tuple(kv.options) != valid:
        keep = max(d for d in valid if d <= kv.value)
        kv.options = valid
        kv.value = keep


def gqa_lab(
    n_heads: int = 32, n_kv_heads: int = 8, n_tokens: int = 8192, present: bool = False
) -> Lab:
    """A live lab: query heads, K/V heads and context length; the sharing map and KV cache follow.

    Parameters
    ----------
    n_heads : int, default 32
        Query heads shown first; one of :data:`HEAD_COUNTS`.
    n_kv_heads : int, default 8
        K/V heads shown first; must divide ``n_heads``.
    n_tokens : int, default 8192
        Context length shown first; one of :data:`TOKEN_COUNTS`.
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.lab.Lab
        An ipywidgets VBox: controls ``n_heads``, ``n_kv_heads``, ``n_tokens``; ``lab.state``
        holds the numbers on show (see :func:`update_gqa_view`), ``lab.caption`` their two
        lines of text.
    """
    n_heads = check_int(n_heads, "n_heads")
    if n_heads not in HEAD_COUNTS:
        raise ValueError(f"n_heads must be one of {HEAD_COUNTS}; got n_heads={n_heads}")
    kv_head_index(n_heads, n_kv_heads)  # raises unless n_kv_heads divides n_heads
    n_tokens = check_int(n_tokens, "n_tokens")
    if n_tokens not in TOKEN_COUNTS:
        raise ValueError(f"n_tokens must be one of {TOKEN_COUNTS}; got n_tokens={n_tokens}")

    controls = {
        "n_heads": widgets.SelectionSlider(
            options=HEAD_COUNTS,
            value=n_heads,
            description="query heads (n_heads)",
        ),
        "n_kv_heads": widgets.SelectionSlider(
            options=divisors(n_heads),
            value=n_kv_heads,
            description="K/V heads (n_kv_heads)",
        ),
        "n_tokens": widgets.SelectionSlider(
            options=[(f"{n:,}", n) for n in TOKEN_COUNTS],
            value=n_tokens,
            description="context length (tokens)",
        ),
    }
    return Lab(
        controls,
        _make_view,
        update_gqa_view,
        figsize=(10.5, 3.7),
        dpi=80,
        title="Grouped-query lab: which heads share K and V, and what the KV cache costs",
        caption=heading_and_detail,
        present=present,
        sync_controls=sync_kv_options,
    )
