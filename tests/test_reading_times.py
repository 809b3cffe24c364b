"""The reading times the maps promise are the ones tools/reading_time.py measures, and every
numbered notebook's main path fits one sitting (issue 18: 15-30 minutes; 00 is the short tour)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from reading_time import reading  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NUMBERED = [path for path in NOTEBOOKS if re.match(r"\d\d_", path.name)]
ONE_SITTING_MINUTES = 30


def map_minutes(text: str, pattern: str) -> dict[str, int]:
    """Notebook name -> minutes, from the rows of a map table that give a number."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(pattern, text, re.M)}


#: A row of README's map: the notebook's name (linked to it, or not), ..., its minutes.
README_MAP = map_minutes(
    (ROOT / "README.md").read_text(), r"^\| \[?`(\w+)`(?:\]\([^)]*\))? \|.*\| (\d+) min \|$"
)
START_MAP = map_minutes(
    (ROOT / "notebooks" / "scripts" / "00_start_here.py").read_text(),
    r"^# \| `(\w+)` \|.*\| (\d+) \|$",
)


@pytest.mark.parametrize("path", NUMBERED, ids=[p.stem for p in NUMBERED])
def test_the_main_path_fits_one_sitting(path: Path) -> None:
    assert reading(path).minutes <= ONE_SITTING_MINUTES + 0.5


@pytest.mark.parametrize(("where", "table"), [("README", README_MAP), ("00", START_MAP)])
def test_the_map_gives_every_numbered_notebook_its_measured_reading_time(where, table) -> None:
    measured = {path.stem: round(reading(path).minutes) for path in NOTEBOOKS}
    assert set(table) >= {path.stem for path in NUMBERED}, f"{where}'s map lacks a notebook"
    wrong = {name: (said, measured[name]) for name, said in table.items() if said != measured[name]}
    assert not wrong, f"{where}'s map: (says, measured) minutes {wrong}"
