"""``python -m attnlib.pretrained``: fetch the model once (if needed) and print its folder."""

from __future__ import annotations

import sys

from .files import ModelNotAvailableError, model_folder


def main() -> int:
    print("attnlib: locating all-MiniLM-L6-v2 (a first run downloads 84 MB) ...", file=sys.stderr)
    try:
        folder = model_folder(download=True, quiet=True)
    except ModelNotAvailableError as err:
        print(err, file=sys.stderr)
        return 1
    print(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
