"""How long a notebook takes: its main path at one sitting, and its exercises, counted apart.

    python tools/reading_time.py                      # every notebook under notebooks/
    python tools/reading_time.py notebooks/02_why_sqrt_dk.ipynb

The *main path* is what a student reads on a first sitting. Depth is everything else:

* the inside of a collapsed ``<details>`` box in a markdown cell (its ``<summary>`` line stays on
  the main path: it is read to decide whether to open the box);
* a code cell whose source is hidden (``jupyter: source_hidden``, the exercise solutions);
* a section whose heading says it is optional (``## ... (optional)``, ``## Appendix ...``), up to
  the next heading of the same or a higher level that does not.

Main path minutes, three parts:

* **prose** at 238 words a minute: the mean silent reading rate of adults for English
  non-fiction in Brysbaert's meta-analysis of 190 studies (M. Brysbaert, "How many words do we
  read per minute? A review and meta-analysis of reading rate", *Journal of Memory and
  Language* 109, 104047, 2019; most adults read non-fiction at 175-300 words a minute). The
  notebooks' prose has words of 4.4-4.8 letters on average, like the non-fiction the rate was
  measured on (4.6), and Brysbaert et al. (2021, *Quarterly Journal of Experimental Psychology*
  74, 1920-1930) found that the word length is what sets the rate;
* **formulas** at 0.25 s a symbol (a letter, digit or operator, or a LaTeX command such as
  ``\\sqrt``): equation readers fixate for about 300 ms to take in 2-3 symbols and scan back
  about as often as forward (Gillan, Barraza, Karshmer and Pazuchanics, "Cognitive analysis of
  equation reading applied to the development of assistive technology for visually-impaired
  students", *Proc. Human Factors and Ergonomics Society* 48, 2004,
  doi:10.1177/154193120404800538), so about 250 ms a symbol, the time of one word of prose;
* **code** at 10 s a line that is neither blank nor a comment (reading a line of numpy,
  predicting what it prints and reading the printed numbers). This one is our estimate: we
  found no published rate for reading code and its output.

**Exercises** are counted apart, as time to do them, on top of reading their statement (which
the main path counts). A checked exercise is a call ``chNN.name.check(...)`` in a code cell of
the main path: 5 minutes when it asks for a function (its cell holds ``raise
NotImplementedError``: write a few lines, run the check, read its verdict, try again once),
3 minutes when it asks for a value (work it out, type it in, check). A question of a "Check
yourself" section counts 3 minutes (think it through, then open the answer). These figures are
our estimates, not measurements.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 238
SECONDS_PER_SYMBOL = 0.25
SECONDS_PER_CODE_LINE = 10
MINUTES_PER_FUNCTION_EXERCISE = 5
MINUTES_PER_VALUE_EXERCISE = 3
MINUTES_PER_QUESTION = 3

_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
_OPTIONAL = re.compile(r"optional|appendix", re.IGNORECASE)
_CHECK_YOURSELF = re.compile(r"check yourself", re.IGNORECASE)
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+?\$", re.DOTALL)
_SYMBOL = re.compile(r"\\[A-Za-z]+|[A-Za-z0-9]|[=+\-*/<>()|,.!\[\]]|\\[{}|,;!]")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"<[^>]+>|[#*`|>]+|-{3,}")
_QUESTION = re.compile(r"^\s*(?:\*\*)?\d+\.(?:\*\*)?\s", re.MULTILINE)
_CHECKED_EXERCISE = re.compile(r"^\s*\w+\.\w+\.check\(", re.MULTILINE)


@dataclass
class Reading:
    """What a notebook asks of a student: prose words, formula symbols and code lines on its main
    path and in its depth, and its exercises."""

    words: int = 0
    symbols: int = 0
    code_lines: int = 0
    depth_words: int = 0
    depth_symbols: int = 0
    depth_code_lines: int = 0
    function_exercises: int = 0
    value_exercises: int = 0
    questions: int = 0

    @property
    def minutes(self) -> float:
        """Reading time of the main path, in minutes."""
        seconds = self.symbols * SECONDS_PER_SYMBOL + self.code_lines * SECONDS_PER_CODE_LINE
        return self.words / WORDS_PER_MINUTE + seconds / 60

    @property
    def exercise_minutes(self) -> float:
        """Time to do the exercises of the main path, in minutes."""
        return (
            self.function_exercises * MINUTES_PER_FUNCTION_EXERCISE
            + self.value_exercises * MINUTES_PER_VALUE_EXERCISE
            + self.questions * MINUTES_PER_QUESTION
        )


def split_markdown(markdown: str) -> tuple[int, int]:
    """(prose words, formula symbols) of a markdown text: markup, link targets and lone
    punctuation left out."""
    symbols = sum(len(_SYMBOL.findall(formula)) for formula in _MATH.findall(markdown))
    prose = _LINK.sub(r"\1", _MATH.sub(" ", markdown))
    words = [w for w in _MARKUP.sub(" ", prose).split() if any(ch.isalnum() for ch in w)]
    return len(words), symbols


def count_words(markdown: str) -> int:
    """Prose words of a markdown text (formulas, markup and link targets left out)."""
    return split_markdown(markdown)[0]


def count_code_lines(source: str) -> int:
    """Lines of a code cell that are neither blank nor a pure comment."""
    return sum(
        1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#")
    )


def _sections(markdown: str) -> list[tuple[tuple[int, str] | None, str]]:
    """A markdown cell cut at its headings: (heading level and title, or None before the first
    heading; the text from that heading to the next)."""
    starts = list(_HEADING.finditer(markdown))
    sections = [(None, markdown[: starts[0].start() if starts else len(markdown)])]
    for m, following in zip(starts, [*starts[1:], None]):
        end = following.start() if following else len(markdown)
        sections.append(((len(m.group(1)), m.group(2)), markdown[m.start() : end]))
    return sections


def reading(path: Path) -> Reading:
    """Count the main path, the depth and the exercises of the notebook at ``path``."""
    nb = nbformat.read(path, as_version=4)
    result = Reading()
    optional_level = None  # heading level that opened the optional section, or None
    in_check_yourself = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for heading, text in _sections(cell.source):
                if heading is not None:
                    level, title = heading
                    if optional_level is not None and level <= optional_level:
                        optional_level = None
                    if optional_level is None and _OPTIONAL.search(title) and level > 1:
                        optional_level = level
                    in_check_yourself = bool(_CHECK_YOURSELF.search(title))
                boxed = "".join(_DETAILS.findall(text))
                summaries = " ".join(_SUMMARY.findall(boxed))
                open_text = _DETAILS.sub(" ", text)
                words, symbols = split_markdown(open_text)
                summary_words, summary_symbols = split_markdown(summaries)
                boxed_words, boxed_symbols = split_markdown(boxed)
                words, symbols = words + summary_words, symbols + summary_symbols
                depth = (boxed_words - summary_words, boxed_symbols - summary_symbols)
                if optional_level is None:
                    result.words += words
                    result.symbols += symbols
                    if in_check_yourself:
                        result.questions += len(_QUESTION.findall(open_text))
                else:
                    depth = (depth[0] + words, depth[1] + symbols)
                result.depth_words += depth[0]
                result.depth_symbols += depth[1]
        elif cell.cell_type == "code":
            lines = count_code_lines(cell.source)
            if optional_level is not None or cell.metadata.get("jupyter", {}).get("source_hidden"):
                result.depth_code_lines += lines
            else:
                result.code_lines += lines
                checks = len(_CHECKED_EXERCISE.findall(cell.source))
                if "NotImplementedError" in cell.source:
                    result.function_exercises += checks
                else:
                    result.value_exercises += checks
    return result


def map_entry(r: Reading) -> str:
    """The reading time as README's map gives it: "25 min + 15 min exercises", or "8 min"."""
    text = f"{round(r.minutes)} min"
    if r.exercise_minutes:
        text += f" + {round(r.exercise_minutes)} min exercises"
    return text


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    print(
        f"{'notebook':<26} {'words':>6} {'symbols':>7} {'code':>5} {'minutes':>7}"
        f"  {'exercises':>9} {'minutes':>7}   depth: words, symbols, code"
    )
    for path in paths:
        r = reading(path)
        exercises = f"{r.function_exercises}+{r.value_exercises}+{r.questions}"
        print(
            f"{path.stem:<26} {r.words:>6,} {r.symbols:>7,} {r.code_lines:>5} {r.minutes:>7.0f}"
            f"  {exercises:>9} {r.exercise_minutes:>7.0f}"
            f"   {r.depth_words:>12,} {r.depth_symbols:>8,} {r.depth_code_lines:>5}"
        )
    print(
        f"prose at {WORDS_PER_MINUTE} words a minute, {SECONDS_PER_SYMBOL} s a formula symbol,"
        f" {SECONDS_PER_CODE_LINE} s a line of code; exercises: functions + values + questions, at"
        f" {MINUTES_PER_FUNCTION_EXERCISE}, {MINUTES_PER_VALUE_EXERCISE} and"
        f" {MINUTES_PER_QUESTION} minutes each"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
