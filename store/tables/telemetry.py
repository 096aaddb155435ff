"""The runs table, `<store>/runs`: how fast each embedded split was encoded, and on what.

One row per split a `fill` encoded (a split reused from the store adds none), written as one
commit per pair after its embeddings are complete, through `store.tables.results` (the same data
files, commits, compaction and vacuum as the results table). Telemetry, not results: a run
killed between the embeddings and this commit leaves the pair's row out, nothing else.

Per row: the device and how it computed (`dtype`: float32, bfloat16-autocast, ...); sequences
encoded, tokens (the tokenizer's count, truncation applied; NULL where an encoder counts none,
the k-mer baselines) and padded tokens (what the batches held); seconds of encoding (tokenizing
included, the store's writes too); the final batch size and padded-token budget after
out-of-memory halvings; the peak device memory (CUDA only); the model's parameters and, on
CUDA, the achieved TFLOP/s (2 x parameters x tokens/s, the forward pass) and the model FLOPs
utilisation against the device's peak (`mfu`, where the device's peak is known).

`perf_summary` is what `status --perf` and the dashboard show: per model, totals over its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import polars as pl
import pyarrow as pa

from store.paths import StorePaths
from store.tables.data_files import Table
from store.tables.results import append_rows, read_files, read_state
from store.vocab.sources import LOCAL

RUN_SCHEMA = pa.schema([
    ("model", pa.string()),
    ("task", pa.string()),
    ("split", pa.string()),
    ("data_hash", pa.string()),
    ("worker", pa.string()),            # "local", or a cluster node and its GPU
    ("device", pa.string()),            # "cpu" or the CUDA device's name
    ("dtype", pa.string()),
    ("sequences", pa.int64()),
    ("tokens", pa.int64()),
    ("padded_tokens", pa.int64()),
    ("seconds", pa.float64()),
    ("batch_size", pa.int64()),
    ("max_batch_tokens", pa.int64()),
    ("oom_retries", pa.int64()),
    ("peak_memory_bytes", pa.int64()),
    ("params", pa.int64()),
    ("tflops", pa.float64()),
    ("mfu", pa.float64()),
    ("engine_version", pa.string()),
    ("source", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")),
])
RUNS = Table("runs", RUN_SCHEMA, "geneb-runs")


def run_row(model: str, task: str, split: str, stats: Mapping, *, data_hash: str, worker: str,
            engine_version: str) -> dict:
    """One runs-table row from an encoder's `encode_into` statistics (the missing ones NULL)."""
    return {"model": model, "task": task, "split": split, "data_hash": data_hash,
            "worker": worker, "device": stats.get("device"), "dtype": stats.get("dtype"),
            "sequences": stats.get("n_encoded"), "tokens": stats.get("n_tokens"),
            "padded_tokens": stats.get("n_padded_tokens"), "seconds": stats.get("seconds"),
            "batch_size": stats.get("batch_size"),
            "max_batch_tokens": stats.get("max_batch_tokens"),
            "oom_retries": stats.get("n_oom_retries"),
            "peak_memory_bytes": stats.get("peak_memory_bytes"), "params": stats.get("params"),
            "tflops": stats.get("tflops"), "mfu": stats.get("mfu"),
            "engine_version": engine_version, "source": LOCAL,
            "created_at": datetime.now(UTC)}


def record_runs(paths: StorePaths, rows: Iterable[Mapping], *, model: str, task: str) -> int:
    """Commit a pair's rows (one commit); returns the rows written."""
    return append_rows(paths, rows, "embed", RUNS, model=model, task=task)


def read_runs(paths: StorePaths) -> pl.DataFrame:
    """Every row of the runs table (empty, with its columns, when there is none)."""
    state = read_state(paths, RUNS)
    rows, _ = read_files(paths, state.files if state else (), RUNS)
    return pl.from_arrow(rows)


PER_RUN: tuple[str, ...] = ("model", "device", "dtype")


def perf_summary(runs: pl.DataFrame, by: tuple[str, ...] = PER_RUN) -> pl.DataFrame:
    """[*by, splits, sequences, tokens, seconds, sequences_per_s, tokens_per_s, padding,
    peak_memory_bytes, batch_size, tflops, mfu] per group of `by` (default: model, device and
    dtype; `fill --dry-run`: model and device): totals over its rows (rates: totals over total
    seconds; tokens NULL when a row counts none; padding: 1 - tokens / padded tokens; the peak
    memory the largest; the batch size the smallest reached; tflops and mfu the
    seconds-weighted means of the rows that have them). Sorted by `by`."""
    def weighted(c: str) -> pl.Expr:
        seconds = pl.col("seconds").filter(pl.col(c).is_not_null()).sum()
        return pl.when(seconds > 0).then((pl.col(c) * pl.col("seconds")).sum() / seconds)

    return (runs.group_by(*by).agg(
        pl.len().alias("splits"), pl.col("sequences").sum(),
        pl.col("tokens").sum().alias("tokens"),
        pl.col("tokens").is_null().any().alias("_no_tokens"),
        pl.col("padded_tokens").sum(), pl.col("seconds").sum(),
        pl.col("peak_memory_bytes").max(), pl.col("batch_size").min(),
        weighted("tflops").alias("tflops"), weighted("mfu").alias("mfu"))
        .with_columns(
            pl.when(pl.col("_no_tokens")).then(None).otherwise(pl.col("tokens")).alias("tokens"))
        .with_columns(
            (pl.col("sequences") / pl.col("seconds")).alias("sequences_per_s"),
            (pl.col("tokens") / pl.col("seconds")).alias("tokens_per_s"),
            (1 - pl.col("tokens") / pl.col("padded_tokens")).alias("padding"))
        .select(*by, "splits", "sequences", "tokens", "seconds", "sequences_per_s",
                "tokens_per_s", "padding", "peak_memory_bytes", "batch_size", "tflops", "mfu")
        .sort(*by))
