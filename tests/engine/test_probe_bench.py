"""bench/probe.py runs end to end and prints its ratio lines (no assertions on wall time)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "probe.py"
RATIO = re.compile(r": \d+\.\d+ s vs \d+\.\d+ s: \d+\.\d+x$")


def test_quick_bench_prints_every_ratio_line() -> None:
    out = subprocess.run([sys.executable, str(BENCH), "--quick", "--sweep", "--classes", "2",
                          "--device", "cpu"], capture_output=True, text=True, check=True).stdout
    ratios = [line for line in out.splitlines() if RATIO.search(line)]
    assert [RATIO.sub("", line) for line in ratios] == [
        "2 classes: geneb-v1 path vs official loop",
        "2 classes: batched solver (cpu) vs scikit-learn converged",
        "2 classes: batched C sweep (cpu) vs scikit-learn converged sweep (5 C, 55 fits)",
    ]
    assert "geneb-v1 path metrics identical to the official loop: True" in out
    assert re.search(r"^2 classes \(cpu\): five-value C sweep, full regime: batched vs five "
                     r"scikit-learn fits: \d+\.\dx$", out, re.M)
