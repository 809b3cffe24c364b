"""Feedback text: what a student reads, wrapped at :data:`WIDTH`, numbers written the same way
everywhere, sentences that end with one full stop."""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

import numpy as np

#: Longest printed line (the team prints lines shorter than 90 characters).
WIDTH = 88


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
