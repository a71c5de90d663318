"""`python -m constrint FILE [options]`: the `constrint solve` command-line solver.

`python -m constrint solve FILE ...` and `python -m constrint --help` work too; the program is the
same `constrint` executable the C++ build installs, shipped inside the package.
"""
import os
import sys
from pathlib import Path


def main() -> None:
    program = Path(__file__).resolve().parent / "bin" / "constrint"
    if not program.exists():
        sys.exit(f"constrint: the command-line program is missing from the package ({program})")
    args = sys.argv[1:]
    if args and not args[0].startswith("-") and args[0] not in ("solve", "format"):
        args = ["solve"] + args  # python -m constrint FILE
    os.execv(program, [str(program)] + args)


if __name__ == "__main__":
    main()
