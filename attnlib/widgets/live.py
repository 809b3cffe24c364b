"""The machinery every live lab shares: a figure drawn once and updated in place, fast.

A lab is a row of controls above a matplotlib figure that follows them at once. The figure is a
plain :class:`matplotlib.figure.Figure` drawn by Agg into an :class:`ipywidgets.Image`, so a lab
does not care which pyplot backend the notebook uses: the rest of the notebook stays
``%matplotlib inline``, and nothing depends on ipympl.

Speed comes from partial redraws ("blitting"). The static parts of the figure (axes, ticks, labels,
legends) are drawn once and cached as a background bitmap. Each update restores that bitmap, draws
only the *animated* artists (the ones the update changes), and encodes the result as a PNG
(compress level 1) that goes to the browser. Keep axis limits fixed while a lab runs: the
background is only redrawn when you call ``refresh(full=True)``.

How to write a lab
------------------
Write two plain functions and hand them to :class:`Lab`::

    from attnlib.widgets.live import Lab, slider_style

    def make_view(fig):
        # build axes and artists ONCE; return (view, animated_artists)
        ax = fig.add_subplot()
        ax.set_xlim(0, 1); ax.set_ylim(0, 1)          # fixed limits
        (line,) = ax.plot([], [])
        label = ax.set_title(" ")
        return {"line": line, "label": label}, [line, label]

    def update_view(view, *, slope, shifted):
        # set_data / set_height / set_text on the view's artists; return the numbers shown
        y = slope * X + (0.1 if shifted else 0.0)
        view["line"].set_data(X, y)
        view["label"].set_text(f"slope {slope:.2f}")
        return {"slope": slope, "y": y}

    def example_lab(slope=0.5):
        controls = {
            "slope": widgets.FloatSlider(value=slope, min=0, max=1, description="slope",
                                         style=slider_style()),
            "shifted": widgets.Checkbox(value=False, description="shift up"),
        }
        return Lab(controls, make_view, update_view, figsize=(5, 3), title="An example lab")

The keys of ``controls`` are the keyword arguments of ``update_view``. Every control must have a
``description`` (Lab checks). ``Lab`` observes each control's ``value``; on a change it calls
``update_view(view, **values)``, stores what it returns in ``lab.state``, and refreshes the
picture. An exception inside the update is shown to the user in the lab's ``errors`` Output (and
kept in ``lab.last_error``), never swallowed; the next successful update clears it.

Tests drive a lab without a browser: set ``lab.controls["slope"].value = 0.9`` and read
``lab.state``, the artists in ``lab.view`` or ``lab.frames``. ``lab.render_naive()`` rebuilds the
figure from scratch and renders it to PNG the way ``interact`` with the inline backend does, for
the speed benchmark (``benchmarks/lab_update_speed.py``, which discovers every ``*_lab`` in
``attnlib.widgets.__all__``).

In a saved notebook, the lab's output carries a PNG of its state when it was displayed beside the
widget view, so GitHub, nbviewer, static HTML and an untrusted JupyterLab show the picture where
no kernel runs; a live frontend shows the widget.
"""

from __future__ import annotations

import base64
import io
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import ipywidgets as widgets
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

__all__ = ["Lab", "LiveFigure", "slider_style"]

#: zlib level for the PNG frames: 1 encodes ~3x faster than the default 6 for ~10% more bytes.
PNG_COMPRESS_LEVEL = 1


def slider_style(width: str = "initial") -> dict[str, str]:
    """The ``style`` argument that keeps a control's whole description readable."""
    return {"description_width": width}


class LiveFigure:
    """A matplotlib figure rendered by Agg into an ``ipywidgets.Image`` and redrawn in place.

    Parameters
    ----------
    figsize : (float, float)
        Size in inches.
    dpi : float
        Pixels per inch; the image is ``figsize * dpi`` pixels.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        Build your axes and artists on it once.
    image : ipywidgets.Image
        The widget that shows the latest frame (PNG bytes).
    frames : int
        How many frames have been rendered (tests use it to see that an update reached the
        picture).
    """

    def __init__(self, figsize: tuple[float, float] = (9.0, 3.0), dpi: float = 80) -> None:
        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        width, height = self.canvas.get_width_height()
        self.image = widgets.Image(
            format="png", layout=widgets.Layout(width=f"{width}px", height=f"{height}px")
        )
        self._animated: list[Artist] = []
        self._background = None
        self.frames = 0

    def animate(self, artists: Iterable[Artist]) -> None:
        """Mark ``artists`` as the ones updates change: they are left out of the background."""
        for artist in artists:
            if not isinstance(artist, Artist):
                raise TypeError(
                    f"animated artists must be matplotlib Artists; got {type(artist).__name__}"
                )
            artist.set_animated(True)
            self._animated.append(artist)
        self._background = None

    def refresh(self, full: bool = False) -> None:
        """Redraw and push a new frame to ``image``.

        Parameters
        ----------
        full : bool, default False
            Redraw everything and re-cache the background. Needed only when a static part (axis
            limits, tick labels, a legend) changed; otherwise only animated artists are redrawn.
        """
        if full or self._background is None:
            self.canvas.draw()  # draws everything except the animated artists
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        else:
            self.canvas.restore_region(self._background)
        for artist in self._animated:
            if artist.get_visible():
                self.figure.draw_artist(artist)
        self.image.value = self.png()
        self.frames += 1

    def png(self) -> bytes:
        """The current canvas as PNG bytes (RGB, zlib level ``PNG_COMPRESS_LEVEL``)."""
        size = self.canvas.get_width_height()
        # frombuffer wraps Agg's buffer without a copy; dropping alpha makes the PNG smaller
        rgba = PILImage.frombuffer("RGBA", size, self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buffer = io.BytesIO()
        rgba.convert("RGB").save(buffer, format="png", compress_level=PNG_COMPRESS_LEVEL)
        return buffer.getvalue()


class Lab(widgets.VBox):
    """A live lab: controls above a :class:`LiveFigure`, and an Output that shows errors.

    Parameters
    ----------
    controls : mapping of str to ipywidgets ValueWidget
        Each key is a keyword argument of ``update_view``; each widget needs a ``description``.
    make_view : callable ``(figure) -> (view, animated_artists)``
        Builds the axes and artists once; ``view`` is anything ``update_view`` needs (a dict of
        artists, say); ``animated_artists`` are the artists updates change.
    update_view : callable ``(view, **values) -> state``
        Sets the artists' data from the control values (``set_data``, ``set_height``,
        ``set_text``) and returns the numbers it showed (kept as ``lab.state``).
    figsize : (float, float), default (9, 3)
    dpi : float, default 80
    title : str, optional
        A line of HTML above the controls.

    Attributes
    ----------
    controls, view, state, live (the LiveFigure), errors (an ipywidgets.Output), last_error.
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        make_view: Callable[[Figure], tuple[Any, Iterable[Artist]]],
        update_view: Callable[..., Any],
        *,
        figsize: tuple[float, float] = (9.0, 3.0),
        dpi: float = 80,
        title: str | None = None,
    ) -> None:
        for name, control in controls.items():
            if not isinstance(control, widgets.ValueWidget):
                raise TypeError(
                    f"control {name!r} must be an ipywidgets value widget; got"
                    f" {type(control).__name__}"
                )
            if not getattr(control, "description", ""):
                raise ValueError(f"control {name!r} has no description; give it one")
        self.controls = dict(controls)
        self._make_view = make_view
        self._update_view = update_view
        self._figsize = figsize
        self._dpi = dpi
        self.live = LiveFigure(figsize=figsize, dpi=dpi)
        self.view, animated = make_view(self.live.figure)
        self.live.animate(animated)
        self.errors = widgets.Output()
        self.last_error: BaseException | None = None
        self.state: Any = None
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        rows = [
            widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        ]
        super().__init__(children=[*header, *rows, self.live.image, self.errors])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Apply the controls' values to the figure; show any error in ``errors``."""
        try:
            self.state = self._update_view(self.view, **self.values())
            self.live.refresh()
        except Exception as err:  # shown to the user, kept for tests
            self.last_error = err
            self.errors.outputs = ()
            self.errors.append_stderr(
                "The lab could not update:\n" + "".join(traceback.format_exception(err))
            )
        else:
            if self.last_error is not None:
                self.last_error = None
                self.errors.outputs = ()

    def _on_change(self, change: dict) -> None:
        self.update()

    def render_naive(self) -> bytes:
        """Rebuild the figure from scratch and render it to PNG, as ``interact`` + inline does.

        Used by the speed benchmark as the baseline; the lab itself never calls it.
        """
        figure = Figure(figsize=self._figsize, dpi=self._dpi)
        FigureCanvasAgg(figure)
        view, _ = self._make_view(figure)
        self._update_view(view, **self.values())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view, plus a PNG of the current picture for renderers without a kernel."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return bundle
        bundle["image/png"] = base64.b64encode(self.live.image.value).decode("ascii")
        bundle["text/plain"] = (
            "A live lab (run the notebook with a kernel to move its controls); the picture shows"
            " its default state."
        )
        return bundle
