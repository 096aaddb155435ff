"""What the dashboard says of each model's runs: how fast it embedded, one line per model from
the runs table (`store.tables.telemetry.perf_summary`, the numbers `status --perf` prints), and
the bytes it holds in the store (`store.sizes`, the numbers `status` ends with)."""

from __future__ import annotations

from store.paths import StorePaths
from store.runnable import format_bytes
from store.tables.telemetry import perf_summary, read_runs


def perf_lines(paths: StorePaths) -> dict[str, str]:
    """{model: "812 seq/s, 50,000 tokens/s on cpu (float32), padding 12.0 %, ..."}, one part
    per device the model ran on (joined by "; ")."""
    out: dict[str, list[str]] = {}
    for r in perf_summary(read_runs(paths)).iter_rows(named=True):
        parts = [f"{r['sequences_per_s']:,.0f} seq/s"]
        if r["tokens_per_s"] is not None:
            parts.append(f"{r['tokens_per_s']:,.0f} tokens/s")
        where = f" on {r['device'] or '?'} ({r['dtype'] or '?'})"
        extra = [f"padding {100 * r['padding']:.1f} %" if r["padding"] is not None else None,
                 f"peak {r['peak_memory_bytes'] / 2**30:.2f} GiB"
                 if r["peak_memory_bytes"] is not None else None,
                 f"batch {r['batch_size']}" if r["batch_size"] is not None else None,
                 f"MFU {100 * r['mfu']:.1f} %" if r["mfu"] is not None else None]
        line = ", ".join(parts) + where + "".join(f", {e}" for e in extra if e)
        splits = f"{r['splits']} split{'s' if r['splits'] != 1 else ''}"
        out.setdefault(r["model"], []).append(f"{line} ({splits})")
    return {m: "; ".join(lines) for m, lines in out.items()}


def stored_lines(paths: StorePaths, models: list[str], suite: str,
                 tasks: list[str]) -> tuple[dict[str, str], str]:
    """({model: "embeddings 12.0 MiB, results 80.1 KiB, predictions 20.3 KiB"} for each of
    `models` with bytes in the store; the store's line: its totals and the embeddings of
    `suite`'s `tasks`), `status`'s figures (reads only); the line is empty for an empty store."""
    from store.embeddings import EmbeddingStore  # lazy: zarr
    from store.sizes import sizes_line, store_sizes  # lazy: zarr, pyarrow

    sizes, embeddings = store_sizes(paths), EmbeddingStore(paths)
    out = {}
    for model in models:
        at = sizes.of_model(model, embeddings.model_folder(model))
        if any(at.values()):
            out[model] = sizes_line(at)
    line = (f"the store: {sizes_line(sizes.total)}; {suite}'s embeddings "
            f"{format_bytes(sizes.task_embeddings(tasks))}" if any(sizes.total.values()) else "")
    return out, line
