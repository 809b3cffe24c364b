"""Verdicts: the three statuses, the two exceptions a grader raises, the :class:`Feedback` an
answer gets and the :class:`Record` an exercise keeps of this session."""

from __future__ import annotations

from dataclasses import dataclass

from .feedback import wrap

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
