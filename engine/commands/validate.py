"""`geneb-engine validate`: check official files (submissions, leaderboard.json,
leaderboard_tasks.json) by the rules `import` applies, without a store and writing nothing."""

from __future__ import annotations

from engine.commands.common import console, emit_json


def register(sub, common) -> None:
    p = sub.add_parser(
        "validate", help="check submission and leaderboard files (writes nothing)",
        description="Check official GENEB files as `import` would: every rule of the official "
                    "validator (tools/validate_submission.py) and the stricter ones of this "
                    "tool, for submission files (schema 1.0), leaderboard.json and "
                    "leaderboard_tasks.json (told apart by their content). One line per "
                    "problem, `<file>: <field>: <rule>`; exit 1 when any file has a problem, 0 "
                    "when all are valid. No store is opened and nothing is written.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="submission files, leaderboard files, or folders of *.json files")
    p.add_argument("--json", action="store_true",
                   help="the problems as a JSON list of {file, field, rule} objects")
    p.set_defaults(handler=run)


def run(args) -> int:
    from store.official.formats import expand_paths, read_official_file  # lazy: polars

    files = expand_paths(args.paths)
    problems = [problem for path in files for problem in read_official_file(path)[1]]
    if args.json:
        emit_json([{"file": str(p.file), "field": p.field, "rule": p.rule} for p in problems])
        return 1 if problems else 0
    for problem in problems:
        console.print(str(problem), markup=False, highlight=False)
    n = len(files)
    if problems:
        bad = len({p.file for p in problems})
        console.print(f"{len(problems)} problem(s) in {bad} of {n} file{'s' * (n != 1)}")
        return 1
    console.print(f"{n} file{'s' * (n != 1)} valid")
    return 0
