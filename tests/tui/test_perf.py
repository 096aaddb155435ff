"""The missing-evaluations screen's throughput line: the runs table, summed per model."""

from __future__ import annotations

from store.paths import resolve_store
from store.tables.telemetry import record_runs, run_row


def _stats(n: int, tokens: int | None, padded: int | None, seconds: float) -> dict:
    return {"n_encoded": n, "n_tokens": tokens, "n_padded_tokens": padded, "seconds": seconds,
            "device": "cpu", "dtype": "float32", "batch_size": 16}


def test_perf_lines_sum_the_runs_of_each_model(tmp_path):
    from geneb_tui.core.perf import perf_lines

    paths = resolve_store(tmp_path / "store")
    assert perf_lines(paths) == {}                       # no runs table yet
    rows = [run_row("tiny", "t1", split, _stats(n, tok, pad, sec), data_hash="h",
                    worker="local", engine_version="0")
            for split, n, tok, pad, sec in (("train", 300, 6_000, 7_500, 2.0),
                                            ("test", 100, 2_000, 2_500, 0.5))]
    record_runs(paths, rows, model="tiny", task="t1")
    record_runs(paths, [run_row("kmer-3", "t1", "train", _stats(50, None, None, 0.25),
                                data_hash="h", worker="local", engine_version="0")],
                model="kmer-3", task="t1")
    assert perf_lines(paths) == {
        "tiny": "160 seq/s, 3,200 tokens/s on cpu (float32), padding 20.0 %, batch 16 "
                "(2 splits)",
        "kmer-3": "200 seq/s on cpu (float32), batch 16 (1 split)"}


def test_stored_lines_are_each_models_bytes_on_disk(tmp_path):
    """The detail's "stored here" line: a model's embeddings (every file under its folder),
    results and predictions files, as `status` counts them, nothing for a model with none; the
    store's line: the totals and the embeddings of the suite's tasks."""
    import os

    from engine.cli import main
    from geneb_tui.core.perf import stored_lines
    from store.runnable import format_bytes
    from store.tables.data_files import RESULTS
    from store.tables.predictions import PREDICTIONS
    from store.tables.results import read_state

    store = tmp_path / "store"
    assert main(["fill", "--suite", "geneb-mini", "--tasks", "mini_promoter_tata", "--models",
                 "kmer-3", "--regimes", "full", "--store", str(store)]) == 0
    paths = resolve_store(store)
    lines, line = stored_lines(paths, ["kmer-3", "kmer-4"], "geneb-mini",
                               ["mini_promoter_tata", "mini_methyl_cpg"])
    assert lines.keys() == {"kmer-3"}
    on_disk = sum(os.path.getsize(os.path.join(d, f))
                  for d, _, files in os.walk(paths.embeddings / "kmer-3") for f in files)
    tables = [sum(f.size for f in read_state(paths, t).files if f.model == "kmer-3")
              for t in (RESULTS, PREDICTIONS)]
    assert all(tables) and on_disk > 0
    model_line = (f"embeddings {format_bytes(on_disk)}, results {format_bytes(tables[0])}, "
                  f"predictions {format_bytes(tables[1])}")
    assert lines["kmer-3"] == model_line           # one model: the store's totals are its own
    assert line == f"the store: {model_line}; geneb-mini's embeddings {format_bytes(on_disk)}"
    assert stored_lines(paths, ["kmer-3"], "geneb-mini", ["mini_methyl_cpg"])[1].endswith(
        "geneb-mini's embeddings 0 B")
