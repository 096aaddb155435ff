"""`geneb-engine demo`: the first command after installing geneb. It runs two commands as they
are (their parser and handler, in this process): `import --official` (the official results,
shipped with geneb, no network) and `fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6 --jobs
auto` (the built-in suite with the weight-free k-mer baselines, a few minutes on a laptop), then
says what to run next. A second run computes nothing: both commands store only what is missing.
"""

from __future__ import annotations

from engine.cli import build_parser
from engine.commands.common import console
from store.vocab.suites import GENEB_MINI_SUITE, GENEB_V1_SUITE

IMPORT = ("import", "--official")
FILL = ("fill", "--suite", GENEB_MINI_SUITE.name, "--models", "kmer-3", "kmer-4", "kmer-6",
        "--jobs", "auto")


def register(sub, common) -> None:
    p = sub.add_parser(
        "demo", parents=[common], help="start here: the official results and a small suite "
                                       "filled with the k-mer baselines",
        description=f"Run `geneb-engine {' '.join(IMPORT)}` then `geneb-engine {' '.join(FILL)}` "
                    "into the store, then show the next commands (the dashboard, the report, "
                    "your own model). Run again, it computes nothing.")
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def run(args) -> int:
    parser = build_parser()
    given = [*(("--store", args.store) if args.store is not None else ()),
             *(("--json",) if args.json else ())]
    for argv in (IMPORT, FILL):
        step = parser.parse_args([*argv, *given])
        if code := int(step.handler(step) or 0):
            return code
    if not args.json:
        store = f" --store {args.store}" if args.store is not None else ""
        steps = [(f"geneb-tui{store}", "the dashboard over this store"),
                 (f"geneb-engine report{store} --suite {GENEB_V1_SUITE.name}",
                  "the GENEB analyses of the official results, in the terminal"),
                 (f"geneb-engine fill{store} --suite geneb-mini --models PATH",
                  "your own model: a folder save_pretrained wrote, or a hub id (org/name); "
                  "--suite geneb-v1 after `geneb-engine data download`")]
        width = max(len(command) for command, _ in steps)
        console.print("\nnext:\n" + "\n".join(f"  {command.ljust(width)}   {what}"
                                              for command, what in steps),
                      markup=False, highlight=False)
    return 0
