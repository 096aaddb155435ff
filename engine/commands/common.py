"""Helpers shared by the subcommands: the store, the suite, the models, output."""

from __future__ import annotations

import argparse
import json
import os
import sys

from rich.console import Console

from engine.registry import resolve_model
from store.catalog import ModelMeta, load_models
from store.errors import GenebError
from store.paths import StorePaths, check_store, resolve_store

console = Console(soft_wrap=True)  # messages stay one line (commands in them copy whole)
err_console = Console(stderr=True)


def store_of(args, *, write: bool = False) -> StorePaths:
    """The store `--store` / `GENEB_HOME` names, checked (`store.paths.check_store`); `write`
    for the commands that write into it."""
    try:
        paths = resolve_store(args.store)
    except RuntimeError as exc:                 # `~user` of no known user
        given = args.store or os.environ.get("GENEB_HOME")
        raise GenebError(f"store {given}: {exc}; give --store (or GENEB_HOME) a folder "
                         "path") from None
    return check_store(paths, write=write)


def positive_int(text: str) -> int:
    """argparse `type=` of the counts (`--jobs`, `--limit`, `--batch-size`, `--subsample`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give a whole number "
                                         ">= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1; give a whole number >= 1")
    return value


def models_of(paths: StorePaths, specs: list[str]) -> list[ModelMeta]:
    catalog = load_models(paths.user_models)
    return [resolve_model(spec, catalog) for spec in specs]


def emit_json(obj) -> None:
    """One JSON document on a line (`json.dumps`: the C encoder, unlike `json.dump`)."""
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def add_suite_args(p) -> None:
    p.add_argument("--suite", default="geneb-v1",
                   help="geneb-v1 (default), geneb-mini, or a directory of task CSVs (flat "
                        "<task_id>.csv or the hub layout tasks/<task_id>/{train,test}.csv)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="where the geneb-v1 task files are (default: $GENEB_DATA_DIR, else the "
                        "snapshot `geneb-engine data download` put in the store)")
    p.add_argument("--subsample", type=positive_int, metavar="N",
                   help="cap each task at N sequences (deterministic, stratified; changes the "
                        "data revision; off for geneb-v1 unless asked)")


def suite_of(args, paths: StorePaths):
    from engine.suites import resolve_suite

    return resolve_suite(args.suite, paths, data_dir=args.data_dir, subsample=args.subsample)
