"""bench/gpu.sh's scripts run on the lent GPU machine as it is: Python with torch, transformers,
numpy, scikit-learn, pandas and pyarrow, but no polars, duckdb, deltalake, zarr or textual (see
DESIGN.md, "The lent GPU machine"). A device lease is minutes long and drawn by chance, so an
ImportError there would waste it: each script gpu.sh runs is run here, quick and on the CPU,
in a child whose imports of those packages fail."""

from __future__ import annotations

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
    "probe.py": ["--quick", "--skip-official", "--classes", "2", "--device", "cpu"],
    "array_api.py": ["--quick", "--device", "cpu"],
    "embed.py": ["--quick", "-n", "24", "--repeat", "1", "--device", "cpu"],
    "mfu.py": ["--layers", "1", "--width", "64", "--n", "16"],
}
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
def test_the_script_runs_without_the_packages_the_gpu_machine_lacks(script: str) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, ",".join(ABSENT),
                          str(ROOT / "bench" / script), *QUICK[script]],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "not on the GPU machine" not in out.stderr
    assert re.search(r"\d\.\d+x", out.stdout), out.stdout   # it printed its ratios
