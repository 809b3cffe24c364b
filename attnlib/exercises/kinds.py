"""The kinds of exercise: the :class:`Exercise` every kind is, and the seven kinds (a number, a
sequence of steps, an array, a set, a shape, a choice, a function)."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .answers import (
    _NO_ANSWER,
    as_number,
    is_placeholder,
    to_real_array,
)
from .feedback import fmt, say, sentence, sentences, short_repr, vec, wrap
from .running import TIME_LIMIT, StudentRun, _Stop
from .verdicts import (
    CORRECT,
    INCORRECT,
    UNANSWERED,
    Feedback,
    Record,
    Unanswered,
    Wrong,
    _NotImplementedHere,
)


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
