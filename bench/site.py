"""How fast is `geneb-engine site`, and how large is what it writes? The site of the 40
official models (imported into a temporary store from `store.official.data.official_tree()`),
built `--runs` times with the default resamples in a fresh process each (`geneb-engine site`,
start-up included), the median wall time and the folder's size printed. Goal: under 5 s and
under 5 MB.

    .venv/bin/python bench/site.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from store.official.data import official_tree
from store.official.submission import import_files
from store.paths import resolve_store

GEN = Path(sys.executable).with_name("geneb-engine")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = resolve_store(Path(tmp) / "store")
        tree = official_tree()
        import_files(paths, [tree / "submissions", tree / "leaderboard.json"])
        times = []
        for run in range(args.runs):
            out = Path(tmp) / f"site-{run}"
            start = time.perf_counter()
            subprocess.run([str(GEN), "site", "--store", str(paths.root), "-o", str(out)],
                           check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"geneb-engine site, 40 official models: {statistics.median(times):.2f} s median of "
          f"{args.runs} (goal 5 s), {size / 1e6:.2f} MB (goal 5 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
