"""The site of the official store, built once per test module, and `report --json` of it (the
values the site must show): shared by the site's tests and its browser tests; the folders an
output (`site -o`, `report --figures`) may not be, shared by the site's and the figures' tests."""

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


# The places an output folder may not be (`store.output_folder`).
REFUSED_PLACES = ["empty", "root", "home", "store", "in-store", "current"]


def refused_place(where: str, option: str, store: Path, home: Path, monkeypatch) -> tuple[str, str]:
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
