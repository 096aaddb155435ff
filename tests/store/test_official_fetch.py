"""`import --official`: the shipped data offline; `--commit SHA`: the download of another commit,
and the clear message when offline."""

from __future__ import annotations

import json
import urllib.error

import pytest

from engine.cli import main
from store.official import fetch as official_fetch
from store.official.data import OFFICIAL_COMMIT
from store.official.fetch import (
    fetch_official_submissions,
    official_dir,
    official_file_names,
    official_files,
)
from store.paths import resolve_store
from store.vocab.errors import GenebError
from tests.conftest import LEADERBOARD, SELF_REPORTED, SUBMISSIONS

OTHER = "0123456789abcdef0123456789abcdef01234567"


def _offline(url):
    raise urllib.error.URLError("Temporary failure in name resolution")


def test_the_forty_official_files_are_named_after_the_catalog():
    names = official_file_names()
    assert len(names) == 40
    assert names == sorted(p.name for p in SUBMISSIONS.glob("*.json"))


def test_the_pinned_commit_is_written_from_the_package_without_network(tmp_path, monkeypatch):
    monkeypatch.setattr(official_fetch, "fetch_url", _offline)
    paths = resolve_store(tmp_path / "store")
    files = official_files(paths)
    dest = official_dir(paths)
    assert dest == paths.root / "reference" / "official-submissions"
    assert all(f.parent == dest for f in files)
    published = [*SUBMISSIONS.glob("*.json"), *SELF_REPORTED.glob("*.json"), LEADERBOARD]
    assert sorted(f.name for f in files) == sorted(p.name for p in published)
    assert {f.name: f.read_bytes() for f in files} == {p.name: p.read_bytes() for p in published}
    assert official_files(paths, OFFICIAL_COMMIT) == files


@pytest.mark.parametrize("commit", [OTHER, OFFICIAL_COMMIT])
def test_offline_names_what_to_download_where_and_the_command(tmp_path, monkeypatch, commit):
    monkeypatch.setattr(official_fetch, "fetch_url", _offline)
    paths = resolve_store(tmp_path / "store")
    with pytest.raises(GenebError) as info:
        fetch_official_submissions(paths, commit)
    message = str(info.value)
    dest = official_dir(paths, commit)
    assert message.startswith("cannot download https://raw.githubusercontent.com/darlednik/"
                              f"GENEB/{commit}/submissions/")
    assert "Temporary failure in name resolution" in message
    assert "the 40 files submissions/<model_id>.json of https://github.com/darlednik/GENEB at " \
           f"commit {commit}" in message
    assert message.endswith(f"put them in {dest}, then run `geneb-engine import {dest}`")
    assert not dest.exists()


def test_another_commit_is_downloaded_once_into_its_own_folder(tmp_path, monkeypatch):
    asked = []

    def serve(url):
        asked.append(url)
        return (SUBMISSIONS / url.rsplit("/", 1)[1]).read_bytes()

    monkeypatch.setattr(official_fetch, "fetch_url", serve)
    paths = resolve_store(tmp_path / "store")
    files = official_files(paths, OTHER.upper())
    assert {f.parent for f in files} == {paths.root / "reference" / f"official-submissions-{OTHER}"}
    assert [f.read_bytes() for f in files] == [
        (SUBMISSIONS / f.name).read_bytes() for f in files]
    assert len(asked) == 40 and all(f"/{OTHER}/submissions/" in u for u in asked)
    assert not list(official_dir(paths, OTHER).glob("*.tmp"))

    def offline(url):
        raise AssertionError("no download expected: the files are already there")

    monkeypatch.setattr(official_fetch, "fetch_url", offline)
    assert official_files(paths, OTHER) == files


def test_cli_commit_offline_ends_in_one_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(official_fetch, "fetch_url", _offline)
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--official", "--commit", OTHER]) == 2
    err = capsys.readouterr().err
    assert err.startswith("geneb-engine import: cannot download https://raw.githubusercontent"
                          f".com/darlednik/GENEB/{OTHER}/submissions/")
    assert err.rstrip().endswith(f"then run `geneb-engine import "
                                 f"{store / 'reference' / f'official-submissions-{OTHER}'}`")
    assert not (store / "results").exists()


def test_cli_refuses_a_commit_that_is_not_a_sha(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--commit", "main"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "geneb-engine import: --commit 'main': not a commit SHA; give the full 40-character SHA "
        "of a github.com/darlednik/GENEB commit (the shipped data is at "
        f"{OFFICIAL_COMMIT})")
    assert not store.exists()


def test_cli_official_brings_every_submission_with_its_provenance(tmp_path, capsys):
    """All 41 shipped submissions, the self-reported splicebert-1024nt among them: its
    provenance is its entry's source in `report` and its file's provenance in an export."""
    store = str(tmp_path / "store")
    assert main(["import", "--store", store, "--official"]) == 0
    assert "42 file(s): 12300 result rows written" in capsys.readouterr().out
    assert main(["report", "--store", store, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["aggregates"]
    assert len({r["model"] for r in rows}) == 41
    assert {(r["model"], r["source"]) for r in rows if r["source"] != "official"} == {
        ("splicebert-1024nt", "self-reported")}
    assert main(["export", "--store", store, "--submission", "splicebert-1024nt", "--source",
                 "self-reported", "-o", str(tmp_path)]) == 0
    assert "wrote the self-reported submission of splicebert-1024nt" in capsys.readouterr().out
    out = tmp_path / "splicebert-1024nt.json"
    assert json.loads(out.read_text())["meta"]["provenance"] == "self-reported"
    assert out.read_bytes() == (SELF_REPORTED / "splicebert-1024nt.json").read_bytes()
