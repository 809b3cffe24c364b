"""How long a notebook's main path takes to read: prose words and code lines, main path and depth.

    python tools/reading_time.py                      # every notebook under notebooks/
    python tools/reading_time.py notebooks/02_why_sqrt_dk.ipynb

The *main path* is what a student reads on a first sitting. Depth is everything else:

* the inside of a collapsed ``<details>`` box in a markdown cell (its ``<summary>`` line stays on
  the main path: it is read to decide whether to open the box);
* a code cell whose source is hidden (``jupyter: source_hidden``, the exercise solutions);
* a section whose heading says it is optional (``## ... (optional)``, ``## Appendix ...``), up to
  the next heading of the same or a higher level that does not.

Minutes = prose words / 200 (a careful reading pace for technical prose) + code lines x 10 s
(reading a line of numpy, predicting what it prints and reading the printed numbers). The
estimate is for one sitting of the main path; the depth is reported beside it. A notebook's
exercises and lab are part of its main path through their cells and text, nothing more.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 200
SECONDS_PER_CODE_LINE = 10

_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
_OPTIONAL = re.compile(r"optional|appendix", re.IGNORECASE)
_MARKUP = re.compile(r"<[^>]+>|[#*`|>]+|-{3,}")


@dataclass
class Reading:
    """Prose words and code lines of a notebook, on its main path and in its depth."""

    words: int = 0
    code_lines: int = 0
    depth_words: int = 0
    depth_code_lines: int = 0

    @property
    def minutes(self) -> float:
        """Reading time of the main path, in minutes."""
        return self.words / WORDS_PER_MINUTE + self.code_lines * SECONDS_PER_CODE_LINE / 60


def count_words(markdown: str) -> int:
    """Words of a markdown text, markup left out (a formula's tokens count as words)."""
    return len(_MARKUP.sub(" ", markdown).split())


def count_code_lines(source: str) -> int:
    """Lines of a code cell that are neither blank nor a pure comment."""
    return sum(
        1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#")
    )


def reading(path: Path) -> Reading:
    """Count the main path and depth of the notebook at ``path``."""
    nb = nbformat.read(path, as_version=4)
    result = Reading()
    optional_level = None  # heading level that opened the optional section, or None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for level, title in _HEADING.findall(cell.source):
                if optional_level is not None and len(level) <= optional_level:
                    optional_level = None
                if optional_level is None and _OPTIONAL.search(title) and len(level) > 1:
                    optional_level = len(level)
            boxed = "".join(_DETAILS.findall(cell.source))
            summaries = " ".join(_SUMMARY.findall(boxed))
            main = count_words(_DETAILS.sub(" ", cell.source)) + count_words(summaries)
            depth = count_words(boxed) - count_words(summaries)
            if optional_level is None:
                result.words += main
            else:
                depth += main
            result.depth_words += depth
        elif cell.cell_type == "code":
            lines = count_code_lines(cell.source)
            if optional_level is not None or cell.metadata.get("jupyter", {}).get("source_hidden"):
                result.depth_code_lines += lines
            else:
                result.code_lines += lines
    return result


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    print(f"{'notebook':<28} {'words':>6} {'code':>5} {'minutes':>8}   depth: words, code")
    for path in paths:
        r = reading(path)
        print(
            f"{path.stem:<28} {r.words:>6,} {r.code_lines:>5} {r.minutes:>8.0f}"
            f"   {r.depth_words:>12,} {r.depth_code_lines:>5}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
