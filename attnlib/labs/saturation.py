r"""The saturation lab: drag :math:`d_k` up and watch an unscaled softmax go one-hot.

One query attends over ``T`` keys. Queries and keys are seeded standard-normal vectors of length
1024; at a given :math:`d_k` the lab uses their first :math:`d_k` coordinates, so the raw scores
:math:`q \cdot k_j` have standard deviation about :math:`\sqrt{d_k}`. The lab shows the softmax
weights over the keys, their entropy and maximum, and the Frobenius norm of the softmax Jacobian
:math:`p_i(\delta_{ij} - p_j)` (how much gradient reaches the scores, on a log axis: it spans
twenty orders of magnitude), each against :math:`d_k`, with and without the :math:`1/\sqrt{d_k}`
scale. The numbers of the current setting are a line of text above the picture (``lab.caption``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .._validation import as_float_array, check_int
from ..examples import SATURATION_D, saturation_data
from ..liveview import Lab
from ..pictures.colours import GROUP_COLOURS
from ..saturation import entropy, softmax_jacobian_norm
from ..softmax import softmax

__all__ = [
    "D_K_OPTIONS",
    "saturation_caption",
    "saturation_data",
    "saturation_lab",
    "saturation_state",
    "update_saturation_view",
]

#: Between the groups of the caption: two em spaces (a line may break there; HTML keeps them).
CAPTION_SEPARATOR = "\u2003\u2003"

#: The d_k slider's positions: powers of two from 1 to 1024 (log steps).
D_K_OPTIONS: tuple[int, ...] = tuple(2**i for i in range(11))


def saturation_state(
    queries: ArrayLike, keys: ArrayLike, d_k: int, scaled: bool, query: int
) -> dict[str, Any]:
    r"""Everything the lab shows for one setting of its controls (a plain function, no widgets).

    Parameters
    ----------
    queries : array_like, shape (T_q, D)
    keys : array_like, shape (T_k, D)
        Only the first ``d_k`` of the D coordinates are used.
    d_k : int
        Key dimension, 1 <= d_k <= D.
    scaled : bool
        Divide the scores by :math:`\sqrt{d_k}` before the softmax.
    query : int
        Row of ``queries`` that attends.

    Returns
    -------
    dict
        ``scores`` (T_k,), the scores fed to the softmax (scaled or not); ``weights`` (T_k,);
        ``entropy`` and ``max_weight`` of the weights; ``jacobian_norm``, the Frobenius norm of
        the softmax Jacobian at the weights; and ``curves``: for every d_k in ``D_K_OPTIONS``
        up to D, the entropy and Jacobian norm scaled and unscaled (arrays of shape
        (len(d_ks),) under keys ``d_ks``, ``entropy_scaled``, ``entropy_raw``, ``jacobian_scaled``,
        ``jacobian_raw``).
    """
    q_all = as_float_array(queries, "queries", min_ndim=2)
    k_all = as_float_array(keys, "keys", min_ndim=2)
    if q_all.ndim != 2 or k_all.ndim != 2 or q_all.shape[1] != k_all.shape[1]:
        raise ValueError(
            f"queries and keys must be (T, D) matrices with the same D; got queries shape"
            f" {q_all.shape} and keys shape {k_all.shape}"
        )
    d_k = check_int(d_k, "d_k", minimum=1)
    if d_k > q_all.shape[1]:
        raise ValueError(f"d_k={d_k} exceeds the {q_all.shape[1]} coordinates of queries/keys")
    query = check_int(query, "query", minimum=0)
    if query >= q_all.shape[0]:
        raise ValueError(f"query={query} is out of range for {q_all.shape[0]} queries")
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"scaled must be True or False; got {scaled!r}")

    d_ks = np.array([d for d in D_K_OPTIONS if d <= q_all.shape[1]])
    # Running sums of q_m k_m give every prefix length's dot products at once: (T_k, D).
    prefix = np.cumsum(q_all[query] * k_all, axis=1)
    raw = prefix[:, d_ks - 1].T  # (len(d_ks), T_k): raw scores at each d_k
    p_raw = softmax(raw)
    p_scaled = softmax(raw / np.sqrt(d_ks)[:, None])

    scores = prefix[:, d_k - 1] / (np.sqrt(d_k) if scaled else 1.0)
    weights = softmax(scores)
    return {
        "scores": scores,
        "weights": weights,
        "entropy": float(entropy(weights)),
        "max_weight": float(weights.max()),
        "jacobian_norm": float(softmax_jacobian_norm(weights)),
        "curves": {
            "d_ks": d_ks,
            "entropy_scaled": entropy(p_scaled),
            "entropy_raw": entropy(p_raw),
            "jacobian_scaled": softmax_jacobian_norm(p_scaled),
            "jacobian_raw": softmax_jacobian_norm(p_raw),
        },
    }


def _jacobian_floor(queries: np.ndarray, keys: np.ndarray) -> float:
    """A power of ten below every positive ||J||_F the lab can show: the log panel's bottom."""
    smallest = min(
        curve[curve > 0].min()
        for q in range(queries.shape[0])
        for curve in saturation_state(queries, keys, 1, False, q)["curves"].values()
        if curve.dtype.kind == "f"
    )
    return float(10.0 ** (np.floor(np.log10(smallest)) - 1))


#: The bars' colours (colour-blind-safe, attnlib.pictures.colours): scaled, unscaled, and the
#: largest weight, which is also hatched and outlined, so that colour is not its only cue.
BAR_COLOURS = {
    "scaled": GROUP_COLOURS[0],
    "unscaled": GROUP_COLOURS[1],
    "largest": GROUP_COLOURS[2],
}
LARGEST_HATCH = "//"


def _make_view(fig: Figure, *, n_tokens: int, jacobian_floor: float):
    """Build the three panels once; return the view and the artists an update changes."""
    ax_w, ax_h, ax_j = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.1, 1, 1]})
    fig.subplots_adjust(left=0.06, right=0.975, bottom=0.17, top=0.88, wspace=0.32)
    bars = ax_w.bar(range(n_tokens), np.full(n_tokens, 1 / n_tokens), color=BAR_COLOURS["scaled"])
    ax_w.set_ylim(0, 1.05)
    ax_w.set_xticks(range(n_tokens))
    ax_w.set_xlabel("key j")
    ax_w.set_ylabel("weight $p_j$")
    ax_w.set_title("softmax weights", fontsize=10)

    view: dict[str, Any] = {"bars": bars}
    animated: list = [*bars]
    panels = (
        (ax_h, "entropy", "entropy $H$ (nats)"),
        (ax_j, "jacobian", r"Jacobian norm $\|J\|_F$ (log scale)"),
    )
    for ax, key, title in panels:
        ax.set_xscale("log", base=2)
        ax.set_xlim(0.8, SATURATION_D * 1.25)
        ax.set_xticks(D_K_OPTIONS[::2], [str(d) for d in D_K_OPTIONS[::2]])
        ax.set_xlabel("$d_k$")
        ax.set_title(title, fontsize=10)
        (scaled_line,) = ax.plot([], [], "-o", ms=3, color=BAR_COLOURS["scaled"], label="scaled")
        (raw_line,) = ax.plot([], [], "--o", ms=3, color=BAR_COLOURS["unscaled"], label="unscaled")
        (marker,) = ax.plot([], [], "o", ms=10, mfc="none", mec="black", mew=1.5)
        view[key] = (scaled_line, raw_line, marker)
        # The curves change with the query only, but drawing two 11-point lines costs well
        # under a millisecond: animated, a first visit to a query is a fast partial frame
        # too (as static parts, each query's first frame was a full redraw, ~0.1-0.3 s).
        animated.extend([scaled_line, raw_line, marker])
    top = np.log(n_tokens)
    ax_h.set_ylim(-0.03 * top * 1.1, top * 1.1)
    ax_h.axhline(top, color="0.6", lw=0.8, ls=":")
    # ||J||_F runs from ~0.4 down to 1e-10 and below: only a log axis tells 1e-3 from 1e-13.
    # The top is a decade above the largest norm and the ticks every five decades from
    # 10^0 down: no tick label sits on the panel's top edge, where it would reach into the
    # title (and the curves' first points stay clear of the frame).
    ax_j.set_yscale("log")
    ax_j.set_ylim(jacobian_floor, 10.0)
    ax_j.set_yticks(10.0 ** np.arange(0, np.log10(jacobian_floor), -5))
    ax_j.minorticks_off()
    ax_j.legend(loc="lower left", fontsize=9, frameon=False)
    return view, animated


def saturation_caption(state: dict[str, Any]) -> str:
    """The lab's line of numbers above its picture, for the state of :func:`saturation_state`.

    Each "name = value" group is held together by no-break spaces, and the groups are separated
    by two em spaces (which HTML does not collapse), so a narrow window wraps the line between
    groups, never inside one.
    """
    groups = (
        f"d_k = {state['d_k']}, {'scaled' if state['scaled'] else 'unscaled'},"
        f" query {state['query']}:",
        f"max p = {state['max_weight']:.4f}",
        f"H = {state['entropy']:.3f} nats",
        f"‖J‖_F = {state['jacobian_norm']:.2e}",
    )
    return CAPTION_SEPARATOR.join(group.replace(" ", "\u00a0") for group in groups)


def update_saturation_view(
    view: dict, *, queries: np.ndarray, keys: np.ndarray, d_k: int, scaled: bool, query: int
) -> dict[str, Any]:
    """Put :func:`saturation_state` of these control values on the view's artists; return it,
    with the control values."""
    state = saturation_state(queries, keys, d_k, scaled, query)
    state.update(d_k=d_k, scaled=scaled, query=query)
    top = int(np.argmax(state["weights"]))
    for j, (bar, p) in enumerate(zip(view["bars"], state["weights"])):
        bar.set_height(p)
        largest = j == top
        bar.set_facecolor(
            BAR_COLOURS["largest" if largest else ("scaled" if scaled else "unscaled")]
        )
        bar.set_hatch(LARGEST_HATCH if largest else "")
        bar.set_edgecolor("black" if largest else "none")
    curves = state["curves"]
    index = int(np.flatnonzero(curves["d_ks"] == d_k)[0]) if d_k in curves["d_ks"] else None
    for key in ("entropy", "jacobian"):
        scaled_line, raw_line, marker = view[key]
        scaled_line.set_data(curves["d_ks"], curves[f"{key}_scaled"])
        raw_line.set_data(curves["d_ks"], curves[f"{key}_raw"])
        current = curves[f"{key}_{'scaled' if scaled else 'raw'}"]
        marker.set_data([d_k], [current[index]] if index is not None else [np.nan])
    return state


def saturation_lab(
    d_k: int = 1,
    scaled: bool = False,
    query: int = 0,
    n_tokens: int = 8,
    seed: int = 0,
    present: bool = False,
) -> Lab:
    r"""A live lab: sliders for :math:`d_k` (1..1024, log steps), scaling on/off and the query.

    Parameters
    ----------
    d_k : int, default 1
        Starting key dimension; one of ``D_K_OPTIONS`` (powers of two up to 1024).
    scaled : bool, default False
        Start with the :math:`1/\sqrt{d_k}` scale on.
    query : int, default 0
        Starting query token, ``0 <= query < n_tokens``.
    n_tokens : int, default 8
        Number of tokens T.
    seed : int, default 0
        Seed of the queries and keys (see :func:`saturation_data`).
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    Lab
        An ``ipywidgets.VBox``: controls ``d_k`` (SelectionSlider), ``scaled`` (Checkbox) and
        ``query`` (IntSlider) above the figure. ``lab.state`` holds the numbers shown (see
        :func:`saturation_state`, plus the control values ``d_k``, ``scaled``, ``query``), and
        ``lab.caption`` their line of text (:func:`saturation_caption`).

    Raises
    ------
    TypeError
        If ``scaled`` is not a bool (``scaled="no"`` would otherwise start with scaling on), or
        ``d_k``/``query`` is not an integer.
    ValueError
        If ``d_k`` is not a slider position or ``query`` is out of range.
    """
    queries, keys = saturation_data(n_tokens, seed)
    d_k = check_int(d_k, "d_k")
    if d_k not in D_K_OPTIONS:
        raise ValueError(f"d_k must be one of {D_K_OPTIONS}; got d_k={d_k!r}")
    query = check_int(query, "query", minimum=0)
    if query >= queries.shape[0]:
        raise ValueError(f"query={query} is out of range for n_tokens={queries.shape[0]}")
    if not isinstance(scaled, (bool, np.bool_)):  # bool("no") is True: refuse, don't guess
        raise TypeError(
            f"scaled must be True or False; got {scaled!r} of type {type(scaled).__name__}"
        )
    controls = {
        "d_k": widgets.SelectionSlider(
            options=D_K_OPTIONS,
            value=d_k,
            description="d_k",
            continuous_update=True,
        ),
        "scaled": widgets.Checkbox(value=bool(scaled), description="divide scores by √d_k"),
        "query": widgets.IntSlider(
            value=query,
            min=0,
            max=queries.shape[0] - 1,
            description="query token",
        ),
    }
    return Lab(
        controls,
        partial(
            _make_view, n_tokens=queries.shape[0], jacobian_floor=_jacobian_floor(queries, keys)
        ),
        partial(update_saturation_view, queries=queries, keys=keys),
        figsize=(9.6, 2.8),
        dpi=80,
        title="Softmax saturation: drag d_k up, with and without the 1/√d_k scale",
        caption=saturation_caption,
        present=present,
    )
