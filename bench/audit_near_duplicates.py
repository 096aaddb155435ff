"""The audit's near-duplicate search (`store.audit.near`) on a generated suite: its time against
the goal of 10 minutes for 100 tasks x 30,000 sequences of 400 bp on two cores (issue 35).

Each task: random sequences (uniform A, C, G, T), 80% train and 20% test; 1% of the test rows
are planted near duplicates of a train row, half with one substitution (k-mer Jaccard about
0.95) and half with two (about 0.90; each planted pair's exact Jaccard is computed, and only
those at >= 0.9 count as planted). Generating the suite is not timed; the search over each task
(sketches, LSH candidates, exact verification: `near_duplicates(train, test)`) is. Prints one
line per task, then

    near duplicates: T tasks x N sequences x L bp in S s (P s per task; C s of CPU); projected
    for 100 tasks of this size: X s = R of the 10-minute goal (Y s of CPU = Q); test rows
    found: F (G planted)

(the CPU seconds say what the wall time would be on cores nobody else uses: the search runs on
one core)

    .venv/bin/python bench/audit_near_duplicates.py                  # the full size
    .venv/bin/python bench/audit_near_duplicates.py --tasks 10       # a tenth, projected
    .venv/bin/python bench/audit_near_duplicates.py --quick          # smoke test
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from store.audit.near import THRESHOLD, jaccard, kmer_set, near_duplicates  # noqa: E402

GOAL_S = 600.0          # 10 minutes for the full suite
FULL_TASKS = 100
PLANTED_SHARE = 0.01
_BASES = np.frombuffer(b"ACGT", dtype=np.uint8)


def random_sequences(rng: np.random.Generator, n: int, length: int) -> list[str]:
    """`n` random sequences of `length` letters (vectorised: one byte array per task)."""
    raw = _BASES[rng.integers(0, 4, size=(n, length))].tobytes()
    return [raw[i * length:(i + 1) * length].decode("ascii") for i in range(n)]


def substituted(seq: str, positions: np.ndarray) -> str:
    out = bytearray(seq, "ascii")
    for p in positions.tolist():
        out[p] = ord("A") if out[p] != ord("A") else ord("C")
    return out.decode("ascii")


def generated_task(rng: np.random.Generator, n: int, length: int
                   ) -> tuple[list[str], list[str], set[int]]:
    """(train, test, the test rows planted at Jaccard >= THRESHOLD)."""
    seqs = random_sequences(rng, n, length)
    n_train = int(n * 0.8)
    train, test = seqs[:n_train], seqs[n_train:]
    planted = set()
    n_planted = max(1, int(len(test) * PLANTED_SHARE))
    rows = rng.choice(len(test), n_planted, replace=False)
    sources = rng.choice(n_train, n_planted, replace=False)
    for i, (row, source) in enumerate(zip(rows.tolist(), sources.tolist(), strict=True)):
        k = 1 + i % 2
        positions = np.linspace(length // 4, 3 * length // 4, k).astype(int)
        test[row] = substituted(train[source], positions)
        if jaccard(kmer_set(test[row]), kmer_set(train[source])) >= THRESHOLD:
            planted.add(row)
    return train, test, planted


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, default=FULL_TASKS)
    p.add_argument("--sequences", type=int, default=30_000, help="per task")
    p.add_argument("--length", type=int, default=400)
    p.add_argument("--quick", action="store_true", help="2 tasks x 2,000 sequences")
    p.add_argument("--seed", type=int, default=35)
    args = p.parse_args(argv)
    if args.quick:
        args.tasks, args.sequences = 2, 2_000
    rng = np.random.default_rng(args.seed)
    total, cpu, found, planted = 0.0, 0.0, 0, 0
    for t in range(args.tasks):
        train, test, plant = generated_task(rng, args.sequences, args.length)
        start, start_cpu = time.perf_counter(), time.process_time()
        result = near_duplicates(train, test)
        seconds = time.perf_counter() - start
        total += seconds
        cpu += time.process_time() - start_cpu
        hits = result.test_rows
        found += hits
        planted += len(plant)
        print(f"task {t + 1}: {seconds:.2f} s, {hits} test rows with a near duplicate "
              f"({len(plant)} planted)", flush=True)
    per_task = total / args.tasks
    projected, projected_cpu = per_task * FULL_TASKS, cpu / args.tasks * FULL_TASKS
    print(f"near duplicates: {args.tasks} tasks x {args.sequences:,} sequences x {args.length} "
          f"bp in {total:.1f} s ({per_task:.2f} s per task; {cpu:.1f} s of CPU); projected for "
          f"{FULL_TASKS} tasks of this size: {projected:.0f} s = {projected / GOAL_S:.2f} of the "
          f"10-minute goal ({projected_cpu:.0f} s of CPU = {projected_cpu / GOAL_S:.2f}); test "
          f"rows found: {found} ({planted} planted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
