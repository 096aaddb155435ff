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
