"""What the site is made of, shared by docs/conf.py (Sphinx) and tools/build_site.py.

* ``pages(root)``: the files that become pages, at the same paths as in the repository, so that
  a link between them works alike on GitHub and on the site. Chapters are the numbered notebooks
  (``notebooks/NN_name.ipynb``), in the folder's order: a new chapter joins by its file name.
* ``VENDOR_FILES``: the parts of the npm packages (fetched into ``notebooks/vendor/`` by
  ``tools/fetch_web_assets.py``) that a page may load, copied into the site's
  ``_static/npm/``, a folder no page loads from unless it asks (Sphinx adds to a page only
  the scripts and styles named for it).
* ``read_notebook``: myst-nb's reader of ``.ipynb`` files, which gives JupyterLab's collapsed
  cells myst-nb's tags for the same.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import site_labs

ROOT = Path(__file__).resolve().parents[1]
#: Where tools/build_site.py gathers the pages (Sphinx's source folder) and the browser files.
SOURCE = ROOT / "build" / "site-src"
STATIC = ROOT / "build" / "site-static"
#: The folder of the npm copies, and where the site keeps what it takes from them (under
#: ``_static/``, the prefix Sphinx resolves a relative script path against).
VENDOR = ROOT / "notebooks" / "vendor"
VENDOR_URL = "npm"
#: Per package: the paths under its folder in VENDOR that a page may load (a folder: all of it;
#: a name may hold a * for any characters). A page finds them under ``_static/npm/PACKAGE/``,
#: without the package's own ``es5/`` or ``dist/`` prefix. MathJax: the combined component a
#: page loads, and what it loads on demand (TeX extensions such as \boldsymbol, the CHTML fonts,
#: the accessibility menu's explorer and its speech rules). The widgets' manager: its AMD bundle
#: and the icon fonts its styles name (woff2 and woff: what browsers of this decade take).
VENDOR_FILES = {
    "mathjax": [
        "es5/tex-mml-chtml.js",
        "es5/input",
        "es5/output/chtml",
        "es5/a11y",
        "es5/ui",
        "es5/sre",
        "es5/adaptors",
        "LICENSE",
    ],
    "html-manager": [
        "dist/embed-amd.js",
        "dist/embed.js.LICENSE.txt",
        "dist/*.woff2",
        "dist/*.woff",
    ],
    "requirejs": ["require.js"],
}
#: The landing page: README's text (included, not copied) and the book's contents.
LANDING = ROOT / "docs" / "index.md"
#: Pages besides the chapters, at their repository paths.
OTHER_PAGES = (
    "README.md",
    "docs/instructors.md",
    "docs/contributors.md",
    "CONTRIBUTING.md",
    "benchmarks/README.md",
)


def chapters(root: Path = ROOT) -> list[Path]:
    """The numbered notebooks, in reading order (their file names sort that way)."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def pages(root: Path = ROOT) -> dict[str, Path]:
    """Path in the site's source folder -> the file in the repository."""
    found = {"index.md": root / "docs" / "index.md"}
    found |= {name: root / name for name in OTHER_PAGES}
    found |= {path.relative_to(root).as_posix(): path for path in chapters(root)}
    return found


def vendor_files(vendor: Path = VENDOR) -> dict[str, Path]:
    """Path under the site's ``_static/npm/`` -> the file or folder in ``vendor``; a pattern
    that matches nothing maps to the path it names (missing, which the build reports)."""
    found = {}
    for package, patterns in VENDOR_FILES.items():
        for pattern in patterns:
            for path in sorted((vendor / package).glob(pattern)) or [vendor / package / pattern]:
                inside = path.relative_to(vendor / package).as_posix()
                inside = inside.removeprefix("es5/").removeprefix("dist/")
                found[f"{package}/{inside}"] = path
    return found


#: A picture's text alternative, where the next cell describes it ("*Figure:* ...", as every
#: figure of the chapters is described for a reader who cannot see it).
DESCRIBED_BELOW = "Figure, described in the next paragraph."


def read_notebook(text: str) -> nbformat.NotebookNode:
    """Read a notebook as myst-nb does, and carry over what JupyterLab shows a reader:

    * a collapsed cell stays collapsed: a hidden source gets myst-nb's ``hide-input`` tag,
      hidden outputs ``hide-output`` (each opens on a click, as in JupyterLab);
    * a picture gets a text alternative (``alt``): a figure followed by its description says
      so, and a lab's picture takes the lab's own words (its plain-text form);
    * a lab's cell shows the lab's static form (:mod:`site_labs`), once ``tools/build_site.py``
      has written it.
    """
    notebook = nbformat.reads(text, as_version=4)
    cells = notebook.cells
    for cell, after in zip(cells, [*cells[1:], None]):
        collapsed = cell.metadata.get("jupyter", {})
        tags = cell.metadata.setdefault("tags", [])
        if collapsed.get("source_hidden") and "hide-input" not in tags:
            tags.append("hide-input")
        if collapsed.get("outputs_hidden") and cell.get("outputs") and "hide-output" not in tags:
            tags.append("hide-output")
        if (lab := static_lab(cell)) is not None:
            html = site_labs.static_form_html(lab)
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": html})]
        elif alt := picture_alt(cell, after):
            cell.metadata.setdefault("mystnb", {}).setdefault("image", {}).setdefault("alt", alt)
    return notebook


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def static_lab(cell: nbformat.NotebookNode) -> site_labs.SiteLab | None:
    """The lab whose static form takes ``cell``'s place: a cell that shows a lab's widget view,
    when the lab's static form is written."""
    if cell.cell_type != "code" or not any(WIDGET_VIEW in o.get("data", {}) for o in cell.outputs):
        return None
    lab = site_labs.lab_of(cell.source)
    if lab is None or not site_labs.manifest_path(lab, first_only=True).exists():
        return None
    return lab


def picture_alt(cell: nbformat.NotebookNode, after: nbformat.NotebookNode | None) -> str | None:
    """The text alternative of the picture ``cell`` shows, if it shows one and it is known."""
    data = [out.get("data", {}) for out in cell.get("outputs", [])]
    pictures = [d for d in data if "image/png" in d or "image/jpeg" in d]
    if not pictures:
        return None
    words = str(pictures[0].get("text/plain", ""))
    if words and not words.startswith("<Figure"):  # matplotlib's repr says nothing
        return words
    if after is not None and after.cell_type == "markdown" and after.source.startswith("*Figure:*"):
        return DESCRIBED_BELOW
    return None
