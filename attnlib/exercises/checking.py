"""The machinery behind every exercise: grade an answer, and print feedback that teaches.

An exercise is an object with four methods a student calls in a notebook cell:

``check(answer)``
    Prints one of three verdicts: ``Correct!``, ``Not yet.`` (with a message that says what
    went wrong, in the student's terms) or ``Not answered yet`` (the placeholder ``...``,
    ``None``, no argument at all, or a function that raises ``NotImplementedError`` on every
    case is still in place). It never prints the solution and never lets a traceback through:
    a malformed answer or a student's function that raises, loops for ever (stopped after
    :data:`TIME_LIMIT` seconds) or returns complex numbers gets a message naming what was
    expected. ``Correct!`` stands alone on the first line, so that a collapsed output shows
    nothing more.
``hint()`` / ``solution()``
    Print a hint / the worked solution.
``check_solution(answer)``
    What a notebook's hidden solution cell calls: the same verdict as ``check``, but not
    counted as the student's answer by :func:`progress_report`.

Every verdict is plain text (printed, so a notebook stores it as a ``stdout`` stream): it reads
the same in JupyterLab, on GitHub and in a terminal, and nbval compares it exactly. Lines are
wrapped at :data:`WIDTH` characters. The checker's own arithmetic runs under an
``np.errstate`` of its own, so a notebook's ``np.seterr(all="raise")`` cannot break it.

Graders are written with two exceptions: raise :class:`Wrong` with a message, or
:class:`Unanswered`; :meth:`Exercise.evaluate` turns them into a :class:`Feedback`. Tests call
``evaluate`` and read ``Feedback.status`` and ``Feedback.message``.

State: each exercise object keeps its own :class:`Record` of this session (checks, whether one
was right, hint and solution shown); :func:`progress_report` reads those records and nothing
else. ``evaluate`` and ``check_solution`` leave the record alone.
"""

from __future__ import annotations

import ctypes
import decimal
import itertools
import math
import numbers
import re
import signal
import textwrap
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "TIME_LIMIT",
    "ArrayExercise",
    "ChoiceExercise",
    "Exercise",
    "Feedback",
    "FunctionExercise",
    "NumberExercise",
    "Record",
    "SetExercise",
    "ShapeExercise",
    "StepsExercise",
    "StudentRun",
    "Unanswered",
    "Wrong",
    "close",
    "progress_report",
    "result_array",
    "result_tuple",
    "sentence",
    "sentences",
    "vec",
]

#: Longest printed line (the team prints lines shorter than 90 characters).
WIDTH = 88

#: Seconds a student's function may run on one case before the check stops it.
TIME_LIMIT = 3.0

CORRECT = "correct"
INCORRECT = "incorrect"
UNANSWERED = "unanswered"


class Wrong(Exception):
    """Raised by a grader: the answer is wrong (or malformed); the message says why."""


class Unanswered(Exception):
    """Raised by a grader: the placeholder is still in place."""


class _Stop(Wrong):
    """Wrong, and grading stops at once (the student's function ran out of time)."""


class _NotImplementedHere(Wrong):
    """The student's function raised NotImplementedError on this case."""


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer.

    Attributes
    ----------
    status : str
        ``"correct"``, ``"incorrect"`` or ``"unanswered"``.
    message : str
        What the student reads after the verdict (may be empty).
    """

    status: str
    message: str = ""

    @property
    def correct(self) -> bool:
        """True if the answer was right."""
        return self.status == CORRECT

    def __str__(self) -> str:
        if self.status == CORRECT:  # alone on its line: a collapsed output shows only this
            return wrap(f"Correct!\n{self.message}".rstrip())
        head = {INCORRECT: "Not yet.", UNANSWERED: "Not answered yet."}[self.status]
        return wrap(f"{head} {self.message}".rstrip())


@dataclass
class Record:
    """What one student did with one exercise in this session (read by :func:`progress_report`).

    Attributes
    ----------
    checks : int
        Calls of ``check`` with an answer (placeholders not counted).
    correct : bool
        True once a check was right.
    hinted, revealed : bool
        True once ``hint()`` / ``solution()`` was called.
    """

    checks: int = 0
    correct: bool = False
    hinted: bool = False
    revealed: bool = False

    @property
    def touched(self) -> bool:
        """True if the student did anything with the exercise."""
        return bool(self.checks or self.hinted or self.revealed)


def wrap(text: str) -> str:
    """Wrap each line of ``text`` at :data:`WIDTH`; lines starting with 4 spaces (code) stay.

    Short bracketed groups, such as a shape ``(B, T, d_k)`` or a vector ``[0.25, 0.75]``, are
    never split across lines.
    """
    lines = []
    for line in text.split("\n"):
        line = line.rstrip()
        if line.startswith("    ") or len(line) <= WIDTH:
            lines.append(line)
            continue
        glued = _SHORT_GROUP.sub(lambda m: m.group().replace(" ", "\0"), line)
        if max(len(word) for word in glued.split()) > WIDTH:  # only in contrived text
            glued = line
        lines.extend(w.replace("\0", " ") for w in textwrap.wrap(glued, WIDTH))
    return "\n".join(lines)


_SHORT_GROUP = re.compile(r"\([^()]{1,40}\)|\[[^\[\]]{1,40}\]|`[^`]{1,50}`")


def say(text: str) -> None:
    """Print ``text`` and its newline in one write, so a notebook stores one output chunk."""
    print(text + "\n", end="")


_NO_ANSWER = object()


def is_placeholder(answer: object) -> bool:
    """True for ``...`` and ``None``, the placeholders a notebook leaves for the student."""
    return answer is Ellipsis or answer is None or answer is _NO_ANSWER


def fmt(x: float) -> str:
    """A number in a short, stable form: whole numbers with thousands separators, else 6
    significant digits."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.6g}"


def vec(a: Any, digits: int = 4) -> str:
    """An array as nested lists of numbers rounded to ``digits`` decimals, e.g. ``[0.5, 1]``.

    Independent of numpy's print options, so the text a notebook stores is stable.
    """
    arr = np.asarray(a)
    if arr.ndim == 0:
        value = float(arr)
        return f"{value}" if not np.isfinite(value) else f"{round(value, digits):g}"
    return "[" + ", ".join(vec(x, digits) for x in arr) + "]"


def complex_text(z: complex) -> str:
    """A complex number as a student writes it, e.g. ``0.09+0j`` or ``1-2.5j``.

    The real part is rounded as :func:`vec` rounds; the imaginary part keeps 6 significant
    digits, so that a tiny one (``1e-09j``) is not shown as 0.
    """
    z = complex(z)
    sign = "-" if math.copysign(1.0, z.imag) < 0 else "+"
    return f"{vec(z.real)}{sign}{abs(z.imag):g}j"


def sentence(text: str) -> str:
    """``text`` ending in exactly one full stop: one is added unless it already ends a sentence.

    A sentence ends in ".", "!" or "?" (an ellipsis included), possibly inside closing
    brackets, so a message that already ends in a full stop is not given a second one (".."),
    and a truncated :func:`short_repr` ("[1, 2, ...") is not given a fourth.
    """
    text = text.rstrip()
    if not text or text.rstrip(")")[-1:] in (".", "!", "?"):
        return text
    return text + "."


def sentences(*parts: str) -> str:
    """Join sentences with one space, each ending in exactly one full stop (:func:`sentence`).

    Use it wherever a message (a caught :class:`Wrong`, a listed mistake, a note) is followed
    or preceded by another sentence: ``sentences(str(wrong), "Keep the summed axis...")``.
    Empty parts are left out.
    """
    return " ".join(sentence(p) for p in parts if p.strip())


def short_repr(x: Any, limit: int = 60) -> str:
    """``repr(x)``, cut to ``limit`` characters."""
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _untensor(x: Any) -> Any:
    """A PyTorch (or similar) tensor as a numpy array, without importing torch (duck-typed)."""
    if hasattr(x, "detach") and hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return x.detach().cpu().numpy()
        except Exception:  # an exotic object with these names: leave it to the checks below
            return x
    return x


class Exercise:
    """One exercise: ``check(answer)``, ``hint()``, ``solution()``.

    Subclasses implement :meth:`grade`, which returns a message for a right answer and raises
    :class:`Wrong` or :class:`Unanswered` otherwise.

    Parameters
    ----------
    name : str
        How the student calls it, e.g. ``"ch02.score_variance"``; used in the messages.
    hint, solution : str
        Printed by :meth:`hint` and :meth:`solution`.
    revisit : str, optional
        The notebook to reread after a miss, e.g. ``"02_why_sqrt_dk (why divide by sqrt(d_k))"``;
        every "Not yet." message then ends with it.
    """

    placeholder_help = "Replace the ... with your answer, then run the cell again."

    def __init__(self, name: str, hint: str, solution: str, revisit: str | None = None) -> None:
        self.name = name
        self._hint = hint
        self._solution = solution
        self.revisit = revisit
        self.record = Record()

    def grade(self, answer: Any) -> str:
        """Return the message for a right ``answer``; raise Wrong or Unanswered otherwise."""
        raise NotImplementedError

    def evaluate(self, answer: Any = _NO_ANSWER) -> Feedback:
        """Grade ``answer`` and return the :class:`Feedback` (prints nothing, records nothing)."""
        if answer is _NO_ANSWER:
            return Feedback(
                UNANSWERED,
                f"Pass your answer to the check, like {self.name}.check(your_answer).",
            )
        try:
            with np.errstate(all="ignore"):  # the checker's arithmetic, whatever np.seterr says
                return Feedback(CORRECT, self.grade(answer))
        except Unanswered:
            return Feedback(UNANSWERED, self.placeholder_help)
        except Wrong as wrong:
            message = str(wrong)
            if self.revisit:
                message += "\n" + sentence(f"Revisit {self.revisit}")
            return Feedback(INCORRECT, f"{message}\nStuck? {self.name}.hint()")

    def check(self, answer: Any = _NO_ANSWER) -> None:
        """Print whether ``answer`` is right, and why not if it is not."""
        feedback = self.evaluate(answer)
        if feedback.status != UNANSWERED:
            self.record.checks += 1
            self.record.correct |= feedback.correct
        say(str(feedback))

    def check_solution(self, answer: Any) -> None:
        """Print the verdict on the notebook's own solution (not counted as the student's)."""
        say(str(self.evaluate(answer)))

    def hint(self) -> None:
        """Print a hint."""
        self.record.hinted = True
        say(wrap(f"Hint: {self._hint}"))

    def solution(self) -> None:
        """Print the worked solution."""
        self.record.revealed = True
        say(wrap(f"Solution:\n{self._solution.strip(chr(10))}"))

    def __repr__(self) -> str:
        return f"<exercise {self.name}: call .check(answer), .hint() or .solution()>"


def progress_report(modules: Iterable[ModuleType]) -> str:
    """What the student did with the exercises of ``modules`` in this session, as text.

    A module is listed when one of its exercises was checked, hinted or revealed; each of its
    exercises gets one line. Reads only the exercises' :class:`Record`.
    """
    blocks = []
    for module in modules:
        exercises = [
            (name, getattr(module, name))
            for name in getattr(module, "__all__", ())
            if isinstance(getattr(module, name), Exercise)
        ]
        if not any(e.record.touched for _, e in exercises):
            continue
        width = max(len(name) for name, _ in exercises)
        lines = [module.__name__.rsplit(".", 1)[-1]]
        for name, exercise in exercises:
            r = exercise.record
            if r.correct:
                state = "answered correctly"
            elif r.checks:
                state = "tried, not right yet"
            else:
                state = "not answered"
            extras = [f"{r.checks} check{'s' * (r.checks != 1)}"] if r.checks else []
            extras += ["hint seen"] * r.hinted + ["solution shown"] * r.revealed
            tail = f" ({', '.join(extras)})" if extras else ""
            lines.append(f"  {name:<{width}}  {state}{tail}")
        blocks.append("\n".join(lines))
    if not blocks:
        return "No exercise checked, hinted or revealed yet in this session."
    return "\n".join(blocks)


# --- numbers ------------------------------------------------------------------------------------


def as_number(answer: Any) -> float:
    """``answer`` as a finite float, or Wrong naming what was expected.

    Accepts ints, floats, Fractions, Decimals, numpy scalars, one-element arrays and 0-d
    tensors; refuses text, booleans, complex numbers and numbers beyond float range.
    """
    answer = _untensor(answer)
    if isinstance(answer, np.ndarray):
        if answer.size != 1:
            raise Wrong(
                f"The answer should be a single number (like 3.5); you gave an array of shape"
                f" {answer.shape}."
            )
        answer = answer.reshape(()).item() if answer.dtype != np.longdouble else answer.item()
    if isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, str):
        raise Wrong(
            sentence(
                f"The answer should be a number, not text: write it without quotes; you gave"
                f" {short_repr(answer)}"
            )
        )
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        raise Wrong(f"The answer should be a real number; you gave the complex number {answer}.")
    if isinstance(answer, bool) or not isinstance(answer, (numbers.Real, decimal.Decimal)):
        raise Wrong(
            sentence(
                f"The answer should be a single number (like 3.5); you gave"
                f" {type(answer).__name__} {short_repr(answer)}"
            )
        )
    try:
        value = float(answer)
    except OverflowError:
        value = math.inf
    if math.isinf(value) and not (isinstance(answer, float) and math.isinf(answer)):
        raise Wrong(
            "Your answer is larger than any float can hold (about 1.8e308); the value asked"
            " for is far smaller: look for a power or a product applied once too often."
        )
    if not math.isfinite(value):
        raise Wrong(f"The answer should be a finite number; you gave {value}.")
    return value


class NumberExercise(Exercise):
    """A single number, accepted within ``atol + rtol * |expected|``.

    ``mistakes`` pairs typical wrong values with the message that explains them. ``factors``
    are mistakes that compound: groups of alternatives ``[(factor, message), ...]``, of which a
    wrong answer may make one per group; an answer equal to ``expected`` times the factors of
    such a combination is told every mistake in it. All are matched with the same tolerance,
    and the sizes of an exercise are chosen so that no combination lands on the right answer
    (``tests/exercises/test_exercises.py`` enumerates them). ``correct_message`` is printed after
    "Correct!".
    """

    def __init__(
        self,
        name: str,
        expected: float,
        *,
        hint: str,
        solution: str,
        correct_message: str = "",
        mistakes: Sequence[tuple[float, str]] = (),
        factors: Sequence[Sequence[tuple[float, str]]] = (),
        rtol: float = 1e-3,
        atol: float = 0.0,
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.expected = float(expected)
        self.mistakes = [(float(v), m) for v, m in mistakes]
        self.factors = [[(float(f), m) for f, m in group] for group in factors]
        self.rtol, self.atol = rtol, atol
        self.correct_message = correct_message

    def close_to(self, value: float, target: float) -> bool:
        """True if ``value`` is accepted as ``target`` (the exercise's tolerance)."""
        return abs(value - target) <= self.atol + self.rtol * abs(target)

    def combinations(self) -> list[tuple[tuple[float, str], ...]]:
        """Every non-empty choice of at most one factor per group, fewest mistakes first."""
        choices = [[None, *group] for group in self.factors]
        combos = [tuple(c for c in pick if c) for pick in itertools.product(*choices)]
        return sorted((c for c in combos if c), key=len)

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        value = as_number(answer)
        if self.close_to(value, self.expected):
            return self.correct_message
        for wrong_value, message in self.mistakes:
            if self.close_to(value, wrong_value):
                raise Wrong(sentences(f"You answered {fmt(value)}", message))
        for combo in self.combinations():
            if self.close_to(value, self.expected * math.prod(f for f, _ in combo)):
                if len(combo) == 1:
                    raise Wrong(sentences(f"You answered {fmt(value)}", combo[0][1]))
                listed = " ".join(f"({i}) {sentence(m)}" for i, (_, m) in enumerate(combo, 1))
                raise Wrong(f"You answered {fmt(value)}, which has {len(combo)} mistakes: {listed}")
        if abs(value - self.expected) <= 0.05 * abs(self.expected):
            raise Wrong(
                f"You answered {fmt(value)}: close, but not within the tolerance. Carry more"
                f" decimals and round only at the end."
            )
        raise Wrong(f"You answered {fmt(value)}, which is not the value asked for.")


class StepsExercise(Exercise):
    """A derivation checked step by step: a dict of named numbers, each a :class:`NumberExercise`.

    The steps are graded in order; the first wrong one is named with its own message, and steps
    still left as ``...`` are listed once every filled-in step is right.
    """

    def __init__(
        self,
        name: str,
        steps: Mapping[str, NumberExercise],
        *,
        hint: str,
        solution: str,
        correct_message: str = "",
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.steps = dict(steps)
        self.correct_message = correct_message
        self.placeholder_help = "Replace each ... with a number, then run the cell again."

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        if not isinstance(answer, Mapping):
            raise Wrong(
                sentence(
                    f"The answer should be the dict of steps the cell starts with; you gave"
                    f" {type(answer).__name__} {short_repr(answer)}"
                )
            )
        missing = [k for k in self.steps if k not in answer]
        if missing:
            raise Wrong(f"The dict needs an entry for {', '.join(repr(k) for k in missing)}.")
        todo = [k for k in self.steps if is_placeholder(answer[k])]
        if len(todo) == len(self.steps):
            raise Unanswered
        for key, step in self.steps.items():
            if key in todo:
                continue
            try:
                step.grade(answer[key])
            except Wrong as wrong:
                raise Wrong(f"Step {key!r}: {wrong}") from None
        if todo:
            raise Wrong(
                f"The steps you gave are right. Still to fill in: {', '.join(map(repr, todo))}."
            )
        return self.correct_message


# --- arrays -------------------------------------------------------------------------------------


def to_real_array(answer: Any, what: str) -> np.ndarray:
    """A list/tuple/array/tensor answer as a real ndarray, or raise Wrong/Unanswered.

    ``what`` describes the answer in messages ("The weights", "On x = [1, 2, 3], your
    function's result"). Fractions and Decimals become floats; complex numbers are refused.
    """
    if is_placeholder(answer):
        raise Unanswered
    answer = _untensor(answer)
    if isinstance(answer, (str, bytes, Mapping)) or callable(answer):
        raise Wrong(
            sentence(f"{what} should be numbers in a list or array; you gave {short_repr(answer)}")
        )
    try:
        arr = np.asarray([_untensor(a) for a in answer] if isinstance(answer, list) else answer)
    except (ValueError, TypeError):
        raise Wrong(
            sentence(
                f"{what} could not be read as an array (rows of different lengths?):"
                f" {short_repr(answer)}"
            )
        ) from None
    if arr.dtype == object:
        flat = list(arr.ravel())
        if any(is_placeholder(x) for x in flat):
            raise Unanswered
        if flat and all(
            isinstance(x, (numbers.Real, decimal.Decimal)) and not isinstance(x, bool) for x in flat
        ):
            try:
                arr = arr.astype(np.float64)
            except OverflowError:
                raise Wrong(f"{what} holds a number larger than any float.") from None
        else:
            raise Wrong(sentence(f"{what} should hold only numbers; you gave {short_repr(answer)}"))
    if np.iscomplexobj(arr):
        raise Wrong(
            f"{what} holds complex numbers (like {complex_text(arr.ravel()[0])}); the answer is"
            f" real. A square root or log of a negative number makes them."
        )
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise Wrong(sentence(f"{what} should hold numbers; you gave {short_repr(answer)}"))
    return arr


def _tolerances(arr: np.ndarray, rtol: float, atol: float) -> tuple[float, float]:
    """``rtol`` and ``atol`` widened to what the precision of ``arr`` can meet (float32: ~3e-4)."""
    if np.issubdtype(arr.dtype, np.floating) and np.finfo(arr.dtype).eps > 1e-15:
        floor = float(np.sqrt(np.finfo(arr.dtype).eps))
        return max(rtol, floor), max(atol, floor)
    return rtol, atol


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True if ``a`` and ``b`` have one shape and equal entries (NaN equals NaN).

    The tolerances widen to the precision of ``a`` (the student's result): a float32 result is
    held to what float32 can do, not to float64's 1e-6.
    """
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    rtol, atol = _tolerances(a_arr, rtol, atol)
    a_arr, b_arr = a_arr.astype(np.float64), b_arr.astype(np.float64)
    return a_arr.shape == b_arr.shape and bool(
        np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=True)
    )


class ArrayExercise(Exercise):
    """An array of numbers (or of booleans, compared exactly); lists and tuples are accepted.

    ``mistakes`` pairs typical wrong arrays with their messages (matched with the same
    tolerance, and only when the shape agrees). An answer within 1% that is none of them is
    told to carry more decimals.
    """

    def __init__(
        self,
        name: str,
        expected: Any,
        *,
        hint: str,
        solution: str,
        what: str = "The answer",
        correct_message: str = "",
        mistakes: Sequence[tuple[Any, str]] = (),
        rtol: float = 1e-3,
        atol: float = 1e-4,
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.expected = np.asarray(expected)
        self.mistakes = [(np.asarray(v), m) for v, m in mistakes]
        self.rtol, self.atol = rtol, atol
        self.what = what
        self.correct_message = correct_message

    def _same(self, arr: np.ndarray, target: np.ndarray) -> bool:
        if target.dtype == bool:
            return bool(np.array_equal(arr, target))
        return bool(np.allclose(arr, target, rtol=self.rtol, atol=self.atol))

    def grade(self, answer: Any) -> str:
        arr = to_real_array(answer, self.what)
        if arr.shape != self.expected.shape:
            raise Wrong(
                f"{self.what} should have shape {self.expected.shape}; yours has shape {arr.shape}."
            )
        if self.expected.dtype == bool:
            if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
                raise Wrong(f"{self.what} should hold True/False (or 1/0) values.")
            arr = arr.astype(bool)
        elif arr.dtype == bool:
            raise Wrong(f"{self.what} should hold numbers, not True/False.")
        else:
            arr = arr.astype(np.float64)
            if not np.isfinite(arr).all():
                raise Wrong(f"{self.what} should be finite; yours has NaN or infinity: {vec(arr)}.")
        if self._same(arr, self.expected):
            return self.correct_message
        for wrong, message in self.mistakes:
            if wrong.shape == arr.shape and self._same(arr, wrong):
                raise Wrong(message)
        if self.expected.dtype != bool and np.allclose(arr, self.expected, rtol=0.01, atol=0.01):
            raise Wrong(
                f"Your answer {vec(arr)} is close, but not within the tolerance: carry more"
                f" decimals (four at least) and round only at the end."
            )
        return self.wrong_fallback(arr)

    def wrong_fallback(self, arr: np.ndarray) -> str:
        """Raise the message for a wrong answer that matches no listed mistake."""
        raise Wrong(f"Your answer {vec(arr)} is not right.")


class SetExercise(Exercise):
    """A set of items named freely: ``aliases`` maps every accepted spelling (a token, an index)
    to its item; ``expected`` is the set of items. Lists, tuples and sets are accepted."""

    def __init__(
        self,
        name: str,
        expected: Iterable[str],
        aliases: Mapping[Any, str],
        *,
        hint: str,
        solution: str,
        what: str = "The answer",
        mistakes: Sequence[tuple[Iterable[str], str]] = (),
        correct_message: str = "",
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.expected = frozenset(expected)
        self.aliases = {(k.lower() if isinstance(k, str) else k): v for k, v in aliases.items()}
        self.mistakes = [(frozenset(s), m) for s, m in mistakes]
        self.what = what
        self.correct_message = correct_message

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
            raise Wrong(
                sentence(
                    f"{self.what} should be a list or set of items, like ['a', 'b']; you gave"
                    f" {short_repr(answer)}"
                )
            )
        items = set()
        for item in answer:
            if is_placeholder(item):
                raise Unanswered
            key = item.strip().lower() if isinstance(item, str) else item
            if isinstance(key, numbers.Integral) and not isinstance(key, bool):
                key = int(key)
            if key not in self.aliases:
                raise Wrong(f"{short_repr(item)} is not one of the items of the question.")
            items.add(self.aliases[key])
        if items == self.expected:
            return self.correct_message
        for wrong, message in self.mistakes:
            if items == wrong:
                raise Wrong(message)
        raise Wrong(f"{sorted(items)} is not the set asked for.")


class ShapeExercise(Exercise):
    """Shapes of named tensors, written with the exercise's named sizes.

    ``sizes`` maps symbols to distinct integers (``{"T": 5, "d_k": 4}``), so any shape the
    student gives can be read back in symbols: "you gave (d_k, d_model)". ``expected`` maps
    each tensor's name to its symbolic shape, a tuple of symbol names. ``notes`` gives, per
    tensor, a message for a particular wrong symbolic shape.
    """

    def __init__(
        self,
        name: str,
        sizes: Mapping[str, int],
        expected: Mapping[str, tuple[str, ...]],
        *,
        hint: str,
        solution: str,
        notes: Mapping[str, Mapping[tuple[str, ...], str]] | None = None,
        correct_message: str = "",
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        if len(set(sizes.values())) != len(sizes):
            raise ValueError(f"sizes must be distinct so shapes read back; got {dict(sizes)}")
        self.sizes = dict(sizes)
        self.symbol = {v: k for k, v in self.sizes.items()}
        self.expected = {k: tuple(v) for k, v in expected.items()}
        self.notes = {k: dict(v) for k, v in (notes or {}).items()}
        self.correct_message = correct_message
        self.placeholder_help = "Replace each ... with a shape, then run the cell again."

    def numeric(self, symbols: tuple[str, ...]) -> tuple[int, ...]:
        """The numbers behind a symbolic shape."""
        return tuple(self.sizes[s] for s in symbols)

    def spelled(self, shape: tuple[int, ...]) -> str:
        """A numeric shape in symbols where they are known: ``(T, 4)`` -> ``"(T, d_k)"``."""
        inner = ", ".join(self.symbol.get(n, str(n)) for n in shape)
        return f"({inner}{',' if len(shape) == 1 else ''})"

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        if not isinstance(answer, Mapping):
            raise Wrong(
                sentence(
                    f"The answer should be a dict of shapes, like {{'Q': (T, d_k), ...}}; you"
                    f" gave {type(answer).__name__} {short_repr(answer)}"
                )
            )
        missing = [k for k in self.expected if k not in answer]
        if missing:
            raise Wrong(f"The dict needs an entry for {', '.join(missing)}.")
        todo = [k for k in self.expected if is_placeholder(answer[k])]
        if len(todo) == len(self.expected):
            raise Unanswered
        for key, symbols in self.expected.items():
            if key in todo:
                continue
            shape = self.as_shape(answer[key], key)
            if shape != self.numeric(symbols):
                raise Wrong(self.explain(key, symbols, shape))
        if todo:
            raise Wrong(f"The shapes you gave are right. Still to fill in: {', '.join(todo)}.")
        return self.correct_message

    def as_shape(self, value: Any, key: str) -> tuple[int, ...]:
        """A shape answer (tuple or list of ints) as a tuple, or Wrong."""
        if isinstance(value, np.ndarray):
            raise Wrong(
                f"{key}: give a shape, not an array (an array's shape is array.shape); you gave"
                f" an array of shape {value.shape}."
            )
        if isinstance(value, str):
            raise Wrong(
                f"{key}: a shape is a tuple of whole numbers written without quotes, like"
                f" (T, d_k); you gave the text {value!r}."
            )
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = (value,)
        if not isinstance(value, (tuple, list)) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in value
        ):
            raise Wrong(
                sentence(
                    f"{key}: a shape is a tuple of whole numbers, like (T, d_k); you gave"
                    f" {short_repr(value)}"
                )
            )
        return tuple(int(n) for n in value)

    def explain(self, key: str, symbols: tuple[str, ...], shape: tuple[int, ...]) -> str:
        """The message for a wrong shape of tensor ``key``."""
        given = tuple(self.symbol.get(n, str(n)) for n in shape)
        right = f"{key} should have shape ({', '.join(symbols)}) = {self.numeric(symbols)}"
        gave = f"you gave {shape} = {self.spelled(shape)}"
        note = self.notes.get(key, {}).get(given)
        if note:
            return sentences(f"{right}; {gave}", note)
        if given == symbols[::-1]:
            return f"{right}; {gave}: the axes are the wrong way round."
        if len(shape) == len(symbols) - 1 and given == symbols[1:]:
            return f"{right}; {gave}: the leading {symbols[0]} axis is missing."
        if sorted(given) == sorted(symbols):
            return f"{right}; {gave}: the right sizes, in the wrong order."
        return f"{right}; {gave}."


class ChoiceExercise(Exercise):
    """Pick one option by its letter; each option carries its reason, and its own feedback.

    ``options`` maps a letter to ``(text, feedback)``; ``answer`` is the right letter.
    """

    def __init__(
        self,
        name: str,
        options: Mapping[str, tuple[str, str]],
        answer: str,
        *,
        hint: str,
        solution: str,
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        if answer not in options:
            raise ValueError(f"answer {answer!r} is not one of the options {list(options)}")
        self.options = dict(options)
        self.answer = answer
        self.placeholder_help = "Replace the ... with the letter of your choice, like 'a'."

    @property
    def correct_message(self) -> str:
        """What the right answer is told after "Correct!": its option's own feedback."""
        feedback = self.options[self.answer][1]
        return feedback[:1].upper() + feedback[1:]

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        letters = ", ".join(repr(k) for k in self.options)
        if not isinstance(answer, str):
            raise Wrong(f"Answer with the letter of one option ({letters}) as a string.")
        picked = answer.strip().strip("()").lower()
        if picked not in self.options:
            raise Wrong(f"{answer!r} is not one of the options; pick one of {letters}.")
        if picked == self.answer:
            return self.correct_message
        raise Wrong(f"({picked}) is not it: {self.options[picked][1]}")


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


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    nan_ok = np.issubdtype(a.dtype, np.inexact) and np.asarray(b).dtype.kind in "fc"
    return a.shape == np.shape(b) and bool(np.array_equal(a, b, equal_nan=nan_ok))


class _TimeUp(BaseException):
    """The time limit struck (a BaseException, so that a student's ``except Exception`` in an
    endless loop cannot swallow it)."""


def _call_with_time_limit(func: Callable, args: list, seconds: float) -> Any:
    """``func(*args)``, interrupted after ``seconds``.

    In the main thread (a notebook's kernel) a SIGALRM interval timer raises inside the
    student's Python code; elsewhere (a widget callback on a kernel subshell's thread, say) a
    helper thread runs it, and on a time-out :class:`_TimeUp` is raised inside that thread
    (:func:`_stop_thread`), so an endless loop does not spin on, taking a core and the GIL, for
    the rest of the kernel's life. Neither can interrupt a single long numpy call (C code),
    which ends before the check does.
    """
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


class FunctionExercise(Exercise):
    """A function the student writes, run on named cases and compared with attnlib's reference.

    Parameters
    ----------
    cases : callable
        ``cases()`` returns ``[(description, args), ...]``; each case is chosen to break one
        listed mistake.
    check_case : callable
        ``check_case(run, description, *args)`` calls the student's function through ``run``
        (a :class:`StudentRun`) and raises :class:`Wrong` if the result is wrong.
    correct_message : str
        Printed after "Correct!".

    Every case is run (until one runs out of time): a wrong function is told the first
    failure and how many of the cases it passes. A function that raises
    ``NotImplementedError`` on every case is "not answered yet".
    """

    def __init__(
        self,
        name: str,
        cases: Callable[[], list[tuple[str, tuple]]],
        check_case: Callable[..., None],
        *,
        hint: str,
        solution: str,
        correct_message: str = "",
        revisit: str | None = None,
        time_limit: float = TIME_LIMIT,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.cases = cases
        self.check_case = check_case
        self.correct_message = correct_message
        self.time_limit = time_limit
        self.placeholder_help = (
            "Replace the line `raise NotImplementedError` with your code, then run the cell again."
        )

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        if not callable(answer):
            raise Wrong(
                sentence(
                    f"Pass your function itself (its name, without parentheses); you gave"
                    f" {type(answer).__name__} {short_repr(answer)}"
                )
            )
        run = StudentRun(answer, self.time_limit)
        cases = self.cases()
        failures: list[tuple[str, Wrong]] = []
        for case, args in cases:
            try:
                self.check_case(run, case, *args)
            except _Stop:
                raise
            except Wrong as wrong:
                failures.append((case, wrong))
        if len(failures) == len(cases) and all(
            isinstance(w, _NotImplementedHere) for _, w in failures
        ):
            raise Unanswered
        note = ""
        if run.changed_inputs:
            note = (
                f"\nNote: your function changed its input arrays in place (on"
                f" {run.changed_inputs[0]}); the check passed it copies, but a caller's arrays"
                f" would be overwritten."
            )
        if not failures:
            return self.correct_message + note
        passed = len(cases) - len(failures)
        names = "; ".join(case for case, _ in failures[:3])
        if len(failures) > 3:
            names += f"; and {len(failures) - 3} more"
        tally = (
            f"It passes {passed} of {len(cases)} cases; it fails on {names}."
            if passed
            else f"It passes none of the {len(cases)} cases."
        )
        raise Wrong(f"{failures[0][1]}\n{tally}{note}")


def result_array(result: Any, case: str, shape: tuple[int, ...]) -> np.ndarray:
    """The student's ``result`` as a real array of ``shape``, or Wrong naming the ``case``.

    A float result keeps its dtype (so that :func:`close` can hold it to its precision); whole
    numbers and booleans become float64.
    """
    if result is None:
        raise Wrong(f"On {case}, your function returned None: did you forget `return`?")
    arr = to_real_array(result, f"On {case}, your function's result")
    if arr.shape != tuple(shape) and shape == ():
        raise Wrong(
            f"On {case}, your function should return one number; it returned an array of shape"
            f" {arr.shape}."
        )
    if arr.shape != tuple(shape):
        raise Wrong(
            f"On {case}, your function returned shape {arr.shape}; expected {tuple(shape)}."
        )
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def result_tuple(result: Any, case: str, names: Sequence[str]) -> tuple:
    """The student's ``result`` as a tuple of ``len(names)`` items (a tuple or a list), or Wrong."""
    if isinstance(result, (tuple, list)) and len(result) == len(names):
        return tuple(result)
    got = (
        f"{type(result).__name__} of length {len(result)}"
        if isinstance(result, (tuple, list))
        else type(result).__name__
    )
    raise Wrong(
        f"On {case}, return {len(names)} things, ({', '.join(names)}), as a tuple; you"
        f" returned {got}."
    )
