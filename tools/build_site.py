"""Build the site (the book) into ``build/site/``: every numbered notebook a page from its stored
outputs (nothing is executed), the landing page (README's text), the instructors' and the
contributors' pages; every file a page loads is in that folder.

    python tools/build_site.py            # build (a second build redoes only what changed)
    python -m http.server -d build/site   # serve it, then open http://localhost:8000

Needs the site's tools (``python -m pip install -r requirements-site.txt``) and the browser files
of ``python tools/fetch_web_assets.py`` (MathJax and the widgets' scripts, from npm). Nothing is
fetched while building or reading.

It gathers the pages into ``build/site-src/`` at their repository paths (docs/site_layout.py
says which), the browser files a page may load into ``build/site-static/npm/``, and runs
Sphinx with ``docs/`` as its configuration folder. A warning fails the build (a broken link, a
missing page). The site folder is written anew each time, from the pages read before and those
whose files changed; ``--clean`` reads every page again. It prints the build's time and the
site's size.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

import site_labs  # noqa: E402
import site_layout  # noqa: E402

OUT = ROOT / "build" / "site"
DOCTREES = ROOT / "build" / "site-doctrees"
#: The modules the build needs (requirements-site.txt).
SITE_TOOLS = ("sphinx", "myst_nb", "sphinx_book_theme", "attnlib")


def mirror(files: dict[str, Path], into: Path) -> None:
    """Make ``into`` hold exactly ``files`` (relative path -> source file or folder), copying
    only what differs (with its modification time, so that Sphinx rebuilds only what changed)."""
    wanted = set()
    for rel, source in files.items():
        inside = source.rglob("*") if source.is_dir() else []
        targets = (
            {f"{rel}/{p.relative_to(source).as_posix()}": p for p in inside if p.is_file()}
            if source.is_dir()
            else {rel: source}
        )
        for name, path in targets.items():
            wanted.add(name)
            target = into / name
            if not (target.exists() and filecmp.cmp(path, target, shallow=False)):
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    for path in sorted(into.rglob("*"), reverse=True) if into.exists() else []:
        name = path.relative_to(into).as_posix()
        if path.is_file() and name not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def missing_vendor() -> list[str]:
    return [
        str(path.relative_to(ROOT))
        for path in site_layout.vendor_files().values()
        if not path.exists()
    ]


def build(clean: bool = False, out: Path = OUT) -> float:
    """Build the site into ``out``; return the seconds it took."""
    start = time.perf_counter()
    # the site holds only what this build writes (Sphinx leaves files it no longer writes);
    # the pages read before are kept in DOCTREES, and only those whose files changed are read
    shutil.rmtree(out, ignore_errors=True)
    if clean:
        for folder in (DOCTREES, site_layout.SOURCE, site_layout.STATIC, site_labs.FOLDER):
            shutil.rmtree(folder, ignore_errors=True)
    for name, states, seconds in site_labs.write_all():
        print(f"lab {name}: {states} states drawn in {seconds:.1f} s")
    mirror(site_layout.pages(), site_layout.SOURCE)
    vendor = site_layout.vendor_files().items()
    mirror({f"{site_layout.VENDOR_URL}/{rel}": path for rel, path in vendor}, site_layout.STATIC)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "--builder=html",
            f"--conf-dir={ROOT / 'docs'}",
            f"--doctree-dir={DOCTREES}",
            "--fail-on-warning",
            "--keep-going",
            "--quiet",
            str(site_layout.SOURCE),
            str(out),
        ],
        check=True,
    )
    return time.perf_counter() - start


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="start from nothing")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT.relative_to(ROOT)}")
    args = parser.parse_args()
    if absent := [name for name in SITE_TOOLS if importlib.util.find_spec(name) is None]:
        print(f"{', '.join(absent)} missing: python -m pip install -r requirements-site.txt")
        return 1
    if missing := missing_vendor():
        print(f"missing {', '.join(missing)}: run python tools/fetch_web_assets.py (needs npm)")
        return 1
    from attnlib.pretrained import ModelNotAvailableError

    try:
        seconds = build(args.clean, args.out)
    except subprocess.CalledProcessError as error:
        print(f"the build failed (sphinx exit {error.returncode}); see its messages above")
        return 1
    except ModelNotAvailableError as error:
        print(f"the trained model's lab needs the model:\n{error}")
        return 1
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(
        f"built {shown}/ in {seconds:.1f} s ({size_mb(args.out):.1f} MB);"
        f" serve it with: python -m http.server -d {shown}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
