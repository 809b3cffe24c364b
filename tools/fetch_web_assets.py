"""Fetch the browser files that the slides (offline), the accessibility test and the site use, from
the npm registry, into ``notebooks/vendor/`` (git-ignored):

* ``reveal.js`` (version 4): the slide deck's styles. voila's reveal template takes them from a
  CDN unless a local copy exists (README's offline slide command points it here).
* ``jquery`` (version 3): voila's reveal template loads it from a CDN too (its slide code needs it).
* ``axe-core`` (version 4): the accessibility scanner the browser tests inject into the lab bench
  and the site's pages (``tests/browser/accessibility.py``).
* ``mathjax`` (version 3): the site's equations (``tools/build_site.py`` copies what a page loads
  into the site; version 3 keeps its fonts in the same package, version 4 takes them from a
  second one and starts a speech worker on every page).
* ``@jupyter-widgets/html-manager`` (version 1, for ipywidgets 8) and ``requirejs`` (version 2):
  what shows a widget with saved state on a site page, without a kernel (myst-nb's
  ``nb_ipywidgets_js``, pointed at these copies).

Run from anywhere: ``python tools/fetch_web_assets.py`` (needs ``npm``). It replaces an earlier
copy and prints each package's version.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "notebooks" / "vendor"
#: npm package spec -> folder under VENDOR.
PACKAGES = {
    "reveal.js@4": "reveal.js",
    "jquery@3": "jquery",
    "axe-core@4": "axe-core",
    "mathjax@3": "mathjax",
    "@jupyter-widgets/html-manager@1": "html-manager",
    "requirejs@2": "requirejs",
}


def fetch(spec: str, folder: Path) -> str:
    """``npm pack spec`` and unpack its ``package/`` into ``folder``; return its version."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["npm", "pack", spec, "--silent", "--pack-destination", tmp],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()[-1]
        with tarfile.open(Path(tmp) / out) as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.10.12+: refuse odd paths and links
                tar.extractall(tmp, filter="data")
            else:
                tar.extractall(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.move(Path(tmp) / "package", folder)
    return json.loads((folder / "package.json").read_text())["version"]


def main() -> int:
    if shutil.which("npm") is None:
        print("npm is missing: install Node.js (e.g. apt-get install npm)", file=sys.stderr)
        return 1
    VENDOR.mkdir(parents=True, exist_ok=True)
    for spec, name in PACKAGES.items():
        print(f"{name} {fetch(spec, VENDOR / name)} -> {(VENDOR / name).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
