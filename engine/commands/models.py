"""`geneb-engine models`: the model catalog (built-in, the user's, the checkpoint folders the
store has run: `store.tables.catalogs.store_models`), filterable, with each model's licences
(`store.licences.licence_text`; `--json`: every field, the commit and licence sources too);
`--cached` keeps the models whose checkpoint is on this machine
(`engine.encoders.hub.local_checkpoint`)."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from engine.commands.common import (
    add_family_args,
    check_families,
    choice_of,
    console,
    emit_json,
    store_of,
    table_console,
)
from engine.commands.layout import Col, FitTable
from engine.encoders.hub import cache_folder, local_checkpoint
from store.catalog import params_text
from store.licences import licence_text
from store.vocab.encoder_kinds import KINDS, split_extractor

SCALES = ("<100M", "100M-1B", ">1B", "n/a")


def register(sub, common) -> None:
    p = sub.add_parser("models", parents=[common], help="list the model catalog",
                       description="The models --models can name: the built-in catalog, the "
                                   "entries of <store>/models.toml and the checkpoint folders "
                                   "the store has run (by their model id).")
    add_family_args(p)
    p.add_argument("--scale", choices=SCALES, type=choice_of("scale band", SCALES))
    p.add_argument("--search", metavar="TEXT", help="id or display name contains TEXT")
    p.add_argument("--cached", action="store_true",
                   help="only the models whose checkpoint is on this machine: in the Hugging "
                        "Face cache at their pinned revision (`geneb-engine fetch-models` puts "
                        "it there), or at their local path")
    p.set_defaults(handler=run)


def _runs(m) -> str:
    """How `fill` runs the model, in a few words."""
    if m.encoder == "external":
        return "no public weights"
    if m.extractor:
        file, name = split_extractor(m.extractor)
        return f"official extractor {Path(file).name}:{name}"
    if KINDS[m.encoder].imported:
        return "imported embeddings"
    if KINDS[m.encoder].unavailable:
        return f"official extractor (no {m.encoder} adapter)"   # `fill` says how: what_to_do
    if m.encoder not in ("hf", "kmer"):
        return f"adapter {m.encoder}"
    return f"{m.encoder} + remote code" if m.remote_code == "required" else m.encoder


def _domain(m) -> str:
    """Its pretraining kingdoms, and its species where they are a closed list; "?" unknown."""
    if not m.pretraining_kingdoms:
        return "?"
    species = f" ({', '.join(m.pretraining_organisms)})" if m.pretraining_organisms else ""
    return escape(", ".join(m.pretraining_kingdoms) + species)


def _context(m) -> str:
    """Its documented context in tokens, else its `max_tokens` cap; "?" where neither is set."""
    tokens = m.context or m.max_tokens
    return f"{tokens:,}" if tokens else "?"


def run(args) -> int:
    from store.tables.catalogs import models_frame, store_models  # lazy: polars, pyarrow

    catalog = store_models(store_of(args))
    entries = list(catalog.values())
    check_families(args, entries)
    models = [
        m for m in entries
        if (not args.architecture or m.architecture_family == args.architecture)
        and (not args.tokenization or m.tokenization_family == args.tokenization)
        and (not args.pretraining or m.pretraining_data == args.pretraining)
        and (not args.scale or m.scale_band == args.scale)
        and (not args.search or args.search.lower() in (m.model_id + m.display).lower())
    ]
    local, listed = {}, len(models)
    if args.cached:
        local = {m.model_id: str(folder) for m in models if (m.path or m.hub_id) and
                 (folder := local_checkpoint(m.path or m.hub_id, m.revision)) is not None}
        models = [m for m in models if m.model_id in local]
    if args.json:
        emit_json([{**row, **({"checkpoint": local[row["model_id"]]} if args.cached else {})}
                   for row in models_frame(models).iter_rows(named=True)])
        return 0
    if not models and args.cached and listed:
        console.print(f"none of the {listed} models listed without --cached has its "
                      f"checkpoint on this machine (Hugging Face cache: {cache_folder()}); "
                      "`geneb-engine fetch-models ID` downloads one on a machine that reaches "
                      "the hub")
        return 0
    if not models:
        given = " ".join(f"{o} {v!r}" for o, v in (
            ("--architecture", args.architecture), ("--tokenization", args.tokenization),
            ("--pretraining", args.pretraining), ("--scale", args.scale),
            ("--search", args.search)) if v)
        console.print(f"no model of the {len(entries)} in the catalog matches {given}; drop a "
                      "filter (`geneb-engine models` lists them all)")
        return 0
    where = f" on this machine (Hugging Face cache: {cache_folder()})" if args.cached else ""
    table = FitTable(f"{len(models)} models{where}",
                     [Col("model", key=True), Col("params", justify="right"),
                      Col("architecture", wrap=11), Col("tokenization"),
                      Col("pretraining", wrap=13, drop=2), Col("domain", wrap=12, drop=4),
                      Col("zero-shot", drop=3), Col("context", justify="right", drop=3),
                      Col("licence", wrap=12, drop=2), Col("runs with", wrap=10, drop=1)],
                     max_drop=4)
    for m in models:
        table.add_row(escape(m.model_id), params_text(m.params), escape(m.architecture_family),
                      escape(m.tokenization_family), escape(m.pretraining_data), _domain(m),
                      {None: "?", True: "yes", False: "no"}[m.zero_shot], _context(m),
                      escape(licence_text(m.weights_licence, m.code_licence)), _runs(m))
    table_console().print(table)
    return 0
