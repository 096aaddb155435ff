"""Helpers shared by the subcommands: the store, the suite, the models, output."""

from __future__ import annotations

import json
import sys

from rich.console import Console

from engine.registry import resolve_model
from store.catalog import ModelMeta, load_models
from store.paths import StorePaths, resolve_store

console = Console(soft_wrap=True)  # messages stay one line (commands in them copy whole)
err_console = Console(stderr=True)


def store_of(args) -> StorePaths:
    return resolve_store(args.store)


def models_of(paths: StorePaths, specs: list[str]) -> list[ModelMeta]:
    catalog = load_models(paths.user_models)
    return [resolve_model(spec, catalog) for spec in specs]


def emit_json(obj) -> None:
    json.dump(obj, sys.stdout, default=str)
    sys.stdout.write("\n")
    sys.stdout.flush()


def add_suite_args(p) -> None:
    p.add_argument("--suite", default="geneb-v1",
                   help="geneb-v1 (default), geneb-mini, or a directory of task CSVs (flat "
                        "<task_id>.csv or the hub layout tasks/<task_id>/{train,test}.csv)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="where the geneb-v1 task files are (default: $GENEB_DATA_DIR, else the "
                        "snapshot `geneb-engine data download` put in the store)")
    p.add_argument("--subsample", type=int, metavar="N",
                   help="cap each task at N sequences (deterministic, stratified; changes the "
                        "data revision; off for geneb-v1 unless asked)")


def suite_of(args, paths: StorePaths):
    from engine.suites import resolve_suite

    return resolve_suite(args.suite, paths, data_dir=args.data_dir, subsample=args.subsample)
