"""Progress: what a student did with the exercises of this session, read from their records."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from .kinds import Exercise


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
