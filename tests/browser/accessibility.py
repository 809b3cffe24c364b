"""An accessibility scan of a page in the browser tests: axe-core (npm package, fetched into
notebooks/vendor/ by tools/fetch_web_assets.py) injected into the page, WCAG 2 A and AA rules.
Not a test file."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "notebooks" / "vendor" / "axe-core" / "axe.min.js"
#: axe-core's tags for the rules of WCAG 2.0, 2.1 and 2.2 at levels A and AA.
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
MISSING_AXE = "axe-core missing: python tools/fetch_web_assets.py (needs npm)"


def scan(page) -> list[str] | None:
    """Run axe-core on ``page``: one line per violated rule (its id, impact, the number of
    elements and the first of them), or None if axe-core has not been fetched."""
    if not AXE.exists():
        return None
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG_AA
    )
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements, e.g. {v['nodes'][0]['target']}):"
        f" {v['help']}"
        for v in result["violations"]
    ]
