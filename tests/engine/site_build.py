"""The site of the official store, built once per test module, and `report --json` of it (the
values the site must show): shared by the site's tests and its browser tests; the folders an
output (`site -o`, `report --figures`) may not be, shared by the site's and the figures' tests."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import shutil
from pathlib import Path

from engine.cli import main
from store import output_folder
from store.analyses.presets import SITE_RESAMPLES
from tests.engine.in_process import refused
from tests.helpers import digest


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


# The places an output folder may not be (`store.output_folder`).
REFUSED_PLACES = ["empty", "root", "home", "store", "in-store", "current"]


def _place(where: str, option: str, store: Path, home: Path, monkeypatch) -> tuple[str, str]:
    """(the path given, what its refusal says) for place `where` of `REFUSED_PLACES`; HOME is
    set to `home`, the current folder to a project folder in it (a file in it)."""
    (home / "project").mkdir(parents=True)
    (home / "project" / "main.py").write_text("print('mine')")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "project")
    return {"empty": ("", f"{option} '': an empty path names no folder"),
            "root": ("/", f"{option} /: is the root folder"),
            "home": ("~", f"{option} ~: is your home folder"),
            "store": (str(store), f"is the store {store}, which holds only what geneb keeps"),
            "in-store": (f"{store}/web", f"is inside the store {store}"),
            "current": (".", f"{option} .: is the current folder, which holds files")}[where]


def refused_place(capsys, monkeypatch, tmp_path: Path, store: Path, where: str,
                  *argv: str) -> None:
    """`geneb-engine argv --store COPY OPTION PLACE` (the option last in `argv`) on a copy of
    `store` in `tmp_path`, with PLACE the path of `where`: refused in one line saying why, and
    nothing in `tmp_path` (the store, HOME, the current folder) changed."""
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    *argv, option = argv
    given, says = _place(where, option, copy, tmp_path / "home", monkeypatch)
    before = digest(tmp_path)
    refused(capsys, copy, *argv, "--store", str(copy), option, given, names=(says,))
    assert digest(tmp_path) == before


def fill_the_disk(monkeypatch, at: int) -> None:
    """From now on the `at`-th file an output folder writes fails: no space left on device."""
    real, calls = output_folder._write_temp, []

    def full_disk(path, data):
        calls.append(path)
        if len(calls) == at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(output_folder, "_write_temp", full_disk)


def mini_store(root: Path, models: tuple[str, ...] = ("kmer-3", "kmer-4", "kmer-6")):
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
    for i, model in enumerate(models):
        append_rows(paths, local_rows(model, [t.task_id for t in tasks], ("full",),
                                      value=0.3 + i / 10, seeds_of=lambda regime, task: (13, 17)))
    return paths
