"""What `fill --storage-precision` changes: the bytes of the embeddings on disk and the primary
metric of every cell, float16 and bfloat16 against float32.

Each suite (geneb-mini: classification, MCC; geneb-kinds: regression, Pearson r, and variant
tasks, AUROC) is filled with the weight-free k-mer baselines (`--models`, default kmer-3 kmer-4
kmer-6: spectra summing to 1, so small values where half precision's relative step matters),
every regime, once per storage precision, each into its own store. Printed per suite and
storage precision: the embeddings' bytes and their ratio to float32's, the cells, how many
differ, the largest and the mean |difference| of the primary metric (seed means of the rows,
every cell of every kind). Weight-free baselines only: the models with weights need their
checkpoints, which this machine may not have.

    .venv/bin/python bench/storage_precision.py       # about three minutes on 2 cores
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STORAGES = ("float32", "float16", "bfloat16")
SUITES = ("geneb-mini", "geneb-kinds")


def primary(store: Path) -> dict[tuple, float]:
    """(model, task, regime, protocol) -> the seed mean of the cell's primary metric
    (`store.vocab.kinds.PRIMARY`: MCC for a classification row, kind NULL)."""
    from store.db import query
    from store.paths import StorePaths
    from store.vocab.kinds import CLASSIFICATION, PRIMARY

    metric = ("CASE " + " ".join(f"WHEN kind = '{k.value}' THEN {m}" for k, m in PRIMARY.items()
                                 if k != CLASSIFICATION)
              + f" ELSE {PRIMARY[CLASSIFICATION]} END")
    rows = query(StorePaths(store),
                 f"SELECT model, task, regime, protocol_hash, avg({metric}) AS v "
                 "FROM results_all GROUP BY ALL")
    return {(r["model"], r["task"], r["regime"], r["protocol_hash"]): r["v"]
            for r in rows.iter_rows(named=True)}


def fill(store: Path, suite: str, models: list[str], storage: str) -> None:
    from engine.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["fill", "--store", str(store), "--suite", suite, "--models", *models,
                     "--storage-precision", storage, "--jobs", "1"])
    if code != 0:
        raise SystemExit(f"fill {suite} at {storage} failed ({code})")


def main() -> None:
    from store.sizes import tree_bytes

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["kmer-3", "kmer-4", "kmer-6"])
    p.add_argument("--suites", nargs="+", default=list(SUITES))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="geneb-storage-") as tmp:
        for suite in args.suites:
            found = {}
            for storage in STORAGES:
                store = Path(tmp) / f"{suite}-{storage}"
                fill(store, suite, args.models, storage)
                found[storage] = (tree_bytes(store / "embeddings.zarr"), primary(store))
            base_bytes, base = found["float32"]
            print(f"{suite} ({', '.join(args.models)}): float32 embeddings "
                  f"{base_bytes / 1e6:,.1f} MB, {len(base)} cells")
            for storage in STORAGES[1:]:
                size, got = found[storage]
                deltas = [abs(got[k] - v) for k, v in base.items()
                          if v is not None and got.get(k) is not None]
                differ = sum(d > 0 for d in deltas)
                print(f"  {storage}: {size / 1e6:,.1f} MB ({size / base_bytes:.3f} of float32); "
                      f"{len(deltas)} cells, {differ} differ; |delta| max "
                      f"{max(deltas):.4f}, mean {sum(deltas) / len(deltas):.5f}")


if __name__ == "__main__":
    main()
