"""The site of the official store, built once per test module, and `report --json` of it (the
values the site must show): shared by the site's tests and its browser tests."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from engine.cli import main
from store.vocab.bootstrap import SITE_RESAMPLES


def cli_json(*argv) -> dict:
    """The JSON document `geneb-engine argv --json` prints (exit 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main([*map(str, argv), "--json"])
    assert rc == 0, out.getvalue()
    return json.loads(out.getvalue())


def build_site(store: Path, out: Path, *more) -> dict:
    """`geneb-engine site --store STORE -o OUT`'s JSON summary."""
    return cli_json("site", "--store", store, "-o", out, *more)


def report(store: Path, *, metric: str, regime: str) -> dict:
    """`report --json` at the site's resamples, for one metric and regime."""
    return cli_json("report", "--store", store, "--metric", metric, "--regime", regime,
                    "--resamples", SITE_RESAMPLES)


def site_document(folder: Path) -> dict:
    return json.loads((folder / "site.json").read_text(encoding="utf-8"))


def mini_store(root: Path):
    """A store of geneb-mini results only, as the dashboard's "mini" store kind: 3-, 4- and
    6-mer spectra on its 13 one-task categories, each 0.1 above the one before on every task
    (MCC 0.3 / 0.4 / 0.5 + 0.01 x the task's position), two seeds. Every category has one task,
    so the task bootstrap gives macro no interval: the rank intervals are none."""
    from engine import mini
    from store.paths import resolve_store
    from store.tables.catalogs import register_tasks
    from store.tables.results import append_rows
    from tests.store.local_rows import local_rows

    paths = resolve_store(root)
    tasks = list(mini.TASKS)
    register_tasks(paths, tasks)
    for i, model in enumerate(("kmer-3", "kmer-4", "kmer-6")):
        append_rows(paths, local_rows(model, [t.task_id for t in tasks], ("full",),
                                      value=0.3 + i / 10, seeds_of=lambda regime, task: (13, 17)))
    return paths
