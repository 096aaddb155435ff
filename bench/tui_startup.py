"""Start-up time of geneb-tui on the official 40-model store, against `python -c "import textual"`.

Prints, from the same runs (medians; each figure counts the whole process start, interpreter
included): the time of `python -c "import textual"`, and from launching `geneb-tui` (headless,
100x30) to
- its first frame (Textual's Ready: the header and "reading the store…"),
- the first frame with the main table filled (the 40 rows painted, before any rank interval),
- the frame with the rank-interval and tie-group cells (computed in a worker after the table is
  shown; printed separately because it must not delay the table),
each with its ratio to the `import textual` time.

    .venv/bin/python bench/tui_startup.py [--store PATH] [--runs 5]

Without --store, a temporary store is built by importing the 40 official submissions shipped
with the package (`store.official_data`, the GENEB reference data; no network).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each mark is printed once, from the callback Textual runs after the frame that shows it.
CHILD = r"""
import asyncio, sys, time
from geneb_tui.app import GenebApp
from geneb_tui.components.results_table import ResultsTable
from store.paths import resolve_store

marks = {}

def mark(name, rows=0):
    if name not in marks:
        marks[name] = rows
        print(f"{name} {time.time():.6f} rows={rows}", flush=True)

show, show_intervals = ResultsTable.show, ResultsTable.show_intervals

def timed_show(self, view):
    show(self, view)
    if view.rows:
        self.call_after_refresh(mark, "TABLE", len(view.rows))

def timed_intervals(self, view):
    show_intervals(self, view)
    if view is self.view:
        self.call_after_refresh(mark, "INTERVALS", len(view.rows))

ResultsTable.show, ResultsTable.show_intervals = timed_show, timed_intervals

class Timed(GenebApp):
    def on_ready(self) -> None:   # Textual's Ready: the first frame has been displayed
        mark("FIRST_PAINT")

async def main():
    app = Timed(resolve_store(sys.argv[1]))
    async with app.run_test(size=(100, 30)) as pilot:
        deadline = time.time() + 120
        while "INTERVALS" not in marks and not app.internal_errors and time.time() < deadline:
            await pilot.pause(0.005)
        if app.internal_errors:
            print("ERROR", app.internal_errors, flush=True)

asyncio.run(main())
"""

MARKS = ("FIRST_PAINT", "TABLE", "INTERVALS")


def timed(cmd: list[str]) -> float:
    start = time.time()
    subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    return time.time() - start


def startup(store: Path) -> dict[str, float]:
    """Seconds from the launch to each of MARKS."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, str(store)], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.split()}
    missing = [m for m in MARKS if m not in lines]
    if missing:
        raise SystemExit(f"geneb-tui never reached {', '.join(missing)}:\n{out}")
    rows = int(lines["TABLE"][2].removeprefix("rows="))
    if rows != 40:
        raise SystemExit(f"expected the 40 official models, the table shows {rows}")
    return {m: float(lines[m][1]) - start for m in MARKS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="a store holding the official results")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tmp = None
    store = args.store
    if store is None:
        from store.official_data import write_official_files
        from store.paths import resolve_store
        from store.submission import import_files

        tmp = tempfile.TemporaryDirectory(prefix="geneb-bench-")
        store = Path(tmp.name) / "store"
        files = write_official_files(Path(tmp.name) / "official", provenance="official")
        import_files(resolve_store(store), files)
    timed([sys.executable, "-c", "import textual"])   # warm the file cache for both
    startup(store)
    imports, runs = [], []
    for _ in range(args.runs):
        imports.append(timed([sys.executable, "-c", "import textual"]))
        runs.append(startup(store))
    t_import = statistics.median(imports)
    t = {m: statistics.median(r[m] for r in runs) for m in MARKS}
    print(f"store: {store} (40 official models); medians of {args.runs} runs, "
          "process start included")
    baseline = "python -c 'import textual'"
    print(f"{baseline:<48}: {t_import * 1000:6.0f} ms")
    for m, what in (("FIRST_PAINT", "first frame (reading the store)"),
                    ("TABLE", "first frame with the table filled"),
                    ("INTERVALS", "rank intervals shown (after the table)")):
        print(f"geneb-tui {what:<38}: {t[m] * 1000:6.0f} ms   ratio {t[m] / t_import:4.1f}x")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
