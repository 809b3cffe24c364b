r"""The gradient lab: scrub through training runs of a retrieval head, scaled and unscaled.

When the lab is built it trains the head of :mod:`attnlib.retrieval` (16 queries that must each
find their key among 16 and fetch its value; loss on the fetched values) once for every
:math:`d_k` in :data:`D_K_OPTIONS`, with and without :math:`1/\sqrt{d_k}`, from the same
initialisation and with the same step size, and keeps every step. The controls then only look
things up: :math:`d_k`, the scale on/off, and the training step.

Left, the loss of both runs; middle, the gradient reaching the scores of the median query,
:math:`\mathrm{median}_i \|\partial L/\partial s_i\|` (log scale); right, the attention weights
of all queries at the chosen step, the key each query should find outlined in red.
:func:`gradient_state` computes what is shown (a plain function, no widgets); tests drive it and
the lab without a browser.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatterSciNotation

from .._validation import check_int
from ..liveview import Lab
from ..retrieval import retrieval_problem, train_retrieval

__all__ = [
    "D_K_OPTIONS",
    "LAB_LR",
    "LAB_STEPS",
    "gradient_caption",
    "gradient_lab",
    "gradient_state",
    "training_runs",
    "update_gradient_view",
]

#: The d_k slider's positions.
D_K_OPTIONS: tuple[int, ...] = (4, 16, 64, 256)
#: The step size of every run in the lab.
LAB_LR = 0.03
#: The number of training steps of every run.
LAB_STEPS = 150
#: Smaller gradient norms are drawn at this value, whose tick reads "<= 10^-12".
_GRAD_FLOOR = 1e-12
#: Room beyond the data on every side of the two curve panels, as a fraction of the x range
#: (and of the loss range, and in decades on the log axis), so that the step marker (9 pt
#: across) is whole at step 0, at the largest value and on the floor.
_MARGIN = 0.04
_LOG_MARGIN_DECADES = 0.5


def training_runs(
    d_ks: tuple[int, ...] = D_K_OPTIONS, lr: float = LAB_LR, steps: int = LAB_STEPS, seed: int = 9
) -> dict[tuple[int, bool], dict[str, np.ndarray]]:
    """Train the retrieval head for every ``d_k``, scaled and unscaled (about 0.2 s in all).

    Parameters
    ----------
    d_ks : tuple of int
        Key dimensions; each gets the task ``retrieval_problem(d_k, seed=seed)``.
    lr : float
        Step size, the same for every run.
    steps : int
        Training steps per run.
    seed : int
        Seed of the task and of the starting projections (shared by the scaled and unscaled run).

    Returns
    -------
    dict
        ``runs[d_k, scaled]`` is the history of :func:`attnlib.retrieval.train_retrieval` with
        ``keep_weights=True``: ``loss`` and ``accuracy`` of shape (steps + 1,), ``score_grad`` of
        shape (steps + 1, 16) and ``weights`` of shape (steps + 1, 16, 16); plus
        ``score_grad_median``, the median over queries of ``score_grad``, shape (steps + 1,).
    """
    runs = {}
    for d_k in d_ks:
        problem = retrieval_problem(d_k=d_k, seed=seed)
        for scaled in (True, False):
            run = train_retrieval(
                problem, scale=None if scaled else 1.0, lr=lr, steps=steps, keep_weights=True
            )
            run["score_grad_median"] = np.median(run["score_grad"], axis=1)
            runs[d_k, scaled] = run
    return runs


def gradient_state(
    runs: dict[tuple[int, bool], dict[str, np.ndarray]], d_k: int, scaled: bool, step: int
) -> dict[str, Any]:
    r"""Everything the lab shows for one setting of its controls (a plain function, no widgets).

    Parameters
    ----------
    runs : dict
        From :func:`training_runs`.
    d_k : int
        A key dimension present in ``runs``.
    scaled : bool
        Show the run with the :math:`1/\sqrt{d_k}` scale (True) or without it.
    step : int
        Training step, ``0 <= step <= steps``.

    Returns
    -------
    dict
        ``d_k``, ``scaled``, ``step`` as given; ``weights`` (n, n), the attention weights at
        ``step``; ``loss``, ``accuracy``,
        ``found`` (how many queries put their largest weight on their own key) and ``grad``
        (the median over queries of :math:`\|\partial L/\partial s_i\|`) at ``step``;
        ``curves``: ``loss_scaled``, ``loss_unscaled``, ``grad_scaled``, ``grad_unscaled`` of
        shape (steps + 1,) for this ``d_k``.
    """
    if not isinstance(scaled, (bool, np.bool_)):
        raise TypeError(f"scaled must be True or False; got {scaled!r}")
    d_ks = sorted({key[0] for key in runs})
    if (d_k, bool(scaled)) not in runs:
        raise ValueError(f"d_k must be one of the trained key dimensions {d_ks}; got d_k={d_k!r}")
    run = runs[d_k, bool(scaled)]
    n_steps = len(run["loss"]) - 1
    step = check_int(step, "step", minimum=0)
    if step > n_steps:
        raise ValueError(
            f"step must be in [0, {n_steps}] (the runs have {n_steps} steps); got {step}"
        )
    weights = run["weights"][step]
    return {
        "d_k": d_k,
        "scaled": bool(scaled),
        "step": step,
        "weights": weights,
        "loss": float(run["loss"][step]),
        "accuracy": float(run["accuracy"][step]),
        "found": int(np.sum(weights.argmax(axis=1) == np.arange(len(weights)))),
        "grad": float(run["score_grad_median"][step]),
        "curves": {
            "loss_scaled": runs[d_k, True]["loss"],
            "loss_unscaled": runs[d_k, False]["loss"],
            "grad_scaled": runs[d_k, True]["score_grad_median"],
            "grad_unscaled": runs[d_k, False]["score_grad_median"],
        },
    }


_LOG_TICK = LogFormatterSciNotation()


def _grad_tick(value: float, position: int | None) -> str:
    """Log-axis tick labels (10^k), the floor's as "<= 10^k": smaller norms are drawn there."""
    if np.isclose(value, _GRAD_FLOOR, rtol=1e-6, atol=0):
        return rf"$\leq\mathdefault{{10^{{{round(np.log10(_GRAD_FLOOR))}}}}}$"
    return _LOG_TICK(value, position)


def _make_view(fig: Figure, *, runs: dict, n_steps: int):
    """Build the three panels once; return the view and the artists an update changes."""
    n = next(iter(runs.values()))["weights"].shape[-1]
    loss_max = max(float(run["loss"].max()) for run in runs.values())
    grad_max = max(float(run["score_grad_median"].max()) for run in runs.values())
    room = 10**_LOG_MARGIN_DECADES
    ax_loss, ax_grad, ax_w = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.15, 1.15, 0.8]})
    fig.subplots_adjust(left=0.055, right=0.985, bottom=0.16, top=0.9, wspace=0.3)
    steps = np.arange(n_steps + 1)
    lines = {}
    for ax, key, title in (
        (ax_loss, "loss", "loss"),
        (ax_grad, "grad", "gradient reaching the scores (median query)"),
    ):
        ax.set_xlim(-_MARGIN * n_steps, (1 + _MARGIN) * n_steps)
        ax.set_xlabel("training step")
        ax.set_title(title, fontsize=10)
        (scaled_line,) = ax.plot(steps, np.ones(n_steps + 1), color="tab:blue", label="scaled")
        (raw_line,) = ax.plot(
            steps, np.ones(n_steps + 1), "--", color="tab:orange", label="unscaled"
        )
        (marker,) = ax.plot([0], [1], "o", ms=9, mfc="none", mec="black", mew=1.5)
        cursor = ax.axvline(0, color="0.5", lw=0.8)
        lines[key] = (scaled_line, raw_line, marker, cursor)
    ax_loss.set_ylim(-_MARGIN * loss_max, (1 + _MARGIN) * loss_max)
    ax_grad.set_yscale("log")
    ax_grad.set_ylim(_GRAD_FLOOR / room, grad_max * room)
    # a tick every second decade from the floor up, whatever matplotlib's LogLocator would choose
    # (before 3.11 it chose the odd decades here, and the floor lost its tick)
    decades = np.arange(np.log10(_GRAD_FLOOR), np.log10(grad_max * room) + 2, 2)
    ax_grad.yaxis.set_major_locator(FixedLocator(10.0**decades))
    # the floor's tick says that smaller norms are drawn there
    ax_grad.yaxis.set_major_formatter(FuncFormatter(_grad_tick))
    ax_loss.legend(loc="center right", fontsize=9, frameon=False)

    # A mesh of n x n cells draws much faster than imshow, which resamples every frame.
    edges = np.arange(n + 1) - 0.5
    image = ax_w.pcolormesh(
        edges, edges, np.zeros((n, n)), cmap="Blues", vmin=0, vmax=1, antialiased=False
    )
    ax_w.set_xlim(-0.5, n - 0.5)
    ax_w.set_ylim(n - 0.5, -0.5)  # query 0 at the top, as in a matrix
    ax_w.set_aspect("equal")
    # the key each query should find; animated so that it is drawn over the weights
    (targets,) = ax_w.plot(range(n), range(n), "s", ms=5, mfc="none", mec="tab:red", mew=0.8)
    ax_w.set_xticks([0, n - 1])
    ax_w.set_yticks([0, n - 1])
    ax_w.set_xlabel("key")
    ax_w.set_ylabel("query")
    ax_w.set_title("weights at this step", fontsize=10)
    view = {"lines": lines, "image": image}
    # The curves change only with d_k: they stay in the background (one per d_k, see
    # static_key in gradient_lab); a step redraws the weights, the markers and the cursors.
    animated = [image, targets, *(a for group in lines.values() for a in group[2:])]
    return view, animated


def update_gradient_view(
    view: dict, *, runs: dict, d_k: int, scaled: bool, step: int
) -> dict[str, Any]:
    """Put :func:`gradient_state` of these control values on the view's artists; return it."""
    state = gradient_state(runs, d_k, scaled, step)
    curves = state["curves"]
    for key in ("loss", "grad"):
        scaled_line, raw_line, marker, cursor = view["lines"][key]
        low = _GRAD_FLOOR if key == "grad" else -np.inf
        scaled_line.set_ydata(np.maximum(curves[f"{key}_scaled"], low))
        raw_line.set_ydata(np.maximum(curves[f"{key}_unscaled"], low))
        marker.set_data([step], [max(state[key], low)])
        marker.set_markeredgecolor("tab:blue" if scaled else "tab:orange")
        cursor.set_xdata([step, step])
    view["image"].set_array(state["weights"].ravel())
    return state


def gradient_caption(state: dict[str, Any]) -> str:
    """The line of numbers shown above the lab's picture, for a :func:`gradient_state`."""
    n = len(state["weights"])
    kind = "scaled" if state["scaled"] else "unscaled"
    return (
        f"d_k = {state['d_k']}, {kind}, step {state['step']}: loss {state['loss']:.3f},"
        f" {state['found']} of {n} queries find their key,"
        f" median |dL/ds_i| = {state['grad']:.1e}"
    )


def gradient_lab(
    d_k: int = 256, scaled: bool = False, step: int = 0, seed: int = 9, present: bool = False
) -> Lab:
    r"""A live lab: pick :math:`d_k`, the scale on/off and a training step of the retrieval head.

    Parameters
    ----------
    d_k : int, default 256
        Starting key dimension; one of :data:`D_K_OPTIONS`.
    scaled : bool, default False
        Start with the run that divides the scores by :math:`\sqrt{d_k}`.
    step : int, default 0
        Starting training step, ``0 <= step <= LAB_STEPS``.
    seed : int, default 9
        Seed of the task and the starting projections (see :func:`training_runs`).
    present : bool, default False
        Projector size for presenting in class: a picture 1440 px wide with text of at least
        14 pt, large controls (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    Lab
        Controls ``d_k`` (SelectionSlider), ``scaled`` (Checkbox) and ``step`` (IntSlider) above
        the figure; ``lab.state`` holds the numbers shown (see :func:`gradient_state`).
    """
    if d_k not in D_K_OPTIONS:
        raise ValueError(f"d_k must be one of {D_K_OPTIONS}; got d_k={d_k!r}")
    step = check_int(step, "step", minimum=0)
    if step > LAB_STEPS:
        raise ValueError(f"step must be in [0, {LAB_STEPS}]; got step={step}")
    runs = training_runs(seed=seed)
    controls = {
        "d_k": widgets.SelectionSlider(options=D_K_OPTIONS, value=d_k, description="d_k"),
        "scaled": widgets.Checkbox(value=bool(scaled), description="divide scores by √d_k"),
        "step": widgets.IntSlider(value=step, min=0, max=LAB_STEPS, description="training step"),
    }
    return Lab(
        controls,
        partial(_make_view, runs=runs, n_steps=LAB_STEPS),
        partial(update_gradient_view, runs=runs),
        figsize=(10.5, 3.0),
        dpi=80,
        title=f"Training a retrieval head (step size {LAB_LR}): scrub through the runs",
        caption=gradient_caption,
        static_key=lambda *, d_k, scaled, step: d_k,
        present=present,
    )
