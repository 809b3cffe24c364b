"""A lab's static form: every state its controls can reach, each with the frame the lab draws
for it, for a page that has no kernel (the site; ``static.js`` is its browser half).

:func:`static_form` walks a lab's states from its current one, move by move, as a reader
would: every option of every control, each move followed by ``sync_controls`` (on detached
copies, as drawing ahead does, :mod:`.ahead`), so that a control whose options follow another
(the token slider of a new sentence) has the options it would have live. Each state's frame is
drawn by the lab itself (:meth:`.lab.Lab.frame_for`): the same bytes the live lab shows there.

Where the states are too many to store, ``keep`` names a grid: per control, which options
stay (a test of the option's label, the text the reader sees). The option a state stands at is
always kept.

The form's manifest (:meth:`StaticForm.manifest`, JSON) holds, per control, its kind
(``slider``, ``buttons``, ``checkbox``, ``select``) and description; per state (by its key, as
:func:`.keys.state_key` writes it) its picture (named by the first 20 hex digits of the SHA-256
of its bytes: equal pictures are stored once), caption, alt text, readouts, and each control's
options and the one it stands at. A move that makes ``sync_controls`` change another control
leads first to the key without that change: ``aliases`` maps it to the state reached. A page
carries the first state's manifest alone (``first_only``) and fetches the whole one when needed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import ipywidgets as widgets

from .controls import readout_text
from .keys import detached_copy, position, reachable, state_key
from .lab import Lab

__all__ = ["STATE_FIELDS", "StaticForm", "StaticState", "control_kind", "static_form"]

#: A state's row in the manifest: the index of its picture (-1: none, an error instead), of its
#: caption, alt text and error in ``texts``, then per control its readout (in ``texts``), its
#: option list (in ``options``), the option it stands at and whether it is disabled.
STATE_FIELDS = ("picture", "caption", "alt", "error", "readouts", "options", "at", "disabled")

#: A grid: per control name, which options stay (called with the option's label).
Keep = Mapping[str, Callable[[str], bool]]


class StaticState(NamedTuple):
    """One state of a static form: its control values, options, picture and texts."""

    values: dict[str, Any]
    options: tuple[tuple[tuple[str, str], ...], ...]  # per control: (position JSON, label)...
    at: tuple[int, ...]  # per control: the option it stands at
    disabled: tuple[bool, ...]
    readouts: dict[str, str]
    picture: str = ""  # the picture's name (SHA-256 prefix), once drawn
    caption: str = ""
    alt: str = ""
    error: str = ""  # the message the lab shows for this state instead of a picture


class StaticForm(NamedTuple):
    """A lab's states and pictures (see the module docstring)."""

    title: str
    controls: tuple[tuple[str, str, str], ...]  # (name, kind, description), in key order
    first: str
    states: dict[str, StaticState]
    aliases: dict[str, str]
    pictures: dict[str, bytes]  # SHA-256 -> bytes
    image_format: str

    def manifest(self, folder: str, first_only: bool = False) -> dict[str, Any]:
        """The form as JSON data for ``static.js`` (texts and option lists stored once; a state is
        a row, :data:`STATE_FIELDS`), its pictures in ``folder`` (relative to the manifest), each
        named ``SHA.FORMAT``. ``first_only``: the first state alone (what a page shows before the
        reader touches the lab)."""
        texts: dict[str, int] = {}
        options: dict[tuple, int] = {}

        def text(value: str) -> int:
            return texts.setdefault(value, len(texts))

        def option_list(value: tuple) -> int:
            return options.setdefault(value, len(options))

        chosen = {self.first: self.states[self.first]} if first_only else self.states
        pictures = list(dict.fromkeys(state.picture for state in chosen.values() if state.picture))
        where = {sha: i for i, sha in enumerate(pictures)}
        states = {  # one row per state, in the order of STATE_FIELDS
            key: [
                where.get(state.picture, -1),
                text(state.caption),
                text(state.alt),
                text(state.error),
                [text(state.readouts.get(name, "")) for name, _, _ in self.controls],
                [option_list(o) for o in state.options],
                list(state.at),
                list(state.disabled),
            ]
            for key, state in chosen.items()
        }
        return {
            "title": self.title,
            "folder": folder,
            "format": self.image_format,
            "controls": [
                {"name": name, "kind": kind, "description": description}
                for name, kind, description in self.controls
            ],
            "first": self.first,
            "texts": list(texts),
            "options": [[list(o) for o in value] for value in options],
            "pictures": pictures,
            "fields": list(STATE_FIELDS),
            "states": states,
            "aliases": {} if first_only else self.aliases,
        }


def control_kind(control: widgets.ValueWidget) -> str:
    """How a static form shows ``control``: ``checkbox``, ``buttons``, ``slider`` or ``select``."""
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return "checkbox"
    if isinstance(control, widgets.ToggleButtons | widgets.RadioButtons):
        return "buttons"
    if isinstance(control, widgets.SelectionSlider | widgets.IntSlider):
        return "slider"
    if isinstance(control, widgets.Dropdown | widgets.Select | widgets.Combobox):
        return "select"
    raise TypeError(
        f"a static form cannot list the values of a {type(control).__name__}"
        " (it takes checkboxes, toggle buttons, sliders of options or integers, and drop-downs)"
    )


def _options(control: widgets.ValueWidget, test: Callable[[str], bool]) -> list[tuple]:
    """Every option of ``control`` as ``(position, value, label)``: those ``test`` keeps, and the
    one it stands at."""
    now = position(control)
    moves = reachable(control)
    if moves is None:  # a text box with suggestions (Combobox): the suggestions
        moves = [(v, v) for v in dict.fromkeys([control.value, *control.options])]
    found = [(place, value, _label(place, value)) for place, value in moves]
    return [option for option in found if option[0] == now or test(option[2])]


def _label(place: Any, value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(place[1]) if isinstance(place, list) else str(value)


def _json(place: Any) -> str:
    return state_key([place])[1:-1]


class _Walk:
    """The states of a lab reachable from a snapshot of its controls (see :func:`static_form`)."""

    def __init__(self, lab: Lab, keep: Keep) -> None:
        unknown = set(keep) - set(lab.controls)
        if unknown:
            raise ValueError(f"keep names no control of the lab: {sorted(unknown)}")
        self.sync = lab.sync_controls
        self.readouts = list(lab.readouts)
        self.tests = {name: keep.get(name, lambda label: True) for name in lab.controls}
        self.states: dict[str, StaticState] = {}
        self.aliases: dict[str, str] = {}

    def describe(self, controls: dict[str, widgets.ValueWidget]) -> tuple[str, StaticState, list]:
        """The key and state of ``controls``, and every option of each (as ``_options``)."""
        options = [_options(c, self.tests[name]) for name, c in controls.items()]
        places = [position(c) for c in controls.values()]
        state = StaticState(
            values={name: c.value for name, c in controls.items()},
            options=tuple(tuple((_json(o[0]), o[2]) for o in opts) for opts in options),
            at=tuple([o[0] for o in opts].index(p) for opts, p in zip(options, places)),
            disabled=tuple(bool(getattr(c, "disabled", False)) for c in controls.values()),
            readouts={name: readout_text(controls[name]) for name in self.readouts},
        )
        return state_key(places), state, options

    def run(self, start: dict[str, widgets.ValueWidget], limit: int) -> str:
        """Walk from ``start`` (detached copies, closed here, as every copy made, whatever is
        raised); return the first state's key."""
        frontier = [start]
        try:
            first, state, options = self.describe(start)
            self.states[first] = state
            walk = [options]
            while frontier:
                controls, options = frontier.pop(), walk.pop()
                try:
                    for copies in self.moves(controls, options):
                        try:
                            key, state, opts = self.describe(copies)
                            if key not in self.states and len(self.states) == limit:
                                raise ValueError(
                                    f"the lab has more than {limit} states: store a grid (keep=...)"
                                )
                        except BaseException:
                            _close(copies)
                            raise
                        if key in self.states:
                            _close(copies)
                            continue
                        self.states[key] = state
                        frontier.append(copies)
                        walk.append(opts)
                finally:
                    _close(controls)
        finally:
            for controls in frontier:
                _close(controls)
        return first

    def moves(self, controls: dict, options: list) -> Iterator[dict]:
        """Detached copies of ``controls`` after each move to another option, synced."""
        places = [position(c) for c in controls.values()]
        for here, (name, opts) in enumerate(zip(controls, options)):
            for place, value, _ in opts:
                moved = state_key([*places[:here], place, *places[here + 1 :]])
                if place == places[here] or moved in self.states or moved in self.aliases:
                    continue  # a state found before (a state key names what a move reaches)
                copies = {n: detached_copy(c) for n, c in controls.items()}
                try:
                    copies[name].value = value
                    if self.sync is not None:
                        self.sync(copies)
                except Exception:  # the lab refuses the move: not a state to store
                    _close(copies)
                    continue
                after = state_key([position(c) for c in copies.values()])
                if moved != after:
                    self.aliases[moved] = after
                yield copies


def _close(controls: dict) -> None:
    for control in controls.values():
        control.close()


def static_form(lab: Lab, keep: Keep | None = None, limit: int = 5000) -> StaticForm:
    """Every state of ``lab`` reachable from its current one, each with its frame.

    Parameters
    ----------
    lab : attnlib.liveview.Lab
        Left standing on its last state drawn; make one for this.
    keep : mapping of str to callable ``(label) -> bool``, optional
        A grid: per control, the options kept (by their label; the option a state stands at is
        always kept). Default: every option of every control.
    limit : int, default 5000
        More states than this raise a ValueError (store a grid).

    Returns
    -------
    StaticForm
        The states drawn in the order of their static pictures (one full draw per background).
    """
    if not isinstance(lab, Lab):
        raise TypeError(f"lab must be an attnlib.liveview.Lab; got {type(lab).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer; got {limit!r}")
    if not_callable := [name for name, test in (keep or {}).items() if not callable(test)]:
        raise TypeError(f"keep must map control names to functions of a label; not: {not_callable}")
    walk = _Walk(lab, keep or {})
    kinds = tuple((n, control_kind(c), c.description) for n, c in lab.controls.items())
    snapshot = {name: detached_copy(control) for name, control in lab.controls.items()}
    first = walk.run(snapshot, limit)
    pictures: dict[str, bytes] = {}
    static = lab.static_key_of
    drawn = {}
    for key, state in sorted(walk.states.items(), key=lambda item: repr(static(item[1].values))):
        try:
            frame = lab.frame_for(state.values, state.readouts)
        except Exception as err:  # the live lab shows this message for that state
            drawn[key] = state._replace(error=str(err))
            continue
        digest = hashlib.sha256(frame.picture).hexdigest()[:20]
        pictures[digest] = frame.picture
        drawn[key] = state._replace(picture=digest, caption=frame.caption, alt=frame.alt)
    states = {key: drawn[key] for key in walk.states}
    return StaticForm(
        lab.title_text, kinds, first, states, walk.aliases, pictures, lab.live.image_format
    )
