"""The labs' static forms on the site: which lab stands in which chapter, and the grid stored.

Each lab's cell in its chapter becomes, on the site, a lab that works without a kernel
(:mod:`attnlib.liveview.static`; its browser half is ``static.js``): the same controls, and for
every state they reach the picture the lab draws there, drawn here at build time by the lab
itself. ``tools/build_site.py`` calls :func:`write_all`, which writes each lab's manifest
(``labs/NAME.json``) and pictures (``labs/NAME/SHA.png``) into :data:`FOLDER` (the site's
``_static/``); :func:`static_form_html` is what the chapter's page shows in the cell's place
(``site_layout.read_notebook``).

A lab is made here as its chapter makes it (the same data, from :mod:`attnlib.examples` and the
lab's defaults); ``tests/browser/test_site_in_browser.py`` compares the first picture with the one
stored in the chapter.
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import json
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
#: Where the labs' files are written: Sphinx copies the folder's contents into ``_static/``.
FOLDER = ROOT / "build" / "site-labs"
#: The packages whose releases may change a picture's bytes.
DRAWING_PACKAGES = ("numpy", "matplotlib", "pillow")
#: The browser half, as the site serves it (under ``_static/``).
SCRIPT = "labs/static.js"


class SiteLab(NamedTuple):
    """A lab on the site: its chapter's cell (by the call it ends with) and its grid."""

    name: str
    call: str  # the lab cell's last line starts with this
    make: Callable[[], Any]  # makes the lab as the chapter does
    keep: dict[str, Callable[[str], bool]]  # the grid (attnlib.liveview.static.static_form)
    grid: str  # the page's one line on what is stored, when not every state


def _lab(name: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """A maker of ``attnlib.labs.NAME(*args, **kwargs)`` (imported when called)."""

    def make() -> Any:
        import attnlib.labs

        return getattr(attnlib.labs, name)(*args, **kwargs)

    return make


def _trained_lab() -> Any:
    """The chapter's: the "too tired" sentence of the first Winograd pair, layer 3, head 1 (the
    head that shifts most between the pair, by the chapter's measurement)."""
    from attnlib import examples
    from attnlib.pretrained import load_minilm

    _, tired, _, _, _ = examples.WINOGRAD_PAIRS[0]
    # the model itself: a missing model raises its error (which names the command that fetches
    # it) instead of the lab's note in its place
    return _lab("trained_attention_lab", load_minilm(), tired, layer=3, head=1)()


def _every_fifth(label: str) -> bool:
    return int(label) % 5 == 0


def _the_word_it(label: str) -> bool:
    return label.endswith(": it")


LABS = (
    SiteLab("saturation", "saturation_lab(", _lab("saturation_lab"), {}, ""),
    SiteLab("masking", "masking_lab(", _lab("masking_lab"), {}, ""),
    SiteLab("gqa", "gqa_lab(", _lab("gqa_lab"), {}, ""),
    SiteLab("positions", "positions_lab(", _lab("positions_lab"), {}, ""),
    SiteLab("tiling", "tiling_lab(", _lab("tiling_lab"), {}, ""),
    SiteLab(
        "gradient",
        "gradient_lab(",
        _lab("gradient_lab"),
        {"step": _every_fifth},
        "Stored here: every 5th training step.",
    ),
    SiteLab(
        "trained",
        "trained_attention_lab(",
        _trained_lab,
        {"token": _the_word_it},
        "Stored here: the suggested sentences in place of the text box, each with the query"
        " token \u201cit\u201d; every layer and head.",
    ),
    SiteLab("induction", "induction_lab(", _lab("induction_lab"), {}, ""),
)
BY_NAME = {lab.name: lab for lab in LABS}


def digest() -> str:
    """What the labs' pictures depend on: attnlib's code, this file and the versions of the
    packages that draw and encode them."""
    sha = hashlib.sha256()
    for package in DRAWING_PACKAGES:
        sha.update(f"{package} {importlib.metadata.version(package)}\n".encode())
    for path in sorted((ROOT / "attnlib").rglob("*")):
        if path.suffix in (".py", ".js") and "__pycache__" not in path.parts:
            sha.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
    sha.update(Path(__file__).read_bytes())
    return sha.hexdigest()


def manifest_path(lab: SiteLab, first_only: bool = False) -> Path:
    """Where :func:`write_lab` writes ``lab``'s manifest (in :data:`FOLDER`, read when called);
    ``first_only``: the manifest of its first state alone, which its page carries."""
    return FOLDER / "labs" / f"{lab.name}{'.first' if first_only else ''}.json"


def write_lab(name: str) -> tuple[str, int, float]:
    """Make the lab ``name``, walk its states and write its manifest and pictures; return its
    name, its number of states and the seconds it took."""
    from attnlib.liveview.static import static_form

    lab = BY_NAME[name]
    start = time.perf_counter()
    form = static_form(lab.make(), lab.keep)
    pictures = FOLDER / "labs" / lab.name
    shutil.rmtree(pictures, ignore_errors=True)
    pictures.mkdir(parents=True)
    for sha, data in form.pictures.items():
        (pictures / f"{sha}.{form.image_format}").write_bytes(data)
    for first_only in (False, True):
        manifest = form.manifest(lab.name, first_only)
        text = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False)
        manifest_path(lab, first_only).write_text(text, encoding="utf-8")
    return lab.name, len(form.states), time.perf_counter() - start


def write_all(workers: int | None = None) -> list[tuple[str, int, float]]:
    """Write every lab's static form into :data:`FOLDER` (skipped when attnlib and this file are
    unchanged since the last time); return what :func:`write_lab` returned for each."""
    stamp = FOLDER / "labs" / "digest"
    now = digest()
    if stamp.exists() and stamp.read_text() == now:
        return []
    shutil.rmtree(FOLDER, ignore_errors=True)
    (FOLDER / "labs").mkdir(parents=True)
    shutil.copy2(ROOT / "attnlib" / "liveview" / "static.js", FOLDER / SCRIPT)
    workers = workers or min(len(LABS), os.cpu_count() or 1)
    # a process per lab at a time (each with its own matplotlib)
    with ProcessPoolExecutor(workers) as pool:
        done = list(pool.map(write_lab, BY_NAME))
    stamp.write_text(now)
    return done


def lab_of(source: str) -> SiteLab | None:
    """The lab a cell makes, from its source's last line."""
    lines = source.strip().splitlines()
    last = lines[-1] if lines else ""
    return next((lab for lab in LABS if last.startswith(lab.call)), None)


def static_form_html(lab: SiteLab, prefix: str = "../_static/") -> str:
    """What a chapter page shows in the lab cell's place: the lab's first state (title, caption
    and picture, readable without scripts), its manifest for ``static.js`` (which puts the
    controls in) and the address of the whole manifest."""
    text = manifest_path(lab, first_only=True).read_text(encoding="utf-8")
    manifest = json.loads(text)
    inline = text.replace("</", "<\\/")  # JSON's own escape: no "</script>" inside the script
    first = dict(zip(manifest["fields"], manifest["states"][manifest["first"]]))
    texts = manifest["texts"]
    picture = manifest["pictures"][first["picture"]]
    source = f"{prefix}labs/{lab.name}/{picture}.{manifest['format']}"
    note = " ".join(
        filter(
            None,
            [
                "A lab without a kernel: each picture was drawn by the lab itself when this page"
                " was built.",
                lab.grid,
                "Run the notebook for the full lab.",
            ],
        )
    )
    return (
        f'<div class="attnlib-static-lab" data-manifest="{prefix}labs/{lab.name}.json">'
        f'<script type="application/json" class="attnlib-static-first">'
        f"{inline}</script>"
        f'<p class="attnlib-static-title"><b>{html.escape(manifest["title"])}</b></p>'
        '<div class="attnlib-static-controls"></div>'
        f'<div class="attnlib-static-caption">{texts[first["caption"]]}</div>'
        f'<img src="{source}" alt="{html.escape(texts[first["alt"]])}">'
        '<div class="attnlib-static-error" role="alert"></div>'
        f'<p class="attnlib-static-note">{html.escape(note)}</p>'
        f'</div><script type="module" src="{prefix}{SCRIPT}"></script>'
    )
