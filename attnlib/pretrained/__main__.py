"""``python -m attnlib.pretrained``: fetch the model once (if needed) and print its folder.

python -m attnlib.pretrained             # fetch if missing, check the files, print the folder
python -m attnlib.pretrained --refetch   # delete the cached model and fetch it again
"""

from __future__ import annotations

import argparse
import sys

from .files import ModelNotAvailableError, model_folder, refetch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnlib.pretrained",
        description="Fetch all-MiniLM-L6-v2 (84 MB, once) into attnlib's cache and print its"
        " folder; $ATTNLIB_CACHE chooses another cache folder.",
    )
    parser.add_argument(
        "--refetch",
        action="store_true",
        help="delete the cached model and download it again (repairs a damaged file)",
    )
    args = parser.parse_args(argv)
    print("attnlib: locating all-MiniLM-L6-v2 (a first run downloads 84 MB) ...", file=sys.stderr)
    try:
        folder = refetch() if args.refetch else model_folder(download=True, quiet=True)
    except ModelNotAvailableError as err:
        print(err, file=sys.stderr)
        return 1
    print(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
