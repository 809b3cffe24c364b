"""The machinery behind every exercise: grade an answer, and print feedback that teaches.

An exercise is an object with three methods a student calls in a notebook cell:

``check(answer)``
    Prints one of three verdicts: ``Correct!``, ``Not yet.`` (with a message that says what
    went wrong, in the student's terms) or ``Not answered yet`` (the placeholder ``...``,
    ``None`` or a function that raises ``NotImplementedError`` is still in place). It never
    prints the solution and never lets a traceback through: a malformed answer or a student's
    function that raises gets a message naming what was expected.
``hint()``
    Prints a hint.
``solution()``
    Prints the worked solution.

Every verdict is plain text (printed, so a notebook stores it as a ``stdout`` stream): it reads
the same in JupyterLab, on GitHub and in a terminal, and nbval compares it exactly. Lines are
wrapped at :data:`WIDTH` characters.

Graders are written with two exceptions: raise :class:`Wrong` with a message, or
:class:`Unanswered`; :meth:`Exercise.evaluate` turns them into a :class:`Feedback`. Tests call
``evaluate`` and read ``Feedback.status`` and ``Feedback.message``.
"""

from __future__ import annotations

import numbers
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ArrayExercise",
    "ChoiceExercise",
    "Exercise",
    "Feedback",
    "FunctionExercise",
    "NumberExercise",
    "ShapeExercise",
    "Unanswered",
    "Wrong",
    "call_student",
    "close",
    "result_array",
    "vec",
]

#: Longest printed line (the team prints lines shorter than 90 characters).
WIDTH = 88

CORRECT = "correct"
INCORRECT = "incorrect"
UNANSWERED = "unanswered"


class Wrong(Exception):
    """Raised by a grader: the answer is wrong (or malformed); the message says why."""


class Unanswered(Exception):
    """Raised by a grader: the placeholder is still in place."""


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
        head = {CORRECT: "Correct!", INCORRECT: "Not yet.", UNANSWERED: "Not answered yet."}
        return wrap(f"{head[self.status]} {self.message}".rstrip())


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


def is_placeholder(answer: object) -> bool:
    """True for ``...`` and ``None``, the placeholders a notebook leaves for the student."""
    return answer is Ellipsis or answer is None


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
        return "nan" if np.isnan(arr) else f"{round(float(arr), digits):g}"
    return "[" + ", ".join(vec(x, digits) for x in arr) + "]"


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

    def grade(self, answer: Any) -> str:
        """Return the message for a right ``answer``; raise Wrong or Unanswered otherwise."""
        raise NotImplementedError

    def evaluate(self, answer: Any) -> Feedback:
        """Grade ``answer`` and return the :class:`Feedback` (prints nothing)."""
        try:
            return Feedback(CORRECT, self.grade(answer))
        except Unanswered:
            return Feedback(UNANSWERED, self.placeholder_help)
        except Wrong as wrong:
            message = str(wrong)
            if self.revisit:
                message += f"\nRevisit {self.revisit}."
            return Feedback(INCORRECT, f"{message}\nStuck? {self.name}.hint()")

    def check(self, answer: Any) -> None:
        """Print whether ``answer`` is right, and why not if it is not."""
        say(str(self.evaluate(answer)))

    def hint(self) -> None:
        """Print a hint."""
        say(wrap(f"Hint: {self._hint}"))

    def solution(self) -> None:
        """Print the worked solution."""
        say(wrap(f"Solution:\n{self._solution.strip(chr(10))}"))

    def __repr__(self) -> str:
        return f"<exercise {self.name}: call .check(answer), .hint() or .solution()>"


class NumberExercise(Exercise):
    """A single number, accepted within ``atol + rtol * |expected|``.

    ``mistakes`` maps typical wrong values to the message that explains them; they are matched
    with the same tolerance. ``correct_message`` is printed after "Correct!".
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
        rtol: float = 1e-3,
        atol: float = 0.0,
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.expected = float(expected)
        self.mistakes = [(float(v), m) for v, m in mistakes]
        self.rtol, self.atol = rtol, atol
        self.correct_message = correct_message

    def _close(self, value: float, target: float) -> bool:
        return abs(value - target) <= self.atol + self.rtol * abs(target)

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        value = as_number(answer)
        if self._close(value, self.expected):
            return self.correct_message
        for wrong_value, message in self.mistakes:
            if self._close(value, wrong_value):
                raise Wrong(f"You answered {fmt(value)}. {message}")
        if abs(value - self.expected) <= 0.05 * abs(self.expected):
            raise Wrong(
                f"You answered {fmt(value)}: close, but not within the tolerance. Carry full"
                f" precision and round only at the end."
            )
        raise Wrong(f"You answered {fmt(value)}, which is not the value asked for.")


def as_number(answer: Any) -> float:
    """``answer`` as a finite float, or Wrong naming what was expected."""
    if isinstance(answer, np.ndarray) and answer.size == 1:
        answer = answer.item()
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        raise Wrong(
            f"The answer should be a single number (like 3.5); you gave"
            f" {type(answer).__name__} {short_repr(answer)}."
        )
    value = float(answer)
    if not np.isfinite(value):
        raise Wrong(f"The answer should be a finite number; you gave {value}.")
    return value


def short_repr(x: Any, limit: int = 60) -> str:
    """``repr(x)``, cut to ``limit`` characters."""
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_answer_array(answer: Any, what: str) -> np.ndarray:
    """Convert a list/tuple/array answer to an ndarray, or raise Wrong/Unanswered.

    ``what`` describes the answer in messages ("the weights", "your function's output on ...").
    """
    if is_placeholder(answer):
        raise Unanswered
    if isinstance(answer, (str, bytes, Mapping)) or callable(answer):
        raise Wrong(f"{what} should be numbers in a list or array; you gave {short_repr(answer)}.")
    try:
        arr = np.asarray(answer)
    except (ValueError, TypeError):
        raise Wrong(
            f"{what} could not be read as an array (rows of different lengths?):"
            f" {short_repr(answer)}."
        ) from None
    if arr.dtype == object:
        if any(is_placeholder(x) for x in arr.ravel()):
            raise Unanswered
        raise Wrong(f"{what} should hold only numbers; you gave {short_repr(answer)}.")
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise Wrong(f"{what} should hold numbers; you gave {short_repr(answer)}.")
    return arr


class ArrayExercise(Exercise):
    """An array of numbers (or of booleans, compared exactly); lists and tuples are accepted.

    ``mistakes`` pairs typical wrong arrays with their messages (matched with the same
    tolerance, and only when the shape agrees).
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
        arr = as_answer_array(answer, self.what)
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
        elif not np.isfinite(arr).all():
            raise Wrong(f"{self.what} contains NaN or infinity: {vec(arr)}.")
        if self._same(arr, self.expected):
            return self.correct_message
        for wrong, message in self.mistakes:
            if wrong.shape == arr.shape and self._same(arr, wrong):
                raise Wrong(message)
        return self.wrong_fallback(arr)

    def wrong_fallback(self, arr: np.ndarray) -> str:
        """Raise the message for a wrong answer that matches no listed mistake."""
        raise Wrong(f"Your answer {vec(arr)} is not right.")


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
                f"The answer should be a dict of shapes, like {{'Q': (T, d_k), ...}}; you gave"
                f" {type(answer).__name__} {short_repr(answer)}."
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
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = (value,)
        if not isinstance(value, (tuple, list)) or not all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in value
        ):
            raise Wrong(
                f"{key}: a shape is a tuple of whole numbers, like (T, d_k); you gave"
                f" {short_repr(value)}."
            )
        return tuple(int(n) for n in value)

    def explain(self, key: str, symbols: tuple[str, ...], shape: tuple[int, ...]) -> str:
        """The message for a wrong shape of tensor ``key``."""
        given = tuple(self.symbol.get(n, str(n)) for n in shape)
        right = f"{key} should have shape ({', '.join(symbols)}) = {self.numeric(symbols)}"
        gave = f"you gave {shape} = {self.spelled(shape)}"
        note = self.notes.get(key, {}).get(given)
        if note:
            return f"{right}; {gave}. {note}"
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

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        letters = ", ".join(repr(k) for k in self.options)
        if not isinstance(answer, str):
            raise Wrong(f"Answer with the letter of one option ({letters}) as a string.")
        picked = answer.strip().strip("()").lower()
        if picked not in self.options:
            raise Wrong(f"{answer!r} is not one of the options; pick one of {letters}.")
        feedback = self.options[picked][1]
        if picked == self.answer:
            return feedback[:1].upper() + feedback[1:]
        raise Wrong(f"({picked}) is not it: {feedback}")


class FunctionExercise(Exercise):
    """A function the student writes, graded by ``grader(func) -> message``.

    The grader runs the student's function on named cases (see :func:`call_student` and
    :func:`result_array`) and raises :class:`Wrong` naming the first case that fails.
    """

    def __init__(
        self,
        name: str,
        grader: Callable[[Callable], str],
        *,
        hint: str,
        solution: str,
        revisit: str | None = None,
    ) -> None:
        super().__init__(name, hint, solution, revisit)
        self.grader = grader
        self.placeholder_help = (
            "Replace the line `raise NotImplementedError` with your code, then run the cell again."
        )

    def grade(self, answer: Any) -> str:
        if is_placeholder(answer):
            raise Unanswered
        if not callable(answer):
            raise Wrong(
                f"Pass your function itself (its name, without parentheses); you gave"
                f" {type(answer).__name__} {short_repr(answer)}."
            )
        return self.grader(answer)


def call_student(func: Callable, case: str, *args: Any) -> Any:
    """Call the student's ``func(*args)`` on copies of the arguments.

    NotImplementedError means the placeholder is still there (:class:`Unanswered`); any other
    exception becomes :class:`Wrong` naming ``case`` and the error, never a traceback.
    """
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            return func(*copies)
    except NotImplementedError:
        raise Unanswered from None
    except Exception as err:  # the student's bug, reported in words
        raise Wrong(
            f"On {case}, your function raised {type(err).__name__}: {str(err).strip()}"
        ) from None


def result_array(result: Any, case: str, shape: tuple[int, ...]) -> np.ndarray:
    """The student's ``result`` as a float array of ``shape``, or Wrong naming the ``case``."""
    if result is None:
        raise Wrong(f"On {case}, your function returned None: did you forget `return`?")
    arr = as_answer_array(result, f"On {case}, your function's result")
    if arr.shape != tuple(shape):
        raise Wrong(
            f"On {case}, your function returned shape {arr.shape}; expected {tuple(shape)}."
        )
    return arr.astype(float)


def close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True if ``a`` and ``b`` have one shape and equal entries (NaN equals NaN)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
