"""`geneb-engine models`: the model catalog (built-in and the user's), filterable."""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table

from engine.commands.common import console, emit_json, store_of
from store.catalog import load_models


def register(sub, common) -> None:
    p = sub.add_parser("models", parents=[common], help="list the model catalog")
    p.add_argument("--architecture", metavar="FAMILY", help="e.g. 'Transformer decoder'")
    p.add_argument("--tokenization", metavar="FAMILY", help="single-nucleotide, k-mer, BPE, ...")
    p.add_argument("--scale", choices=["<100M", "100M-1B", ">1B", "n/a"])
    p.add_argument("--search", metavar="TEXT", help="id or display name contains TEXT")
    p.set_defaults(handler=run)


def _params(n: int) -> str:
    if n <= 0:
        return "-"
    for unit, div in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return str(n)


def _runs(m) -> str:
    """How `fill` runs the model, in a few words."""
    if m.encoder == "external":
        return "no public weights"
    if m.encoder not in ("hf", "kmer"):
        return f"adapter {m.encoder}"
    return f"{m.encoder} + remote code" if m.remote_code == "required" else m.encoder


def run(args) -> int:
    models = [
        m for m in load_models(store_of(args).user_models).values()
        if (not args.architecture or m.architecture_family.lower() == args.architecture.lower())
        and (not args.tokenization or m.tokenization_family.lower() == args.tokenization.lower())
        and (not args.scale or m.scale_band == args.scale)
        and (not args.search or args.search.lower() in (m.model_id + m.display).lower())
    ]
    if args.json:
        emit_json([{**asdict(m), "scale_band": m.scale_band} for m in models])
        return 0
    table = Table(title=f"{len(models)} models")
    table.add_column("model", no_wrap=True, overflow="ellipsis", max_width=36)
    table.add_column("params", justify="right", no_wrap=True, min_width=6)
    for col in ("architecture", "tokenization", "pretraining", "runs with"):
        table.add_column(col, no_wrap=True, overflow="ellipsis", min_width=len(col))
    for m in models:
        table.add_row(m.model_id, _params(m.params), m.architecture_family,
                      m.tokenization_family, m.pretraining_data, _runs(m))
    console.print(table)
    return 0
