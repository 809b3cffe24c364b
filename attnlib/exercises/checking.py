"""The machinery behind every exercise: grade an answer, and print feedback that teaches.

One module a job, all of it importable from here (the exercises' modules do): the kinds of
exercise (:mod:`.kinds`), answer coercion (:mod:`.answers`), feedback text (:mod:`.feedback`), the
verdicts (:mod:`.verdicts`), running a student's function (:mod:`.running`) and progress
(:mod:`.progress`).

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

from .answers import close, result_array, result_tuple
from .feedback import WIDTH, complex_text, fmt, say, sentence, sentences, vec, wrap
from .kinds import (
    ArrayExercise,
    ChoiceExercise,
    Exercise,
    FunctionExercise,
    NumberExercise,
    SetExercise,
    ShapeExercise,
    StepsExercise,
)
from .progress import progress_report
from .running import TIME_LIMIT, StudentRun
from .verdicts import Feedback, Record, Unanswered, Wrong

__all__ = [
    "TIME_LIMIT",
    "WIDTH",
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
    "complex_text",
    "fmt",
    "progress_report",
    "result_array",
    "result_tuple",
    "say",
    "sentence",
    "sentences",
    "vec",
    "wrap",
]
