"""Helpers shared by the subcommands: the store, the suite, the models, output."""

from __future__ import annotations

import json
import sys

from rich.console import Console

from engine.registry import resolve_model
from store.catalog import ModelMeta, load_models
from store.paths import StorePaths, resolve_store

console = Console()
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
