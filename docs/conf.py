"""Sphinx configuration of the site (the book): every numbered notebook a page, from its stored
outputs, nothing executed; every file a page loads comes from the site's own folder.

Build with ``python tools/build_site.py`` (it gathers the pages and the browser files, then runs
Sphinx with this folder as its configuration directory); CONTRIBUTING.md says why Sphinx, myst-nb
and sphinx-book-theme.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import site_labs
from site_layout import STATIC, VENDOR_URL

project = "attention-notebooks"
author = "the attention-notebooks contributors"
copyright = "the attention-notebooks contributors"

extensions = ["myst_nb"]
root_doc = "index"
# README.md is the landing page's text (docs/index.md includes it), not a page of its own.
exclude_patterns = ["README.md"]

# Notebooks: their stored outputs, never executed (nbval proves them in the test suite).
nb_execution_mode = "off"
# JupyterLab's own collapse marks (jupyter.source_hidden / outputs_hidden) become myst-nb's
# hide-input / hide-output tags as a notebook is read (site_layout.read_notebook): the cell
# shows collapsed, behind a "Show code cell source" toggle that opens on a click.
nb_custom_formats = {".ipynb": "site_layout.read_notebook"}
# A lab cell stores a widget view (no widget state: the lab needs its kernel) and a PNG of the
# lab as it first drew. The view would outrank the PNG and show nothing; the PNG goes first.
nb_mime_priority_overrides = [("html", "image/png", 5)]
# A page whose notebook carries widget state loads the widgets' browser code from the site's
# copies of the npm packages (tools/fetch_web_assets.py), not from a CDN.
nb_ipywidgets_js = {
    f"{VENDOR_URL}/requirejs/require.js": {},
    f"{VENDOR_URL}/html-manager/embed-amd.js": {},
}
nb_merge_streams = True

myst_enable_extensions = ["dollarmath", "amsmath"]
# Links to a heading of another page (`09_positions.ipynb#...`) resolve to its anchor.
myst_heading_anchors = 3

# Equations: MathJax 3 from the site's folder (relative to _static/), only on pages with math.
mathjax_path = f"{VENDOR_URL}/mathjax/tex-mml-chtml.js"

html_theme = "sphinx_book_theme"
# _templates/search-button-field.html: the theme's search button, named by its visible text.
templates_path = ["_templates"]
html_title = "attention-notebooks"
# _static/site.css: the site's few style rules; STATIC: the npm files; site_labs.FOLDER: the
# labs' static forms (both written by tools/build_site.py).
html_static_path = ["_static", str(STATIC), str(site_labs.FOLDER)]
html_css_files = ["site.css"]
# The sidebar: the title and the chapters (the search button is in the header already).
html_sidebars = {"**": ["navbar-logo.html", "sbt-sidebar-nav.html"]}
html_theme_options = {
    # the title above the sidebar leads home
    "home_page_in_toc": False,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    # No icon links, no analytics, no announcement: nothing to fetch from elsewhere.
    "icon_links": [],
}
html_context = {"default_mode": "light"}  # the figures are drawn for a white page
html_last_updated_fmt = None
# The download button offers each page's source: a chapter's notebook, under its own name.
html_copy_source = True
html_sourcelink_suffix = ""
html_show_sourcelink = False
# Sphinx's search index: a local file, searched in the browser.
html_search_language = "en"


#: myst-nb names the toggle of a collapsed cell "Toggle hidden content", while it shows "Show code
#: cell source": a speech-input user says what is shown (WCAG 2.5.3, axe-core's
#: label-content-name-mismatch). Without the label, the shown words are its name.
TOGGLE_LABEL = '<summary aria-label="Toggle hidden content">'


def name_toggles_by_their_words(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = context["body"].replace(TOGGLE_LABEL, "<summary>")


def setup(app):
    app.connect("html-page-context", name_toggles_by_their_words)
    # A change to site_layout.py (how a notebook is read) re-reads every page, as a change of
    # this file's settings does: Sphinx compares this value with the one of the last build.
    digest = hashlib.sha256((Path(__file__).parent / "site_layout.py").read_bytes()).hexdigest()
    app.add_config_value("site_layout_digest", digest, "env")
    # likewise new static forms of the labs (a lab cell's page shows its first picture)
    stamp = site_labs.FOLDER / "labs" / "digest"
    app.add_config_value("site_labs_digest", stamp.read_text() if stamp.exists() else "", "env")
