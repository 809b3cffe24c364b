r"""The induction lab: scrub through training and watch a previous-token head and an induction
head form.

Left, the loss on held-out repeated sequences at every stored checkpoint (the training batches'
loss behind it, in grey), the chosen step marked. Middle and right, on the first held-out
sequence, the attention weights of the two heads that the trained model ends with: the
previous-token head of layer 0 (a diagonal just below the main one) and the induction head of
layer 1 (a stripe ``h - 1`` below the diagonal in the second half: each token looks at what
followed its earlier copy). Everything shown is computed once, when the lab is made, by
:func:`attnlib.induction.training_curves`; a move only looks it up.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator
from numpy.typing import ArrayLike

from ..examples import INDUCTION_SEED, induction_held_out
from ..induction import Curves, Trained, train, training_curves
from ..liveview import Lab
from ..pictures.cell_mesh import cell_mesh, set_cell_colours, weight_colorbar

__all__ = ["induction_caption", "induction_lab", "induction_state", "update_induction_view"]

_CMAP = colormaps["Blues"]
_SMALL = 10  # points: 10 px at the notebook size's 72 pixels per inch


def induction_state(curves: Curves, step: int) -> dict[str, Any]:
    """What the lab shows at the stored step ``step`` (numbers only).

    Parameters
    ----------
    curves : Curves
        :func:`attnlib.induction.training_curves` of the trained model.
    step : int
        One of ``curves.steps``.

    Returns
    -------
    dict
        ``step``, ``index`` (its place in ``curves.steps``), ``loss`` (on held-out repeats),
        ``previous_token`` and ``induction`` (the two heads' scores), ``heads`` and
        ``patterns`` (2, 2h, 2h): the two heads' weights on the first held-out sequence.
    """
    matches = np.flatnonzero(curves.steps == step)
    if matches.size == 0:
        stored = [int(s) for s in curves.steps]
        raise ValueError(f"step must be a stored checkpoint, one of {stored}; got step={step}")
    i = int(matches[0])
    return {
        "step": int(step),
        "index": i,
        "loss": float(curves.loss_on_repeats[i]),
        "previous_token": float(curves.previous_token[i]),
        "induction": float(curves.induction[i]),
        "heads": curves.heads,
        "patterns": curves.patterns[i],
    }


def _make_view(
    figure: Figure, curves: Curves, batch_loss: np.ndarray
) -> tuple[dict[str, Any], list[Artist]]:
    T = curves.patterns.shape[-1]
    ax_loss = figure.add_axes((0.07, 0.17, 0.30, 0.68))
    ax_prev = figure.add_axes((0.45, 0.17, 0.21, 0.68))
    ax_ind = figure.add_axes((0.71, 0.17, 0.21, 0.68))

    steps = np.arange(1, batch_loss.size + 1)
    ax_loss.plot(steps, batch_loss, color="0.8", lw=0.8, label="training batches")
    ax_loss.plot(
        curves.steps, curves.loss_on_repeats, "o-", ms=3, color="#1f77b4", label="held out"
    )
    ax_loss.set_xlim(0, curves.steps[-1])
    ax_loss.set_ylim(0, 1.05 * max(batch_loss.max(), curves.loss_on_repeats.max()))
    ax_loss.set_xlabel("training step", fontsize=_SMALL)
    ax_loss.set_ylabel("loss on repeats (nats)", fontsize=_SMALL)
    ax_loss.tick_params(labelsize=_SMALL)
    ax_loss.legend(fontsize=_SMALL, loc="upper right")
    marked = ax_loss.axvline(0, color="crimson", lw=1.2)
    (dot,) = ax_loss.plot([0], [0], "o", ms=8, color="crimson")

    (l0, h0), (l1, h1) = curves.heads
    meshes = []
    for ax, title in (
        (ax_prev, f"previous-token head: layer {l0}, head {h0}"),
        (ax_ind, f"induction head: layer {l1}, head {h1}"),
    ):
        meshes.append(cell_mesh(ax, T))
        ax.set_title(title, fontsize=_SMALL)
        ticks = [0, T // 2, T - 1]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.tick_params(labelsize=_SMALL)
        ax.set_xlabel("key position", fontsize=_SMALL)
    ax_prev.set_ylabel("query position", fontsize=_SMALL)
    colorbar = weight_colorbar(figure, ax_ind, _CMAP, fraction=0.08, pad=0.04)
    colorbar.ax.tick_params(labelsize=_SMALL)
    view = {"marked": marked, "dot": dot, "meshes": meshes}
    return view, [marked, dot, *meshes]


def update_induction_view(view: dict[str, Any], curves: Curves, *, step: int) -> dict[str, Any]:
    """Put :func:`induction_state` on the view's artists, in place; return the state."""
    state = induction_state(curves, step)
    view["marked"].set_xdata([state["step"]] * 2)
    view["dot"].set_data([state["step"]], [state["loss"]])
    for mesh, pattern in zip(view["meshes"], state["patterns"]):
        set_cell_colours(mesh, _CMAP(pattern))
    return state


def induction_caption(state: dict[str, Any]) -> str:
    """Two lines: the step and its loss, then the two heads' scores."""
    return (
        f"step {state['step']}: loss on held-out repeats {state['loss']:.2f} nats"
        f" (a uniform guess over 30 tokens: {np.log(30):.2f})\n"
        f"previous-token score {state['previous_token']:.2f},"
        f" induction score {state['induction']:.2f} (mean attention weight on the key they"
        " should find)"
    )


def induction_lab(
    trained: Trained | None = None, tokens: ArrayLike | None = None, present: bool = False
) -> Lab:
    """A live lab: a training-step slider over a trained model's checkpoints, the loss on
    repeats with the step marked, and the two heads' attention patterns and scores.

    Parameters
    ----------
    trained : Trained, optional
        A model of :func:`attnlib.induction.train` (its checkpoints are the slider's steps).
        Default: ``train(INDUCTION_SEED)``, notebook 14's first model (a second or two).
    tokens : array_like of int, shape (n, 2h), optional
        Held-out repeated sequences; the patterns are those of the first. Default:
        :func:`attnlib.examples.induction_held_out` for the model's half length and vocabulary.
    present : bool, default False
        Projector size (see :mod:`attnlib.liveview.present`).

    Returns
    -------
    attnlib.liveview.Lab
        Control ``step`` (the stored steps); ``lab.state`` is :func:`induction_state`'s.
    """
    if trained is None:
        trained = train(INDUCTION_SEED)
    if not isinstance(trained, Trained):
        raise TypeError(
            f"trained must be a Trained record (from attnlib.induction.train); got"
            f" {type(trained).__name__}"
        )
    if tokens is None:
        tokens = induction_held_out(trained.half_length, trained.vocab)
    curves = training_curves(trained, tokens)  # checks tokens
    steps = [int(s) for s in curves.steps]
    controls = {
        "step": widgets.SelectionSlider(options=steps, value=steps[0], description="training step")
    }
    return Lab(
        controls,
        partial(_make_view, curves=curves, batch_loss=np.asarray(trained.loss)),
        partial(update_induction_view, curves=curves),
        figsize=(11.0, 3.6),
        dpi=72,
        title="Induction lab: two heads forming in training",
        caption=induction_caption,
        present=present,
    )
