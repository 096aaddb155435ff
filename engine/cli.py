"""`geneb-engine`: compute what is missing, import and export the official formats."""

from __future__ import annotations

import argparse
import importlib
import sys

from engine import __version__
from engine.commands import COMMANDS
from store.errors import GenebError


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", metavar="PATH",
                        help="store folder (default: $GENEB_HOME or ~/.geneb)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    parser = argparse.ArgumentParser(
        prog="geneb-engine",
        description="Run the GENEB benchmark: fill missing results, import and export the "
                    "official formats, report.")
    parser.add_argument("--version", action="version", version=f"geneb-engine {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"engine.commands.{name}").register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except GenebError as exc:
        print(f"geneb-engine {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"geneb-engine {args.command}: interrupted; the store is consistent "
              "(finished cells are kept, run the same command again to continue)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
