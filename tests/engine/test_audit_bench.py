"""bench/audit_near_duplicates.py runs end to end, finds every planted near duplicate and prints
its figure line (no assertion on wall time)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "audit_near_duplicates.py"


def test_quick_bench_finds_the_planted_near_duplicates() -> None:
    out = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True,
                         text=True, check=True).stdout
    last = out.splitlines()[-1]
    m = re.fullmatch(r"near duplicates: 2 tasks x 2,000 sequences x 400 bp in [\d.]+ s \([\d.]+ "
                     r"s per task; [\d.]+ s of CPU\); projected for 100 tasks of this size: \d+ "
                     r"s = [\d.]+ of the 10-minute goal \(\d+ s of CPU = [\d.]+\); test rows "
                     r"found: (\d+) \((\d+) planted\)", last)
    assert m is not None, last
    assert m[1] == m[2] == "8"     # 1% of 400 test rows per task, all at Jaccard >= 0.9
