"""The reading times the maps promise are the ones tools/reading_time.py measures, every numbered
notebook's main path fits one sitting (15-30 minutes; 00 is the short tour), and the tool counts
what its docstring says it counts."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import reading_time  # noqa: E402
from reading_time import map_entry, reading  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NUMBERED = [path for path in NOTEBOOKS if re.match(r"\d\d_", path.name)]
ONE_SITTING_MINUTES = 30

#: README's map: notebook name -> its reading-time column ("25 min + 15 min exercises").
README_MAP = dict(
    re.findall(
        r"^\| \[?`(\w+)`(?:\]\([^)]*\))? \|.*\| (\d+ min(?: \+ \d+ min exercises)?) \|$",
        (ROOT / "README.md").read_text(),
        re.M,
    )
)
#: Notebook 00's map: notebook name -> main-path minutes.
START_MAP = {
    name: int(minutes)
    for name, minutes in re.findall(
        r"^# \| `(\w+)` \|.*\| (\d+) \|$",
        (ROOT / "notebooks" / "scripts" / "00_start_here.py").read_text(),
        re.M,
    )
}


@pytest.mark.parametrize("path", NUMBERED, ids=[p.stem for p in NUMBERED])
def test_the_main_path_fits_one_sitting(path: Path) -> None:
    assert reading(path).minutes <= ONE_SITTING_MINUTES + 0.5


def test_readme_map_gives_every_numbered_notebook_its_reading_and_exercise_time() -> None:
    measured = {path.stem: map_entry(reading(path)) for path in NOTEBOOKS}
    assert set(README_MAP) >= {path.stem for path in NUMBERED}, "README's map lacks a notebook"
    wrong = {
        name: (said, measured[name]) for name, said in README_MAP.items() if said != measured[name]
    }
    assert not wrong, f"README's map: (says, measured) {wrong}"


def test_start_here_map_gives_every_numbered_notebook_its_main_path_minutes() -> None:
    measured = {path.stem: round(reading(path).minutes) for path in NOTEBOOKS}
    assert set(START_MAP) >= {path.stem for path in NUMBERED}, "00's map lacks a notebook"
    wrong = {
        name: (said, measured[name]) for name, said in START_MAP.items() if said != measured[name]
    }
    assert not wrong, f"00's map: (says, measured) minutes {wrong}"


# --- what the tool counts -------------------------------------------------------------------------


def notebook(tmp_path: Path, *cells) -> Path:
    """A notebook file of the given cells: ("md", text), ("code", text) or ("hidden", text)."""
    nb = nbformat.v4.new_notebook()
    for kind, text in cells:
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cell = nbformat.v4.new_code_cell(text)
            if kind == "hidden":
                cell.metadata["jupyter"] = {"source_hidden": True}
            nb.cells.append(cell)
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def test_prose_words_are_read_at_the_published_rate(tmp_path) -> None:
    r = reading(notebook(tmp_path, ("md", " ".join(["word"] * 476))))
    assert (r.words, r.symbols, r.code_lines) == (476, 0, 0)
    assert r.minutes == pytest.approx(476 / 238)


def test_a_formula_counts_its_symbols_not_its_latex_source(tmp_path) -> None:
    # \sqrt, d, k | S, =, Q, K, \top, /, \sqrt, d, k: braces, _ and ^ are layout, not symbols
    r = reading(notebook(tmp_path, ("md", r"Scale by $\sqrt{d_k}$: $$S = QK^\top / \sqrt{d_k}$$")))
    assert (r.words, r.symbols) == (2, 12)
    assert r.minutes == pytest.approx(2 / 238 + 12 * 0.25 / 60)


def test_a_link_counts_its_text_not_its_target(tmp_path) -> None:
    r = reading(
        notebook(
            tmp_path, ("md", "see [notebook 02](02_why_sqrt_dk.ipynb#the-variance-of-a-score)")
        )
    )
    assert r.words == 3


def test_code_lines_count_without_blanks_and_comments(tmp_path) -> None:
    r = reading(notebook(tmp_path, ("code", "# a comment\nx = 1\n\ny = x + 1\n")))
    assert r.code_lines == 2
    assert r.minutes == pytest.approx(2 * 10 / 60)


def test_collapsed_boxes_hidden_cells_and_optional_sections_are_depth(tmp_path) -> None:
    r = reading(
        notebook(
            tmp_path,
            ("md", "one two\n<details><summary>Why</summary>\n\nthree four five\n</details>"),
            ("hidden", "x = 1"),
            ("md", "## Going further (optional)\n\nsix seven"),
            ("code", "y = 2"),
            ("md", "## Summary\n\neight"),
        )
    )
    assert (r.words, r.code_lines) == (2 + 1 + 2, 0)  # "one two", "Why", "Summary eight"
    assert (r.depth_words, r.depth_code_lines) == (3 + 5, 2)  # "Going further (optional) six seven"


def test_exercises_are_counted_apart_functions_values_and_check_yourself_questions(
    tmp_path,
) -> None:
    r = reading(
        notebook(
            tmp_path,
            ("code", "def mine(p, g):\n    raise NotImplementedError\n\n\nch11.f.check(mine)"),
            ("code", "answer = ...\nrecall.shapes.check(answer)"),
            ("hidden", "ch11.softmax_backward.check_solution(solution)"),
            (
                "md",
                "## Check yourself\n\n1. First?\n2. Second?\n**3.** Third?\n\n"
                "<details><summary>Answers</summary>\n\n1. Yes.\n2. No.\n</details>\n\n"
                "## Summary\n\n1. Not a question.",
            ),
        )
    )
    assert (r.function_exercises, r.value_exercises, r.questions) == (1, 1, 3)
    assert r.exercise_minutes == 1 * 5 + 1 * 3 + 3 * 3
    assert map_entry(r) == f"{round(r.minutes)} min + 17 min exercises"


def test_a_notebook_without_exercises_gives_its_reading_time_alone(tmp_path) -> None:
    r = reading(notebook(tmp_path, ("md", " ".join(["word"] * 2380))))
    assert map_entry(r) == "10 min"


def test_the_rates_are_the_documented_ones() -> None:
    doc = reading_time.__doc__
    assert "238 words a minute" in doc and "Brysbaert" in doc
    assert "0.25 s a symbol" in doc and "10 s a line" in doc
    assert "5 minutes when it asks for a function" in doc
    assert "3 minutes when it asks for a value" in doc and "counts 3 minutes" in doc
    assert (reading_time.WORDS_PER_MINUTE, reading_time.SECONDS_PER_SYMBOL) == (238, 0.25)
    assert reading_time.SECONDS_PER_CODE_LINE == 10
    assert reading_time.MINUTES_PER_FUNCTION_EXERCISE == 5
    assert (reading_time.MINUTES_PER_VALUE_EXERCISE, reading_time.MINUTES_PER_QUESTION) == (3, 3)
