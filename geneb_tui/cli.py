"""`geneb-tui [--store PATH]`: the dashboard over a GENEB store (same store rules as the engine)."""

from __future__ import annotations

import argparse
import sys

from store.paths import store_named
from store.vocab.errors import GenebError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="geneb-tui",
                                description="Explore the GENEB results in a store.")
    p.add_argument("--store", metavar="PATH",
                   help="store folder (default: $GENEB_HOME or ~/.geneb)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from geneb_tui.app import GenebApp  # lazy: textual, rich

    try:
        paths = store_named(args.store, write=False, must_exist=args.store is not None)
    except GenebError as exc:
        print(f"geneb-tui: {exc}", file=sys.stderr)
        return 2
    app = GenebApp(paths)
    app.run()
    return app.return_code or 0   # 1 when the app ended on an unhandled error


if __name__ == "__main__":
    sys.exit(main())
