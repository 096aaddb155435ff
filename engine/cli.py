"""`geneb-engine`: compute what is missing, import and export the official formats."""

from __future__ import annotations

import argparse
import importlib
import re
import sys

from engine import __version__
from engine.commands import COMMANDS, module_of
from engine.commands.common import store_of, suggestions
from store.changed import store_changed
from store.vocab.errors import GenebError


class GenebParser(argparse.ArgumentParser):
    """Usage errors in one line, `geneb-engine <command>: <message> (see ... --help)`, exit 2
    (instead of argparse's usage block). Unknown arguments name the (sub)command they follow."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_defaults(_parser_prog=self.prog)     # the innermost command's wins

    def error(self, message: str, prog: str | None = None):
        prog = prog or self.prog
        one_line = _did_you_mean(" ".join(str(message).split()))
        self.exit(2, f"{prog}: {one_line} (see {prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}",
                       getattr(parsed, "_parser_prog", None))
        return parsed


_INVALID_CHOICE = re.compile(
    r"invalid choice: '(?P<given>[^']*)' (?P<rest>\(choose from (?P<choices>.*)\))$")


def _did_you_mean(message: str) -> str:
    """argparse's "invalid choice" with the closest choices, as every name option says it."""
    m = _INVALID_CHOICE.search(message)
    if not m:
        return message
    close = suggestions(m["given"], re.findall(r"'([^']*)'", m["choices"]))
    if not close:
        return message
    return (message[:m.start("rest")] + f"(did you mean {' or '.join(close)}?) "
            + message[m.start("rest"):])


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand's, or only `command`'s where it names one
    (a run imports only its own command's module: about half a second less at each start;
    help, a typo and no command get every subcommand, to list them and suggest the closest)."""
    common = GenebParser(add_help=False)
    common.add_argument("--store", metavar="PATH",
                        help="store folder (default: $GENEB_HOME or ~/.geneb)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    parser = GenebParser(
        prog="geneb-engine",
        description="Run the GENEB benchmark: fill missing results, import and export the "
                    "official formats, report.")
    parser.add_argument("--version", action="version", version=f"geneb-engine {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=GenebParser)
    only = module_of(command) if command is not None else None
    for name in (only,) if only else COMMANDS:
        importlib.import_module(f"engine.commands.{name}").register(sub, common)
    return parser


NEW_HERE = "new here? run `geneb-engine demo`, then `geneb-tui`"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
    if not argv:                                        # no command: what there is, and where
        print(f"{parser.format_help()}\n{NEW_HERE}", file=sys.stderr)  # to start
        return 2
    args = parser.parse_args(argv)
    try:
        code = int(args.handler(args) or 0)
    except GenebError as exc:
        print(f"geneb-engine {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"geneb-engine {args.command}: interrupted; the store is consistent "
              "(finished cells are kept, run the same command again to continue)", file=sys.stderr)
        return 130
    finally:
        _report_damage(args.command)
    if getattr(args, "changes_store", False):
        try:
            _tell_store_changed(args)
        except KeyboardInterrupt:   # the command's work is stored; a listener's is skipped
            pass
    return code


def _tell_store_changed(args) -> None:
    """A command that writes the store returned (its work is stored): the listeners
    (`store.changed`, the dashboard's start-up table) are told; one warning for each that
    failed, and the exit status stays the command's."""
    for problem in store_changed(store_of(args)):
        print(f"geneb-engine {args.command}: warning: {problem}", file=sys.stderr)


def _report_damage(command: str) -> None:
    """Damaged store files the command met (each once; their cells read as missing)."""
    db = sys.modules.get("store.damage")    # never imported just for this
    for message in db.damage() if db else ():
        print(f"geneb-engine {command}: warning: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
