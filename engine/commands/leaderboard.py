"""`geneb-engine leaderboard -o DIR`: the official web leaderboard's two files
(`leaderboard.json`, `leaderboard_tasks.json`) from the store's complete models, into an output
folder (`store.output_folder`: the folder's other files kept, a name taken by a file geneb did
not write refused)."""

from __future__ import annotations

from collections import Counter

from engine.commands.common import (
    StoreNames,
    add_protocol_arg,
    console,
    emit_json,
    one_protocol,
    store_of,
)
from store.output_folder import output_folder
from store.vocab.errors import GenebError
from store.vocab.protocol import GENEB_V1
from store.vocab.sources import BOARD_PREFERENCE


def register(sub, common) -> None:
    p = sub.add_parser(
        "leaderboard", parents=[common], help="write leaderboard.json and leaderboard_tasks.json",
        description="Write the two files of the official GENEB web leaderboard (as the "
                    "official tools/build_leaderboard.py writes them: same keys, rows sorted by "
                    "lower-cased model id, plain means, compact JSON) from every model of the "
                    "store with all 300 geneb-v1 cells (3 regimes x 100 tasks; k-shot cells "
                    "with all five seeds, or imported). Each model has one row, taken from the "
                    "first source in the --source order that holds all its cells; the others "
                    "are listed as left out.")
    p.add_argument("-o", "--output", metavar="DIR", required=True,
                   help="the folder to write leaderboard.json and leaderboard_tasks.json into "
                        "(created when missing; its other files are kept; the two files of an "
                        "earlier run are replaced, another file of those names is refused)")
    p.add_argument("--source", nargs="+", metavar="SOURCE",
                   help="the sources to take rows from, preferred first (default: "
                        f"{', '.join(BOARD_PREFERENCE)}, then the store's others)")
    add_protocol_arg(p, help="the protocol of the results")
    p.set_defaults(handler=run)


def run(args) -> int:
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.official.leaderboard import (  # lazy: polars, duckdb, pyarrow
        GENERATOR,
        LEADERBOARD_FILES,
        leaderboard_documents,
        legacy_names,
        source_order,
        store_submissions,
        write_leaderboard_files,
    )

    paths = store_of(args)
    snap = Snapshot(paths)
    names = StoreNames(paths, snap)
    sources = names.check_sources(args.source, option="--source") or source_order(names.sources)
    protocol = one_protocol(args.protocol, why="a leaderboard is of one")
    out = output_folder("-o", args.output, generator=GENERATOR, store=paths,
                        is_for=f"give the folder to write {' and '.join(LEADERBOARD_FILES)} into",
                        legacy=legacy_names)
    entries, left_out = store_submissions(snap, sources=sources, protocol_hash=protocol.hash)
    if not entries:
        shown = "".join(f"; {line}" for line in left_out[:3]) + ("; ..." * (len(left_out) > 3))
        official = protocol == GENEB_V1
        fill = ("`geneb-engine fill --models MODEL`" if official else
                f"`geneb-engine fill --protocol {protocol.name} --models MODEL`")
        imported = ("import the official results with `geneb-engine import --official`, or "
                    if official else "")
        raise GenebError(f"no model has all 300 {protocol.name} cells in source(s) "
                         f"{', '.join(sources)} of {paths.root}{shown}; nothing written "
                         f"({imported}complete a model with {fill})")
    written = write_leaderboard_files(out, leaderboard_documents(s for _, s in entries))
    if args.json:
        emit_json({"files": [str(p) for p in written], "protocol": protocol.name,
                   "table_version": snap.version,
                   "rows": [{"model": s.model_id, "source": source} for source, s in entries],
                   "left_out": left_out})
        return 0
    for line in left_out:
        console.print(f"left out: {line}", markup=False, highlight=False)
    counts = Counter(source for source, _ in entries)
    n = len(entries)
    by_source = ", ".join(f"{n} {source}" for source, n in counts.items())
    console.print(f"wrote {' and '.join(LEADERBOARD_FILES)} to {out.path}: {n} "
                  f"model{'s' * (n != 1)} ({by_source}), protocol {protocol.name}, results "
                  f"{snap.label}", markup=False, highlight=False)
    return 0
