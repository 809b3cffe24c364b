"""Drawing ahead: the frames one move away, drawn between moves, so that a move shows at once.

Every move of a lab's control would cost a round trip: the browser sends the new value, the kernel
draws, the picture travels back (60-90 ms on a 2-core laptop; where the time goes is in
``benchmarks/lab_latency_in_browser.py``). So, once a browser's frame store
(:mod:`.frames`) has said hello, the kernel draws, between moves, the frames of every
state one move away from the current one: every value of every slider, toggle and checkbox,
nearest first, the other controls held where they are (and moved as ``sync_controls`` moves them),
and sends each one once. A move to such a state shows its frame in the browser at once; the kernel
still gets the new value (``lab.state`` follows) but draws no frame the browser holds.

:class:`DrawingAhead` owns the queue of states to draw and the exact record of what the browser
holds (it tells the browser which frames to drop). It draws one frame per turn of the event loop of
the thread that started it, so that a move from the browser waits for at most one frame; frames
whose static parts are not cached yet (a full draw, 10-20x a partial one) come last. Without a
running loop (plain Python, tests) it draws every frame at once. Its owner holds the figure's lock
around every call; a start on another thread ends the drawing under way (a generation number).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import ipywidgets as widgets

from .controls import readout_text
from .frames import Frame, FrameStore
from .keys import detached_copy, position, reachable, state_key

__all__ = ["MAX_PREDRAWN", "Ahead", "DrawingAhead", "running_loop", "states_ahead"]

#: How many state keys a browser keeps frames under, per lab (oldest dropped first; a frame kept
#: under two keys counts twice); a notebook-size frame is ~30 kB, a present-size one ~75 kB.
MAX_PREDRAWN = 600


class Ahead(NamedTuple):
    """A state to draw ahead: its keys, its control values and the readouts it shows."""

    keys: tuple[str, ...]
    values: dict[str, Any]
    readouts: dict[str, str]


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running this code (the kernel's, in a widget handler), or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class DrawingAhead:
    """The frames a lab draws ahead and sends to its browser's store, and the record of them.

    Parameters
    ----------
    store : FrameStore
    lock : threading.RLock
        The figure's lock, held around every frame drawn.
    capacity : int, default MAX_PREDRAWN

    Attributes
    ----------
    sent : OrderedDict of str to None
        The keys the browser holds a frame under, oldest first.
    """

    def __init__(self, store: FrameStore, lock: Any, capacity: int = MAX_PREDRAWN) -> None:
        self.store = store
        self.lock = lock
        self.capacity = capacity
        self.sent: OrderedDict[str, None] = OrderedDict()
        self._queue: Iterator[Ahead] = iter(())
        self._later: list[Ahead] | None = None
        self._draw: Callable[[Ahead], Frame | None] = lambda ahead: None
        self._cheap: Callable[[Ahead], bool] = lambda ahead: True
        self._done: Callable[[], None] = lambda: None
        self._generation = 0

    def holds(self, key: str) -> bool:
        """Does the browser hold a frame for ``key``?"""
        return key in self.sent

    def forget(self) -> None:
        """A browser's store (re)started empty."""
        self.sent.clear()

    def send(self, keys: Sequence[str], frame: Frame) -> None:
        """Send ``frame`` under ``keys``; the oldest keys beyond ``capacity`` are dropped."""
        for key in keys:
            self.sent[key] = None
            self.sent.move_to_end(key)
        drop = []
        while len(self.sent) > self.capacity:
            drop.append(self.sent.popitem(last=False)[0])
        self.store.send_frame(keys, frame, drop)

    def start(
        self,
        states: Iterable[Ahead],
        draw: Callable[[Ahead], Frame | None],
        cheap: Callable[[Ahead], bool],
        done: Callable[[], None],
    ) -> None:
        """(Re)start drawing ahead, ending the drawing under way.

        Parameters
        ----------
        states : iterable of Ahead
            Nearest first.
        draw : callable ``(ahead) -> Frame or None``
            Draws a state's frame (None: that state cannot be drawn; a move there shows why).
        cheap : callable ``(ahead) -> bool``
            Whether its static parts are cached (a partial redraw).
        done : callable ``() -> None``
            Called when every frame is sent (the lab puts its view back on its state).
        """
        self._generation += 1
        self._queue, self._later = iter(states), []
        self._draw, self._cheap, self._done = draw, cheap, done
        loop = running_loop()
        if loop is None:
            while self._next():
                pass
        else:
            loop.call_soon(self._step, loop, self._generation)

    def _step(self, loop: asyncio.AbstractEventLoop, generation: int) -> None:
        with self.lock:
            if generation == self._generation and self._next():
                loop.call_soon(self._step, loop, generation)

    def _next(self) -> bool:
        """Draw and send the next frame the browser lacks; False when there is none left."""
        for ahead in self._queue:
            if all(key in self.sent for key in ahead.keys):
                continue
            if self._later is not None and not self._cheap(ahead):
                self._later.append(ahead)
                continue
            frame = self._draw(ahead)
            if frame is None:
                continue
            self.send(ahead.keys, frame)
            return True
        if self._later:  # now the frames that need a full draw
            self._queue, self._later = iter(self._later), None
            return self._next()
        self._done()
        return False


SyncControls = Callable[[dict[str, widgets.ValueWidget]], None] | None


def states_ahead(
    controls: dict[str, widgets.ValueWidget], sync_controls: SyncControls, readouts: Iterable[str]
) -> Iterator[Ahead]:
    """The current state, then every state one move of a control away, nearest first.

    Read from one snapshot of the controls (detached copies), so that a control moved on another
    thread meanwhile cannot give a frame the key of another state. ``readouts`` names the
    controls whose readout texts a frame shows.
    """
    readouts = list(readouts)
    snapshot = {name: detached_copy(control) for name, control in controls.items()}
    try:
        if sync_controls is not None:  # a move under way may not be synced yet
            sync_controls(snapshot)
        yield from _states_around(snapshot, sync_controls, readouts)
    except Exception:  # the current state is refused: its error is shown
        return
    finally:
        for control in snapshot.values():
            control.close()


def _states_around(
    snapshot: dict[str, widgets.ValueWidget], sync_controls: SyncControls, readouts: list[str]
) -> Iterator[Ahead]:
    positions = [position(control) for control in snapshot.values()]
    values = {name: control.value for name, control in snapshot.items()}
    yield Ahead((state_key(positions),), values, {n: readout_text(snapshot[n]) for n in readouts})
    axes = []  # (name, its place in the key, its reachable moves, where it is now)
    for here, name in enumerate(snapshot):
        moves = reachable(snapshot[name]) or []
        places = [place for place, _ in moves]
        if positions[here] in places:
            axes.append((name, here, moves, places.index(positions[here])))
    for distance in range(1, max((len(axis[2]) for axis in axes), default=0)):
        for name, here, moves, now in axes:
            for step in (now + distance, now - distance):
                if 0 <= step < len(moves):
                    place, value = moves[step]
                    moved = state_key([*positions[:here], place, *positions[here + 1 :]])
                    try:
                        yield _after_move(snapshot, sync_controls, readouts, name, value, moved)
                    except Exception:  # sync_controls refused the move: a move there will
                        continue  # show the error; nothing to draw ahead


def _after_move(
    snapshot: dict[str, widgets.ValueWidget],
    sync_controls: SyncControls,
    readouts: list[str],
    name: str,
    value: Any,
    key: str,
) -> Ahead:
    """The state ``key`` that moving ``name`` to ``value`` leads to, ``sync_controls`` run on
    detached copies of the snapshot (no message reaches the browser). The frame is keyed as the
    browser sees the state at once (``key``) and after the kernel's answer."""
    copies = {n: detached_copy(control) for n, control in snapshot.items()}
    try:
        copies[name].value = value
        if sync_controls is not None:
            sync_controls(copies)
        after = state_key([position(control) for control in copies.values()])
        values = {n: control.value for n, control in copies.items()}
        texts = {n: readout_text(copies[n]) for n in readouts}
    finally:
        for control in copies.values():
            control.close()
    return Ahead(tuple(dict.fromkeys((key, after))), values, texts)
