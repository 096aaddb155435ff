"""How fast does `geneb-engine recommend` answer? The three questions of the guide page
"Choosing a model" on the 40 official models.

Imports the official submissions into a temporary store (`store.official.submission.
import_files` on `store.official.data.official_tree()`), then times each question the way the
command asks it: a fresh `store.db.Snapshot` (the results read), the scope's tasks, and
`store.analyses.recommend.recommend` with 10,000 resamples (the regime and its neighbouring
ones). Prints the seconds of each (the best of `--runs`). Goal: under 2 s each.

    .venv/bin/python bench/recommend.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def questions():
    """(name, task filter, regime, constraints) of the guide's three questions."""
    from store.analyses.recommend import Constraints

    return [
        ("plant tasks, 10 labels per class, 24 GB at bfloat16",
         lambda t: t.kingdom == "plants", "10shot", Constraints(memory_gb=24, dtype="bfloat16")),
        ("human enhancers, full data, at most 100M parameters",
         lambda t: t.category == "Enhancers" and t.organism == "Homo sapiens", "full",
         Constraints(max_params=100_000_000)),
        ("splice sites, 1 label per class, runs here",
         lambda t: t.category == "Splice Sites", "1shot", Constraints(runnable_here=True)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from store.analyses.recommend import Question, recommend
    from store.catalog import geneb_v1_tasks
    from store.db import Snapshot
    from store.official.data import official_tree
    from store.official.submission import import_files
    from store.paths import resolve_store

    tree = official_tree()
    with tempfile.TemporaryDirectory() as tmp:
        paths = resolve_store(Path(tmp) / "store")
        import_files(paths, [tree / "submissions", tree / "leaderboard.json"])
        for name, keep, regime, constraints in questions():
            tasks = tuple(t for t in geneb_v1_tasks() if keep(t))
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                snap = Snapshot(paths)
                answer = recommend(snap, Question(tasks, regime, constraints=constraints,
                                                  whole_suite=False))
                snap.close()
                times.append(time.perf_counter() - start)
            print(f"{min(times):.2f} s  {name}: {answer.message}")


if __name__ == "__main__":
    main()
