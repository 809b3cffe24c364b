"""What the site is made of (docs/site_layout.py), without building it: the chapters in reading
order, a new chapter joining by its name alone, JupyterLab's collapsed cells carried over, every
picture given a text alternative, every lab's cell its static form (docs/site_labs.py), the npm
files a page may load; and README's site commands are the ones the Pages workflow runs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))

import site_labs  # noqa: E402
import site_layout  # noqa: E402


def notebook_file(folder: Path, name: str) -> Path:
    path = folder / "notebooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), path)
    return path


def test_the_chapters_are_the_numbered_notebooks_in_reading_order() -> None:
    names = [path.stem for path in site_layout.chapters()]
    assert names[:2] == ["00_start_here", "01_qkv_projections"]
    assert names == sorted(names)
    assert "lab_bench" not in names and "lab_slides" not in names


def test_a_new_chapter_joins_the_site_by_its_file_name_alone(tmp_path: Path) -> None:
    for name in ("13_trained_model.ipynb", "00_start_here.ipynb", "lab_bench.ipynb"):
        notebook_file(tmp_path, name)
    notebook_file(tmp_path, "14_induction_heads.ipynb")
    assert [path.name for path in site_layout.chapters(tmp_path)] == [
        "00_start_here.ipynb",
        "13_trained_model.ipynb",
        "14_induction_heads.ipynb",
    ]
    assert "notebooks/14_induction_heads.ipynb" in site_layout.pages(tmp_path)


def test_every_page_keeps_its_repository_path() -> None:
    pages = site_layout.pages()
    assert pages["index.md"] == ROOT / "docs" / "index.md"
    moved = {name: path for name, path in pages.items() if name != "index.md"}
    assert all(path == ROOT / name for name, path in moved.items()), moved
    assert all(path.exists() for path in pages.values())


def test_the_landing_page_includes_readme_rather_than_copying_it() -> None:
    landing = site_layout.LANDING.read_text()
    assert re.search(r"^```\{include\} /README\.md$", landing, re.M)
    readme_start = (ROOT / "README.md").read_text().splitlines()[2]
    assert readme_start not in landing


def cell(source: str = "x = 1", **jupyter: bool) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell(source)
    if jupyter:
        made.metadata["jupyter"] = jupyter
    made.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    return made


def read(*cells: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    notebook = nbformat.v4.new_notebook(cells=list(cells))
    return site_layout.read_notebook(nbformat.writes(notebook)).cells


@pytest.mark.parametrize(
    ("collapsed", "tags"),
    [
        ({}, []),
        ({"source_hidden": True}, ["hide-input"]),
        ({"outputs_hidden": True}, ["hide-output"]),
        ({"source_hidden": True, "outputs_hidden": True}, ["hide-input", "hide-output"]),
    ],
)
def test_a_cell_collapsed_in_jupyterlab_is_collapsed_on_the_site(collapsed, tags) -> None:
    assert read(cell(**collapsed))[0].metadata["tags"] == tags


def picture_cell(plain: str) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell("plt.show()")
    data = {"image/png": "iVBORw0KGgo=", "text/plain": plain}
    made.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return made


def alt(read_cell: nbformat.NotebookNode) -> str | None:
    return read_cell.metadata.get("mystnb", {}).get("image", {}).get("alt")


def test_a_figure_described_by_the_next_paragraph_says_so_in_its_text_alternative() -> None:
    figure = picture_cell("<Figure size 640x480 with 1 Axes>")
    described = nbformat.v4.new_markdown_cell("*Figure:* two heatmaps, side by side.")
    assert alt(read(figure, described)[0]) == site_layout.DESCRIBED_BELOW


def test_a_figure_without_a_description_gets_no_made_up_text_alternative() -> None:
    figure = picture_cell("<Figure size 640x480 with 1 Axes>")
    assert alt(read(figure, nbformat.v4.new_markdown_cell("Next section."))[0]) is None


def test_a_labs_picture_takes_the_labs_own_words() -> None:
    words = "A live lab, shown as a still picture of its state when the cell ran."
    assert alt(read(picture_cell(words))[0]) == words


def lab_cell(source: str) -> nbformat.NotebookNode:
    """A cell as a chapter stores a lab: its widget view and its picture."""
    made = nbformat.v4.new_code_cell(source)
    data = {
        site_layout.WIDGET_VIEW: {"model_id": "0"},
        "image/png": "iVBORw0KGgo=",
        "text/plain": "",
    }
    made.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return made


def chapter_labs() -> list[tuple[str, site_labs.SiteLab | None]]:
    """(chapter, the lab of the table its cell makes) for every cell of a chapter that shows a
    lab's widget view."""
    return [
        (path.name, site_labs.lab_of(cell.source))
        for path in site_layout.chapters()
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        and any(site_layout.WIDGET_VIEW in out.get("data", {}) for out in cell.outputs)
    ]


def test_every_lab_in_a_chapter_has_a_static_form_on_the_site() -> None:
    assert [chapter for chapter, lab in chapter_labs() if lab is None] == []


def test_every_static_form_stands_in_one_chapter() -> None:
    found = sorted(lab.name for _, lab in chapter_labs() if lab is not None)
    assert found == sorted(site_labs.BY_NAME)


def test_a_labs_cell_keeps_its_stored_picture_until_its_static_form_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_labs, "FOLDER", tmp_path)
    cell = read(lab_cell("from attnlib.labs import gqa_lab\n\ngqa_lab()"))[0]
    assert "image/png" in cell.outputs[0].data


def test_a_labs_cell_shows_its_static_form_once_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_labs, "FOLDER", tmp_path)
    lab = site_labs.BY_NAME["gqa"]
    site_labs.manifest_path(lab).parent.mkdir(parents=True)
    manifest = {"title": "GQA", "format": "png", "first": "[0]", "texts": ["a<br>b", "the alt"]}
    manifest |= {"pictures": ["abc123"], "fields": ["picture", "caption", "alt"]}
    manifest["states"] = {"[0]": [0, 0, 1]}
    site_labs.manifest_path(lab, first_only=True).write_text(json.dumps(manifest))
    (output,) = read(lab_cell("from attnlib.labs import gqa_lab\n\ngqa_lab()"))[0].outputs
    shown = output.data["text/html"]
    assert list(output.data) == ["text/html"]
    assert 'data-manifest="../_static/labs/gqa.json"' in shown
    assert '<img src="../_static/labs/gqa/abc123.png" alt="the alt">' in shown
    assert f'src="../_static/{site_labs.SCRIPT}"' in shown


def test_every_npm_file_a_page_may_load_sits_under_its_package_without_es5_or_dist() -> None:
    files = site_layout.vendor_files(Path("/vendor"))
    assert files["mathjax/tex-mml-chtml.js"] == Path("/vendor/mathjax/es5/tex-mml-chtml.js")
    assert files["html-manager/embed-amd.js"] == Path("/vendor/html-manager/dist/embed-amd.js")
    assert files["requirejs/require.js"] == Path("/vendor/requirejs/require.js")


def readme_site_commands() -> list[str]:
    """The commands of README's site build line, in order."""
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if "tools/build_site.py" in line)
    return [part.strip() for part in line.strip("` ").split("&&")]


def test_the_pages_workflow_builds_the_site_with_readmes_commands() -> None:
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    runs = re.findall(r"^\s+- run: (.+)$", workflow, re.M)
    assert runs == readme_site_commands()
    assert re.search(r"path: build/site$", workflow, re.M), "the workflow publishes another folder"


def test_readme_serves_the_folder_the_build_writes() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "python -m http.server -d build/site" in readme
    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    assert build_site.OUT == ROOT / "build" / "site"
