"""`geneb-engine compare A B`: per-cell differences between two stores, sources of a store or
official submission files (does a run reproduce the official cells?). It only reads: nothing is
written and no store is created.

Each of A and B is, in this order: an existing file (a submission) or folder (a store when it
holds `results/` or `catalog/`, else a folder of submission files); `STORE:SOURCE`, one source
of the store folder STORE; else a source of the `--store` store. The comparison itself is
`store.compare_cells`.

`--presets` (a store against submission files) compares each variant the store holds of a
submission's model on its own (`store.compare_cells.preset_candidates`): the model at its
current variant and each entry `<model> [reference@4]`, `[reference@8]`, ... that `fill
--preset reference --batch-size N` computed, and says which reproduces the submission.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from engine.commands.common import (
    StoreNames,
    add_protocol_arg,
    console,
    emit_json,
    one_protocol,
    positive_int,
    real_number,
    store_of,
    table_console,
)
from engine.commands.layout import Col, FitTable
from store.compare_cells import (
    DEFAULT_TOL,
    Candidate,
    compare_cells,
    mixed_sources,
    preset_candidates,
    store_cells,
    submission_cells,
    variant_cells,
)
from store.db import Snapshot
from store.did_you_mean import check_names
from store.official.formats import Submission, expand_paths, read_official_file
from store.paths import StorePaths, check_store, resolve_store
from store.vocab.errors import GenebError
from store.vocab.protocol import GENEB_V1

if TYPE_CHECKING:
    import polars as pl

    from store.compare_cells import Comparison
    from store.db import Snapshot

ROWS = 50       # differing cells shown by default (--json lists every one)
_SHOWN = 5      # models named in an only-in line before "..."


# argparse `type=` of `--tol`: a finite number >= 0.
tolerance = real_number(lambda v: v >= 0, give="give one >= 0, such as 1e-12 or 0",
                        bad="not a finite number >= 0; give one such as 1e-12 or 0")


def register(sub, common) -> None:
    p = sub.add_parser(
        "compare", parents=[common], help="per-cell differences between two result sets",
        description="Compare the cells (model, task, regime, metric) that A and B both hold, "
                    "on seed means (a submission holds them as they are): the cells where "
                    "|B - A| exceeds --tol, the largest |B - A|, and how many cells only one "
                    "side holds. Exit 0 when every cell both hold is within --tol (and they "
                    "hold one at least), 1 otherwise, 2 on bad input. Nothing is written.")
    what = ("a submission file, a folder of them, a store folder (its every source; "
            "STORE:SOURCE for one), or a source of --store (local, official, ...)")
    p.add_argument("a", metavar="A", help=what)
    p.add_argument("b", metavar="B", help="the same kinds as A; differences are B - A")
    p.add_argument("--tol", type=tolerance, default=DEFAULT_TOL, metavar="T",
                   help=f"the largest |B - A| that counts as equal (default {DEFAULT_TOL:g}: "
                        "above the last-bit noise of a seed mean, below any change of a "
                        "prediction; 0: exact)")
    add_protocol_arg(p, help="the protocol of the stores' cells (submission files hold "
                             "geneb-v1's)")
    p.add_argument("--presets", action="store_true",
                   help="a store against submission files: compare each recipe preset and "
                        "batch size the store holds of a submission's model (its entries "
                        "MODEL [reference@4], ...: fill --preset reference --batch-size N "
                        "computes them) on its own, and say which reproduces the submission")
    p.add_argument("--rows", type=positive_int, default=ROWS, metavar="N",
                   help=f"show at most N differing cells, largest first (default {ROWS}; "
                        "--json lists every one)")
    p.set_defaults(handler=run)


@dataclass(frozen=True)
class Side:
    """One of A and B: where its cells come from."""

    which: str                  # "A" or "B"
    operand: str
    kind: str                   # "store" or "submissions"
    path: Path
    source: str | None = None   # a store's source; None: every source

    def label(self, snap: Snapshot | None, protocol: str) -> str:
        if self.kind == "submissions":
            return f"submission file(s) {self.path}"
        source = f"source {self.source}" if self.source else "every source"
        return f"store {self.path}, {source}, {protocol} ({snap.label})"


def _existing(text: str) -> Path | None:
    try:
        path = Path(text).expanduser()
        return path if path.exists() else None
    except (RuntimeError, OSError, ValueError):      # `~user` of no known user, odd names
        return None


def _is_store(folder: Path) -> bool:
    paths = StorePaths(folder)
    return paths.results.is_dir() or paths.catalog.is_dir()


class _Stores:
    """One snapshot per store, shared by both sides (one version of each store is compared)."""

    def __init__(self):
        self._snaps: dict[Path, Snapshot] = {}

    def snap(self, paths: StorePaths) -> Snapshot:
        if paths.root not in self._snaps:
            self._snaps[paths.root] = Snapshot(check_store(paths, write=False))
        return self._snaps[paths.root]


def locate(which: str, operand: str, args, stores: _Stores) -> Side:
    """What `operand` names (see the module docstring); a source is checked by name."""
    path = _existing(operand)
    if path is not None:
        if path.is_dir() and _is_store(path):
            return Side(which, operand, "store", resolve_store(path).root)
        return Side(which, operand, "submissions", path)
    store, colon, source = operand.rpartition(":")
    if colon and store:
        folder = _existing(store)
        if folder is None or not folder.is_dir():
            raise GenebError(f"{which} {operand}: no such store folder {store}")
        if not _is_store(folder):
            raise GenebError(f"{which} {operand}: {store} is not a store (no results/ or "
                             "catalog/ folder in it)")
        paths = resolve_store(folder)
        check_names("source", [source], StoreNames(paths, stores.snap(paths)).sources,
                    option=which)
        return Side(which, operand, "store", paths.root, source)
    if "/" in operand or operand.endswith(".json"):
        raise GenebError(f"{which} {operand}: no such file or folder")
    paths = store_of(args)
    check_names("source", [operand], StoreNames(paths, stores.snap(paths)).sources,
                option=which, more="; or give a submission file or folder, or a store "
                                   "folder (STORE or STORE:SOURCE)")
    return Side(which, operand, "store", paths.root, operand)


def _protocol_hash(name: str, sides: list[Side]) -> str:
    protocol = one_protocol(name, why="cells are compared one protocol at a time")
    if protocol.hash != GENEB_V1.hash and any(s.kind == "submissions" for s in sides):
        raise GenebError(f"--protocol {name}: submission files hold {GENEB_V1.name} results; "
                         "compare two stores for another protocol")
    return protocol.hash


def _submission_cells(side: Side) -> pl.DataFrame:
    """The cells of the side's submission files; every file validated, one line on error."""
    try:
        files = expand_paths([side.path])
    except GenebError as exc:       # a folder without *.json files
        raise GenebError(f"{side.which}: {exc}, and it is not a store (no results/ or "
                         "catalog/ folder)") from None
    problems, subs = [], []
    for f in files:
        doc, found = read_official_file(f)
        problems += found
        if isinstance(doc, Submission):
            subs.append(doc)
        elif doc is not None:
            problems.append(f"{f}: (file): a leaderboard file, not a submission; give "
                            "submission files")
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise GenebError(f"{side.which}: {problems[0]}{more}")
    return submission_cells(subs)


def cells_of(side: Side, stores: _Stores, protocol_hash: str, protocol: str) -> pl.DataFrame:
    """The side's cells, refused when empty or when a model's cells come from two sources."""
    if side.kind == "submissions":
        cells = _submission_cells(side)
    else:
        cells = store_cells(stores.snap(resolve_store(side.path)), protocol_hash, side.source)
        if cells.is_empty():
            what = f"{side.source} results" if side.source else "results"
            raise GenebError(f"{side.which} {side.operand}: the store {side.path} holds no "
                             f"{what} under protocol {protocol}; fill or import them first")
    mixed = mixed_sources(cells)
    if mixed:
        model, sources = next(iter(mixed.items()))
        others = f" (and {len(mixed) - 1} more model(s))" if len(mixed) > 1 else ""
        fix = (f"name one, e.g. {side.path}:{sources[0]}" if side.kind == "store" else
               "give the files of one of them")
        raise GenebError(f"{side.which} {side.operand}: holds {model} from {len(sources)} "
                         f"sources ({', '.join(sources)}){others}; {fix}")
    return cells


def run(args) -> int:
    stores = _Stores()
    sides = [locate("A", args.a, args, stores), locate("B", args.b, args, stores)]
    protocol_hash = _protocol_hash(args.protocol, sides)
    if args.presets:
        return _presets(args, sides, stores, protocol_hash)
    a, b = (cells_of(s, stores, protocol_hash, args.protocol) for s in sides)
    result = compare_cells(a, b, args.tol)
    reproduced = _reproduced(sides, result)
    labels = [s.label(stores.snap(resolve_store(s.path)) if s.kind == "store" else None,
                      args.protocol) for s in sides]
    if args.json:
        emit_json({
            **{s.which.lower(): {"operand": s.operand, "kind": s.kind, "path": str(s.path),
                                 "source": s.source, "label": label, "cells": cells.height}
               for s, label, cells in zip(sides, labels, (a, b), strict=True)},
            "protocol": args.protocol, "tol": args.tol, "compared": result.compared,
            "beyond": result.differences.height, "agrees": result.agrees,
            "largest": result.largest,
            "only_in_a": result.only_a["cells"].sum(), "only_in_b": result.only_b["cells"].sum(),
            "only_in_a_models": dict(result.only_a.iter_rows()),
            "only_in_b_models": dict(result.only_b.iter_rows()),
            "reproduced": None if reproduced is None else
            [m for m, why in reproduced.items() if not why],
            "not_reproduced": None if reproduced is None else
            {m: why for m, why in reproduced.items() if why},
            "differences": result.differences.to_dicts()})
    else:
        for s, label, cells in zip(sides, labels, (a, b), strict=True):
            console.print(f"{s.which}: {escape(label)}: {cells.height} cells")
        if not result.differences.is_empty():
            table_console().print(_table(result, args.rows))
        console.print(_summary(result))
        if reproduced:
            console.print(_reproduction(reproduced, sides))
    return 0 if result.agrees else 1


def _reproduced(sides: list[Side], result: Comparison) -> dict[str, str] | None:
    """For a store against submission files: submission model -> why the store does not
    reproduce it ("" when it does; `Comparison.reproduced`); None for other pairs."""
    if {s.kind for s in sides} != {"store", "submissions"}:
        return None
    return result.reproduced(next(s for s in sides if s.kind == "submissions").which.lower())


def _reproduction(reproduced: dict[str, str], sides: list[Side]) -> str:
    store = next(s for s in sides if s.kind == "store").which
    done = [escape(m) for m, why in reproduced.items() if not why]
    failed = [f"{escape(m)} ({why})" for m, why in reproduced.items() if why]
    parts = ([f"[green]reproduced by {store}[/]: {', '.join(done)}"] if done else []) + \
        ([f"[red]not reproduced by {store}[/]: {'; '.join(failed)}"] if failed else [])
    return "submissions: " + "; ".join(parts)


def _table(result: Comparison, rows: int) -> FitTable:
    n = result.differences.height
    which = f"{n}" if n <= rows else f"the first {rows} of {n}"
    rest = "" if n <= rows else " (--rows N shows more, --json all)"
    table = FitTable(f"{which} cell(s) beyond tolerance {result.tol:g}, largest |B − A| "
                     f"first{rest}",
                     [Col("model", key=True, style="bold"), Col("task", key=True),
                      Col("regime"), Col("metric"), Col("A", justify="right", drop=1),
                      Col("B", justify="right", drop=1), Col("B − A", justify="right")],
                     max_drop=2)
    for r in result.differences.head(rows).iter_rows(named=True):
        table.add_row(escape(r["model"]), escape(r["task"]), r["regime"], r["metric"],
                      repr(r["a"]), repr(r["b"]), f"{r['difference']:+.3g}")
    return table


def _only(frame: pl.DataFrame) -> str:
    total = frame["cells"].sum()
    if not total:
        return "0"
    models = frame["model"].to_list()
    named = ", ".join(escape(m) for m in models[:_SHOWN])
    named += f", ... ({len(models)} models)" if len(models) > _SHOWN else ""
    return f"{total} ({named})"


def _summary(result: Comparison) -> str:
    only = f"only in A: {_only(result.only_a)}; only in B: {_only(result.only_b)}"
    if not result.compared:
        return f"[red]nothing compared[/]: A and B hold no cell in common; {only}"
    big = result.largest
    largest = f"largest |B − A| {abs(big['difference']):.3g}"
    if result.agrees:
        return (f"[green]{result.compared} cells compared, every one within "
                f"{result.tol:g}[/] ({largest}); {only}")
    return (f"[red]{result.differences.height} of {result.compared} cells compared beyond "
            f"{result.tol:g}[/], {largest} ({escape(big['model'])} {escape(big['task'])} "
            f"{big['regime']} {big['metric']}); {only}")


def _presets(args, sides: list[Side], stores: _Stores, protocol_hash: str) -> int:
    """`--presets`: each variant of the store's models against the submissions; exit 0 when
    every submission model the store holds is reproduced by one of its variants."""
    if {s.kind for s in sides} != {"store", "submissions"}:
        raise GenebError("--presets compares a store with submission files: give one of each "
                         "as A and B")
    store = next(s for s in sides if s.kind == "store")
    subs = _submission_cells(next(s for s in sides if s.kind == "submissions"))
    cells = variant_cells(stores.snap(resolve_store(store.path)), protocol_hash, store.source)
    if mixed := mixed_sources(cells.drop("model").rename({"entry": "model"})):
        model, sources = next(iter(mixed.items()))
        raise GenebError(f"{store.which} {store.operand}: holds {model} from {len(sources)} "
                         f"sources ({', '.join(sources)}); name one, e.g. "
                         f"{store.path}:{sources[0]}")
    candidates = preset_candidates(cells, subs, args.tol)
    if not candidates:
        raise GenebError(f"{store.which} {store.operand}: holds none of the submissions' models "
                         f"({', '.join(sorted(set(subs['model'])))})")
    found = {c.model: [] for c in candidates}
    for c in candidates:
        if not c.why_not:
            found[c.model].append(c.preset)
    if args.json:
        emit_json({"tol": args.tol, "protocol": args.protocol, "candidates": [
            {"model": c.model, "entry": c.entry, "preset": c.preset,
             "compared": c.comparison.compared, "beyond": c.comparison.differences.height,
             "largest": None if c.comparison.largest is None else
             abs(c.comparison.largest["difference"]), "reproduces": not c.why_not,
             "why_not": c.why_not or None} for c in candidates],
            "reproduced_by": found})
    else:
        table_console().print(_presets_table(candidates, args.tol))
        for model, presets in found.items():
            console.print(f"{escape(model)}: " + (
                f"[green]reproduced by {', '.join(presets)}[/]" if presets else
                "[red]reproduced by none of the presets the store holds[/] (fill --preset "
                "reference --batch-size N computes another)"))
    return 0 if all(found.values()) else 1


def _presets_table(candidates: list[Candidate], tol: float) -> FitTable:
    table = FitTable(f"each variant of the store against the submission (tolerance {tol:g})",
                     [Col("model", key=True, style="bold"), Col("preset", key=True),
                      Col("cells", justify="right"), Col("beyond", justify="right"),
                      Col("largest |B − A|", justify="right"), Col("reproduces")])
    for c in candidates:
        big = c.comparison.largest
        table.add_row(escape(c.model), escape(c.preset), str(c.comparison.compared),
                      str(c.comparison.differences.height),
                      "" if big is None else f"{abs(big['difference']):.3g}",
                      "yes" if not c.why_not else f"no: {escape(c.why_not)}")
    return table
