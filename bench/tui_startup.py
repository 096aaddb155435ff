"""Start-up and interaction times of geneb-tui on the official 40-model store.

Start-up, against `python -c "import textual"` (medians; each figure counts the whole process
start, interpreter included, with bytecode cached as after a first run), from launching
`geneb-tui` (headless, 100x30) to
- its first frame (Textual's Ready: the header and "reading the store…"),
- the frame with the main table filled from the first-view cache (warm: a run before filled
  the cache; `geneb_tui.core.first_view`),
- the frame with the main table filled without the cache (cold: a fresh empty cache folder
  each run; the store worker imports polars/duckdb/deltalake and reads the snapshot),
- the frame with the main table filled after a `geneb-engine fill` from the command line (one
  geneb-mini cell of kmer-3 per run, so each run starts on a new results version; the fill
  refreshes the start-up view the dashboard had cached, `geneb_tui.core.first_view.refresh`;
  only on the store the bench builds, never on a --store given),
- the frame with the rank-interval and tie-group cells (computed in a worker after the table is
  shown; printed for both runs because they must not delay the table),
each with its ratio to the `import textual` time.

Interactions, after the snapshot and the rank intervals have loaded: from the key press to the
frame that shows its result (the main table rebuilt; a screen on top; also the frame with its
content: the comparison views' first tab, the Significance view's diagram and default pair, the
task view's rows; a comparison view also after a regime change), the median of a few presses
(a screen's first opening apart from the later ones), each against the 100 ms budget:
`<label>: <ms> ms (budget 100 ms): <ratio>x`.

    .venv/bin/python bench/tui_startup.py [--store PATH] [--runs 5] [--pause 1.5]

Without --store, a temporary store is built by importing the 40 official submissions shipped
with the package (`store.official.data`, the GENEB reference data; no network). Every run uses
a temporary GENEB_CACHE_DIR: the bench never reads or writes the user's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import mini

ROOT = Path(__file__).resolve().parents[1]
BUDGET_MS = 100.0

# Each mark is printed once, from the callback Textual runs after the frame that shows it.
STARTUP = r"""
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
        if self.app.snapshot is not None:
            self.call_after_refresh(mark, "LIVE", len(view.rows))

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
        await app.workers.wait_for_complete()   # the first-view cache written
        if app.internal_errors:
            print("ERROR", app.internal_errors, flush=True)

asyncio.run(main())
"""

# Prints one JSON object: label -> [milliseconds of each press].
INTERACT = r"""
import asyncio, json, sys, time
from textual import events
from textual.widgets import Select
from geneb_tui.app import GenebApp
from geneb_tui.components.compare_screen import CompareScreen
from geneb_tui.components.export_screen import ExportScreen
from geneb_tui.components.filter_screen import FilterScreen
from geneb_tui.components.help_screen import HelpScreen
from geneb_tui.components.missing_screen import MissingScreen
from geneb_tui.components.results_table import ResultsTable
from geneb_tui.components.significance_screen import SignificanceScreen
from geneb_tui.components.task_screen import TaskScreen
from store.paths import resolve_store

PRESSES = int(sys.argv[2])
PAUSE = float(sys.argv[3]) or None

async def settled(pilot):
    app = pilot.app
    for i in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause(PAUSE if i == 0 else None)   # timers of the app's idle work fire

async def frame(app):
    done = asyncio.get_running_loop().create_future()
    app.screen.call_after_refresh(lambda: done.done() or done.set_result(time.perf_counter()))
    return await done

async def until(app, cond, limit=60.0):
    end = time.perf_counter() + limit
    while not cond():
        if time.perf_counter() > end:
            raise SystemExit("an interaction never showed its result")
        await asyncio.sleep(0.0005)

CHARS = {"question_mark": "?", "slash": "/", "enter": "\r", "escape": "\x1b"}

def press(app, key):
    # as the driver delivers a key (the pilot's press also waits for the process to go idle,
    # which a worker computing rank intervals delays by up to a second)
    app.post_message(events.Key(key, CHARS.get(key, key if len(key) == 1 else None)))

async def timed(pilot, keys, cond):
    start = time.perf_counter()
    for k in keys:
        press(pilot.app, k)
    await until(pilot.app, cond)
    return (await frame(pilot.app) - start) * 1000

async def main():
    app = GenebApp(resolve_store(sys.argv[1]))
    out = {}
    def add(label, ms):
        out.setdefault(label, []).append(ms)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(app, lambda: app.view is not None and app.view.intervals is not None)
        await settled(pilot)
        table = app.query_one(ResultsTable)

        async def table_key(label, keys, after=()):
            for _ in range(PRESSES):
                old = table.view
                add(f"{label} -> table repainted",
                    await timed(pilot, keys, lambda: table.view is not old))
                for k in after:
                    await pilot.press(k)
                await settled(pilot)

        await table_key("regime (r)", ["r"])
        await table_key("metric (m)", ["m"])
        await table_key("category (c)", ["c"])
        while app.filters.category is not None:
            await pilot.press("c")
            await settled(pilot)
        await table_key("sort (s)", ["s"])
        await table_key("rank scope (n)", ["n"])
        await pilot.press("slash")
        await settled(pilot)
        for i in range(PRESSES):
            old, letter = table.view, "nte"[i % 3]
            add("filter: a search letter typed -> table repainted",
                await timed(pilot, [letter], lambda: table.view is not old))
            await pilot.press("backspace")
            await settled(pilot)
        await pilot.press("escape")
        await settled(pilot)
        # a filter set in the filter dialog (architecture: the first choice, then any), applied
        families = app.snapshot.filter_choices(app.filters.suite).architecture_families
        for i in range(PRESSES):
            await pilot.press("f")
            await settled(pilot)
            app.screen.query_one("#architecture_family").value = (
                families[0] if i % 2 == 0 else Select.NULL)
            await settled(pilot)
            old = table.view
            add("filter dialog: Ctrl+S applies a filter -> table repainted",
                await timed(pilot, ["ctrl+s"], lambda: table.view is not old))
            await settled(pilot)
        await pilot.press("x")   # the filters cleared for the screens below
        await settled(pilot)

        async def screen_key(label, keys, cls, close, filled=None):
            for i in range(PRESSES):
                # the first opening apart: the app keeps some screens installed (the filter
                # dialog, the comparison and Significance views), so later ones skip composing
                when = "first " if i == 0 else "again "
                start = time.perf_counter()
                for k in keys:
                    press(app, k)
                await until(app, lambda: isinstance(app.screen, cls) and app.screen.is_mounted)
                add(f"open {label} {when}-> screen painted", (await frame(app) - start) * 1000)
                if filled is not None:
                    await until(app, lambda: filled(app.screen))
                    add(f"{label} {when}-> its content computed and painted",
                        (await frame(app) - start) * 1000)
                await settled(pilot)
                for k in close:
                    await pilot.press(k)
                await settled(pilot)

        def note_done(name):
            def done(screen):
                return "computing" not in str(screen.query_one(f"#{name}-note").render())
            return done

        await screen_key("filters (f)", ["f"], FilterScreen, ["escape"])
        await screen_key("help (?)", ["question_mark"], HelpScreen, ["escape"])
        await screen_key("export (e)", ["e"], ExportScreen, ["escape"])
        await screen_key("missing (g)", ["g"], MissingScreen, ["escape"])
        await screen_key("compare views (v)", ["v"], CompareScreen, ["escape"],
                         note_done(CompareScreen(app.snapshot, app.filters).initial))
        await screen_key("significance (d)", ["d"], SignificanceScreen, ["escape"],
                         lambda s: s.sig is not None and s.shown_pair is not None)
        # a view opened after the selection changed while it was closed (each press: a regime)
        for _ in range(PRESSES):
            await pilot.press("r")
            await settled(pilot)
            start = time.perf_counter()
            press(app, "v")
            await until(app, lambda: isinstance(app.screen, CompareScreen))
            add("open compare views (v) after a regime change -> screen painted",
                (await frame(app) - start) * 1000)
            await until(app, lambda: note_done(CompareScreen(app.snapshot, app.filters).initial)(
                app.screen))
            add("compare views (v) after a regime change -> its content computed and painted",
                (await frame(app) - start) * 1000)
            await settled(pilot)
            await pilot.press("escape")
            await settled(pilot)
        # the task view: Enter on a row of the comparison views' Tasks tab
        await pilot.press("v")
        await settled(pilot)
        tabs = app.screen.query_one("#compare-tabs")
        tabs.active = "tasks"
        await settled(pilot)
        app.screen.query_one("#tasks-table").focus()
        await settled(pilot)
        await screen_key("task view (Enter in Tasks)", ["enter"], TaskScreen, ["escape"],
                         lambda s: "computing" not in str(s.query_one("#task-note").render()))
    if app.internal_errors:
        raise SystemExit(f"internal errors: {app.internal_errors}")
    print(json.dumps(out))

asyncio.run(main())
"""

MARKS = ("FIRST_PAINT", "TABLE", "LIVE", "INTERVALS")


def timed(cmd: list[str]) -> float:
    start = time.time()
    subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    return time.time() - start


def child(code: str, args: list[str], cache: Path) -> str:
    env = {**os.environ, "GENEB_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=ROOT, env=env)
    if out.returncode:
        raise SystemExit(f"the bench's child failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


# One geneb-mini cell per run, filled from the command line before that run's first start.
CLI_CELLS = [(task.task_id, regime) for regime in ("full", "10shot", "1shot")
             for task in mini.TASKS]


def cli_fill(store: Path, cache: Path, task: str, regime: str) -> None:
    """`geneb-engine fill` of one kmer-3 cell (a new results version): the engine refreshes
    the start-up view the dashboard cached in `cache` (`geneb_tui.core.first_view.refresh`)."""
    out = subprocess.run([sys.executable, "-m", "engine.cli", "fill",
                          "--store", str(store), "--suite", "geneb-mini", "--models", "kmer-3",
                          "--tasks", task, "--regimes", regime], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "GENEB_CACHE_DIR": str(cache)})
    if out.returncode or out.stderr.count("warning"):
        raise SystemExit(f"geneb-engine fill failed:\n{out.stdout}\n{out.stderr}")


def startup(store: Path, cache: Path) -> dict[str, float]:
    """Seconds from the launch to each of MARKS."""
    start = time.time()
    out = child(STARTUP, [str(store)], cache)
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
    ap.add_argument("--presses", type=int, default=3, help="presses per interaction")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds the user pauses after each interaction has settled (default "
                         "0: back to back); 1.5 lets the app's idle work run between them, "
                         "garbage collection (geneb_tui.core.idle_gc) and the views' "
                         "precomputation, as while a person reads the screen")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="geneb-bench-")
    work = Path(tmp.name)
    # Every process as a user's runs: bytecode compiled once and cached (in the bench's folder).
    # Under PYTHONDONTWRITEBYTECODE geneb's own modules, which an editable install has no
    # bytecode for, would be compiled again at every start (~40 ms), and textual's would not.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(work / "bytecode")
    store, own = args.store, args.store is None   # a store given is never written
    if own:
        from store.official.data import write_official_files
        from store.official.submission import import_files
        from store.paths import resolve_store

        store = work / "store"
        files = write_official_files(work / "official", provenance="official")
        import_files(resolve_store(store), files)
    if own and args.runs > len(CLI_CELLS):
        raise SystemExit(f"--runs: at most {len(CLI_CELLS)} (one geneb-mini cell each)")
    warm_cache = work / "cache-warm"
    timed([sys.executable, "-c", "import textual"])   # the file and bytecode caches warmed
    startup(store, warm_cache)                         # fills the warm cache
    startup(store, work / "cache-cold")                # the store stack's bytecode
    imports, warm, cold, after_fill = [], [], [], []
    for i in range(args.runs):
        imports.append(timed([sys.executable, "-c", "import textual"]))
        if own:   # the engine refreshes the start-up view the dashboard cached
            cli_fill(store, warm_cache, *CLI_CELLS[i])
            after_fill.append(startup(store, warm_cache))
        warm.append(startup(store, warm_cache))
        cold.append(startup(store, work / f"cache-cold-{i}"))
    t_import = statistics.median(imports)

    def med(runs, m):
        return statistics.median(r[m] for r in runs)

    print(f"store: {store} (40 official models); medians of {args.runs} runs, "
          "process start included")
    baseline = "python -c 'import textual'"
    print(f"{baseline:<52}: {t_import * 1000:6.0f} ms")
    for what, t in (("first frame (reading the store)", med(cold, "FIRST_PAINT")),
                    ("table filled from the cache (warm)", med(warm, "TABLE")),
                    ("table filled without the cache (cold)", med(cold, "TABLE")),
                    *([("table filled after a CLI fill (refreshed)", med(after_fill,
                                                                         "TABLE"))]
                      if own else []),
                    ("live table replacing the cached one (warm)", med(warm, "LIVE")),
                    ("rank intervals shown (warm)", med(warm, "INTERVALS")),
                    ("rank intervals shown (cold)", med(cold, "INTERVALS"))):
        print(f"geneb-tui {what:<42}: {t * 1000:6.0f} ms   ratio {t / t_import:4.1f}x")
    times = json.loads(child(INTERACT, [str(store), str(args.presses), str(args.pause)],
                             warm_cache))
    print(f"interactions after the snapshot loaded (median of {args.presses} presses, "
          f"{args.pause:g} s pause after each), each from the key press to the frame that "
          "shows what the label says:")
    for label, ms in times.items():
        m = statistics.median(ms)
        print(f"{label}: {m:.0f} ms (budget {BUDGET_MS:.0f} ms): {m / BUDGET_MS:.2f}x")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
