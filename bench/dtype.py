"""What `fill --dtype` changes in the results: MCC with 16-bit weights against float32, on CPU.

Fixtures: the tiny checkpoints of tests/engine/tiny_models.py (BERT, GPT-2, Llama; random
weights, saved by `save_pretrained`) on a generated suite of three tasks (2, 3 and 4 classes,
`--train` / `--test` sequences of `--length` bp whose base composition differs by class:
tests/engine/conftest.py:write_task). Each model is filled with geneb-v1 in every regime once
per `--dtype` (float32, bfloat16, float16), each into its own store; printed per dtype against
float32: the cells, how many differ, the largest and mean |MCC difference| (the seed means of
the result rows), and the largest relative difference of the embeddings themselves.

    .venv/bin/python bench/dtype.py          # about two and a half minutes on 2 cores
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

KINDS = ("bert", "gpt2", "llama")
DTYPES = ("float32", "bfloat16", "float16")


def mccs(store: Path) -> dict[tuple, float]:
    """(model, task, regime) -> the MCC averaged over seeds."""
    from store.db import query
    from store.paths import StorePaths

    rows = query(StorePaths(store), "SELECT model, task, regime, avg(mcc) AS mcc FROM results "
                                    "GROUP BY model, task, regime")
    return {(r["model"], r["task"], r["regime"]): r["mcc"] for r in rows.iter_rows(named=True)}


def embeddings(store: Path, dtype: str) -> dict[tuple, np.ndarray]:
    """(model, task) -> its train split's stored embeddings at `dtype` (kept apart by their
    precision: `store.vocab.variant.split_suffix`)."""
    import zarr

    from store.vocab.variant import split_suffix

    root = zarr.open_group(str(store / "embeddings.zarr"), mode="r")
    out = {}
    for model in root.group_keys():
        for task in root[model].group_keys():
            split = root[model][task][f"train{split_suffix(dtype)}"]
            out[model, task] = np.asarray(split["embeddings"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=300, help="training sequences per task")
    ap.add_argument("--test", type=int, default=150, help="test sequences per task")
    ap.add_argument("--length", type=int, default=120, help="bp per sequence")
    args = ap.parse_args()

    from transformers.utils import logging as hf_logging

    from engine.cli import main as engine
    from tests.engine.conftest import write_task
    from tests.engine.tiny_models import build

    hf_logging.disable_progress_bar()

    with tempfile.TemporaryDirectory(prefix="geneb-dtype-") as name:
        tmp = Path(name)
        suite = tmp / "suite"
        suite.mkdir()
        for seed, classes in enumerate((2, 3, 4)):
            write_task(suite / f"c{classes}_task.csv", args.train, args.test, classes, seed,
                       length=args.length)
        models = [str(build(kind, tmp / f"tiny-{kind}", max_len=256)) for kind in KINDS]
        found, rows = {}, {}
        for dtype in DTYPES:
            store = tmp / f"store-{dtype}"
            with contextlib.redirect_stdout(io.StringIO()):
                rc = engine(["fill", "--store", str(store), "--suite", str(suite), "--models",
                             *models, "--device", "cpu", "--dtype", dtype])
            if rc != 0:
                raise SystemExit(f"fill --dtype {dtype} failed ({rc})")
            found[dtype], rows[dtype] = mccs(store), embeddings(store, dtype)
    base, base_rows = found["float32"], rows["float32"]
    print(f"geneb-v1, every regime; {len(KINDS)} tiny models ({', '.join(KINDS)}) x 3 tasks "
          f"(2, 3, 4 classes; {args.train} train / {args.test} test sequences of {args.length} "
          f"bp); CPU; MCC = the mean over seeds; against --dtype float32 "
          f"(mean |MCC| there {np.mean([abs(v) for v in base.values()]):.3f})")
    print(f"{'dtype':9} {'cells':>5} {'differ':>6} {'max |dMCC|':>10} {'mean |dMCC|':>11} "
          f"{'max rel. embedding diff':>24}")
    for dtype in DTYPES[1:]:
        diff = np.array([abs(found[dtype][k] - v) for k, v in base.items()])
        rel = max(float(np.abs(rows[dtype][k] - v).max() / np.abs(v).max())
                  for k, v in base_rows.items())
        print(f"{dtype:9} {len(diff):5} {int((diff > 0).sum()):6} {diff.max():10.4f} "
              f"{diff.mean():11.4f} {rel:24.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
