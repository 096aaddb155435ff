"""Time to the first rendered frame of geneb-tui on the official 40-model store.

Prints, from the same run: the median wall time of `python -c "import textual"`, the median time
from launching `geneb-tui` (headless, 100x30) to its first frame with the table filled, and the
ratio. Each figure counts the whole process start, interpreter included.

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

CHILD = r"""
import asyncio, sys, time
from geneb_tui.app import GenebApp
from store.paths import resolve_store

class Timed(GenebApp):
    def on_ready(self) -> None:   # Textual's Ready: the first frame has been displayed
        print(f"FIRST_PAINT {time.time():.6f}", flush=True)

async def main():
    app = Timed(resolve_store(sys.argv[1]))
    async with app.run_test(size=(100, 30)) as pilot:
        while app.view is None:
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.pause()          # the table painted with its rows
        print(f"FIRST_FRAME {time.time():.6f} rows={len(app.view.rows)}", flush=True)

asyncio.run(main())
"""


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return time.time() - start, out


def first_frame(store: Path) -> tuple[float, float]:
    """(seconds to the first painted frame, seconds to the first frame with the table filled)"""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, str(store)], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    paint = next(ln for ln in out.splitlines() if ln.startswith("FIRST_PAINT"))
    line = next(ln for ln in out.splitlines() if ln.startswith("FIRST_FRAME"))
    rows = int(line.split("rows=")[1])
    if rows != 40:
        raise SystemExit(f"expected the 40 official models, the table shows {rows}")
    return float(paint.split()[1]) - start, float(line.split()[1]) - start


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
    first_frame(store)
    imports, paints, frames = [], [], []
    for _ in range(args.runs):
        imports.append(timed([sys.executable, "-c", "import textual"])[0])
        paint, frame = first_frame(store)
        paints.append(paint)
        frames.append(frame)
    t_import = statistics.median(imports)
    t_paint, t_frame = statistics.median(paints), statistics.median(frames)
    n = args.runs
    print(f"store: {store} (40 official models); medians of {n} runs, process start included")
    print(f"python -c 'import textual'             : {t_import * 1000:6.0f} ms")
    print(f"geneb-tui first frame (store loading)  : {t_paint * 1000:6.0f} ms   "
          f"ratio {t_paint / t_import:4.1f}x")
    print(f"geneb-tui first frame with the table   : {t_frame * 1000:6.0f} ms   "
          f"ratio {t_frame / t_import:4.1f}x")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
