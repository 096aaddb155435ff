"""`geneb-engine import`: official submissions (schema 1.0), leaderboard.json and
leaderboard_tasks.json into the store."""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table

from engine.commands.common import console, emit_json, store_of
from store.official.data import OFFICIAL_COMMIT, OFFICIAL_REPO
from store.official.fetch import official_files, pinned_commit
from store.vocab.errors import GenebError


def register(sub, common) -> None:
    p = sub.add_parser(
        "import", parents=[common],
        help="import official submissions, leaderboard.json or leaderboard_tasks.json",
        description="Import official GENEB submission files (schema 1.0) and the official "
                    "leaderboard.json and leaderboard_tasks.json (told apart by their content). "
                    "Every file is validated first; one problem per line names the file, the "
                    "field and the rule, and nothing is stored unless all files are valid. "
                    "Re-importing the same content stores nothing new.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="submission files, leaderboard.json, leaderboard_tasks.json, or "
                        "folders of *.json files")
    p.add_argument("--official", action="store_true",
                   help=f"import the official results shipped with geneb (github.com/"
                        f"{OFFICIAL_REPO} at {OFFICIAL_COMMIT[:10]}: 40 official and 1 "
                        "self-reported submissions, leaderboard.json), written to "
                        "<store>/reference/official-submissions/; no network")
    p.add_argument("--commit", metavar="SHA",
                   help="with --official: download the 40 official submissions of another "
                        f"commit of github.com/{OFFICIAL_REPO} instead (needs network)")
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def run(args) -> int:
    from store.official.submission import import_files  # lazy: polars, duckdb, pyarrow

    official = args.official or args.commit is not None
    if not args.paths and not official:
        raise GenebError("nothing to import: give submission files, leaderboard.json, "
                         "leaderboard_tasks.json or folders of them, or --official for the "
                         "official GENEB results")
    if args.commit is not None:
        pinned_commit(args.commit)      # a malformed SHA is refused before the store is touched
    paths = store_of(args, write=True)
    files = [*args.paths, *(official_files(paths, args.commit) if official else [])]
    outcomes = import_files(paths, files)
    if args.json:
        emit_json({"store": str(paths.root),
                   "files": [{**asdict(o), "path": str(o.path)} for o in outcomes]})
        return 0
    table = Table(title=f"imported into {paths.root}")
    for col, justify in (("file", "left"), ("source", "left"), ("rows", "right"),
                         ("status", "left")):
        table.add_column(col, justify=justify)
    for o in outcomes:
        colour = "green" if o.status == "imported" else "dim"
        table.add_row(o.path.name, o.source or "leaderboard (reference table)", str(o.rows),
                      f"[{colour}]{o.status}[/]")
    console.print(table)
    # leaderboard.json's rows go to the reference table; every other kind's are result rows
    written = sum(o.rows for o in outcomes if o.kind != "leaderboard")
    unchanged = sum(o.status == "unchanged" for o in outcomes)
    console.print(f"{len(outcomes)} file(s): {written} result rows written"
                  + (f", {unchanged} already in the store unchanged" if unchanged else ""))
    return 0
