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
