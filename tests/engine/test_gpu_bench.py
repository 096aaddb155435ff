"""bench/gpu.sh's scripts run on the lent GPU machine as it is: Python with torch, transformers,
numpy, scikit-learn, pandas and pyarrow, but no polars, duckdb, deltalake, zarr or textual (see
DESIGN.md, "The lent GPU machine"). A device lease is minutes long and drawn by chance, so an
ImportError there would waste it: each script gpu.sh runs is run here, quick and on the CPU,
in a child whose imports of those packages fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPU_SH = ROOT / "bench" / "gpu.sh"
# Not on the GPU machine's image (its package list: the device tool's KINDS.md).
ABSENT = ("polars", "duckdb", "deltalake", "zarr", "numcodecs", "textual", "textual_plotext",
          "plotext", "ray")
# The quick CPU run of each script gpu.sh runs (a script added there needs one here).
QUICK = {
    "mfu.py": ["--layers", "1", "--width", "64", "--n", "16", "--dtype", "bfloat16"],
    "probe.py": ["--quick", "--skip-official", "--classes", "2", "--device", "cpu"],
    "array_api.py": ["--quick", "--device", "cpu"],
    "gpu_suite.py": ["{tmp}", "--tasks", "1", "--sequences", "20", "--layers", "1",
                     "--width", "64"],
    "cluster.py": ["--throughput", "1e6", "--probe-seconds", "1", "--gpus", "1", "8"],
}
# What each prints that shows it measured: its ratios, the suite it wrote, the projection.
PRINTS = {"gpu_suite.py": r"1 tasks x 20 sequences", "cluster.py": r"\n +8 +\S+ +\S"}
CHILD = r"""
import runpy, sys
from tests.helpers import unimportable

unimportable(sys.argv[1].split(","), "not on the GPU machine")
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def gpu_scripts() -> list[str]:
    """The bench scripts gpu.sh runs, in its order."""
    return list(dict.fromkeys(re.findall(r'"\$PY" bench/(\w+\.py)', GPU_SH.read_text())))


def test_every_script_gpu_sh_runs_has_a_quick_run_here() -> None:
    assert gpu_scripts() == list(QUICK)


@pytest.mark.parametrize("script", list(QUICK))
def test_the_script_runs_without_the_packages_the_gpu_machine_lacks(script: str,
                                                                     tmp_path) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, ",".join(ABSENT),
                          str(ROOT / "bench" / script),
                          *(a.format(tmp=tmp_path) for a in QUICK[script])],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "not on the GPU machine" not in out.stderr
    assert re.search(PRINTS.get(script, r"\d\.\d+x"), out.stdout), out.stdout


@pytest.mark.parametrize("argv", [["--dry"], []])
def test_without_cuda_or_with_dry_it_prints_the_plan_and_exits_0(argv: list[str]) -> None:
    """`--dry`, or a machine without CUDA (this one: PYTHON is the project's CPU torch)."""
    out = subprocess.run(["bash", str(GPU_SH), *argv], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr
    assert "at most 8 minutes" in out.stdout
    for script in gpu_scripts():
        assert script in out.stdout, script                 # every step in the plan
    for command in ("fill --jobs auto", "status --perf"):
        assert command in out.stdout, command
    assert "nothing measured" in out.stdout or argv == ["--dry"]


def test_the_step_limits_fit_the_budget() -> None:
    """Every step of gpu.sh runs under `timeout`; the limits add up to at most 8 minutes."""
    text = GPU_SH.read_text()
    limits = [int(n) for n in re.findall(r"^\s*step (\d+) ", text, re.M)]
    assert len(limits) == 8 and sum(limits) <= 480, limits
    assert f"their\n# sum is {sum(limits)} s" in text
