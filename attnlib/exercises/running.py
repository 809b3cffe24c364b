"""Running a student's function: on copies of the arguments, within :data:`TIME_LIMIT`, with its
errors told in words.

The time limit: in the main thread (a notebook's kernel, on Linux and macOS) a SIGALRM interval
timer raises inside the student's Python code. Where there is no SIGALRM (Windows, where a
notebook's kernel also checks in the main thread) or off the main thread, a helper thread runs
the function, and on a time-out :func:`_stop_thread` raises inside that thread, so that an
endless loop does not spin on, taking a core and the GIL, for the rest of the kernel's life.
Neither can interrupt a single long numpy call (C code), which ends before the check does.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .answers import _same_array
from .verdicts import Wrong, _NotImplementedHere, _Stop

#: Seconds a student's function may run on one case before the check stops it.
TIME_LIMIT = 3.0


class StudentRun:
    """One grading of a student's function: calls it on copies of the arguments, with a time
    limit, and remembers what it saw (in-place changes to the inputs).

    Graders call ``run(case, *args)``; it returns what the function returned, or raises
    :class:`Wrong` naming ``case`` (the function raised, or ran out of time: then grading stops).
    """

    def __init__(self, func: Callable, time_limit: float = TIME_LIMIT) -> None:
        self.func = func
        self.time_limit = time_limit
        self.changed_inputs: list[str] = []

    def __call__(self, case: str, *args: Any) -> Any:
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        try:
            with np.errstate(all="ignore"):
                result = _call_with_time_limit(self.func, copies, self.time_limit)
        except _TimeUp:
            raise _Stop(
                f"On {case}, your function was still running after {self.time_limit:g} s, so the"
                f" check stopped it (an endless loop, or a loop that never meets its exit?)."
            ) from None
        except NotImplementedError:
            raise _NotImplementedHere(
                f"On {case}, your function raised NotImplementedError: it handles some cases"
                f" but not this one."
            ) from None
        except Exception as err:  # the student's bug, reported in words
            raise Wrong(
                f"On {case}, your function raised {type(err).__name__}: {str(err).strip()}"
            ) from None
        changed = any(
            isinstance(before, np.ndarray) and not _same_array(before, after)
            for before, after in zip(args, copies)
        )
        if changed and case not in self.changed_inputs:
            self.changed_inputs.append(case)
        return result


class _TimeUp(BaseException):
    """The time limit struck (a BaseException, so that a student's ``except Exception`` in an
    endless loop cannot swallow it)."""


def _call_with_time_limit(func: Callable, args: list, seconds: float) -> Any:
    """``func(*args)``, interrupted after ``seconds`` (the module docstring says how)."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):

        def alarm(signum, frame):
            raise _TimeUp

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return func(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = func(*args)
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        _stop_thread(worker)
        raise _TimeUp
    if "error" in box:
        raise box["error"]
    return box["value"]


def _stop_thread(thread: threading.Thread, patience: float = 1.0) -> None:
    """Raise :class:`_TimeUp` inside ``thread`` (at its next Python instruction), again every
    10 ms while it lives, for at most ``patience`` seconds: a loop that catches even a
    BaseException and goes on is then left running, as before."""
    ident = ctypes.c_ulong(thread.ident)
    for _ in range(max(1, int(patience / 0.01))):
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, ctypes.py_object(_TimeUp))
        thread.join(0.01)
        if not thread.is_alive():
            return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, None)  # no exception left pending
