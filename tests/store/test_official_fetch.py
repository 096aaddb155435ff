"""`import --official`: the pinned download, and the clear message when offline."""

from __future__ import annotations

import urllib.error

import pytest

from store import official_fetch
from store.errors import GenebError
from store.official_fetch import (
    OFFICIAL_COMMIT,
    fetch_official_submissions,
    official_dir,
    official_file_names,
)
from store.paths import resolve_store
from tests.conftest import SUBMISSIONS


def test_the_forty_official_files_are_named_after_the_catalog():
    names = official_file_names()
    assert len(names) == 40
    assert names == sorted(p.name for p in SUBMISSIONS.glob("*.json"))


def test_offline_names_what_to_download_where_and_the_command(tmp_path, monkeypatch):
    def offline(url):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(official_fetch, "fetch_url", offline)
    paths = resolve_store(tmp_path / "store")
    with pytest.raises(GenebError) as info:
        fetch_official_submissions(paths)
    message = str(info.value)
    dest = official_dir(paths)
    assert message.startswith("cannot download https://raw.githubusercontent.com/darlednik/"
                              f"GENEB/{OFFICIAL_COMMIT}/submissions/")
    assert "Temporary failure in name resolution" in message
    assert "the 40 files submissions/<model_id>.json of https://github.com/darlednik/GENEB at " \
           f"commit {OFFICIAL_COMMIT}" in message
    assert message.endswith(f"put them in {dest}, then run `geneb-engine import {dest}`")
    assert not dest.exists()


def test_downloads_at_the_pinned_commit_once(tmp_path, monkeypatch):
    asked = []

    def serve(url):
        asked.append(url)
        return (SUBMISSIONS / url.rsplit("/", 1)[1]).read_bytes()

    monkeypatch.setattr(official_fetch, "fetch_url", serve)
    paths = resolve_store(tmp_path / "store")
    files = fetch_official_submissions(paths)
    assert [f.read_bytes() for f in files] == [
        (SUBMISSIONS / f.name).read_bytes() for f in files]
    assert len(asked) == 40 and all(f"/{OFFICIAL_COMMIT}/submissions/" in u for u in asked)
    assert not list(official_dir(paths).glob("*.tmp"))

    def offline(url):
        raise AssertionError("no download expected: the files are already there")

    monkeypatch.setattr(official_fetch, "fetch_url", offline)
    assert fetch_official_submissions(paths) == files
