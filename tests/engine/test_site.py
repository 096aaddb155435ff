"""`geneb-engine site -o DIR`: its numbers are `report --json`'s, its script escapes the
store's text, and DIR is an output folder (`store.output_folder`): the site's own files
replaced, the user's kept, the store, home, root and a busy current folder refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.site.build import embedded
from store.output_folder import MARKER
from store.vocab.pvalues import p_text
from tests.engine.in_process import refused
from tests.engine.site_build import (
    REFUSED_PLACES,
    build_site,
    fill_the_disk,
    refused_place,
    report,
    site_document,
)
from tests.helpers import digest

CASES = [("mcc", "full"), ("acc", "10shot"), ("f1_macro", "1shot")]


@pytest.fixture(scope="module")
def site(official_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    summary = build_site(official_store.root, out)
    return out, summary, site_document(out)


def _key(doc: dict, entry: int) -> tuple[str, str]:
    e = doc["entries"][entry]
    return doc["models"][e["model"]]["id"], e["source"]


@pytest.mark.parametrize(("metric", "regime"), CASES)
def test_numbers_are_the_reports(site, official_store, metric, regime):
    _, _, doc = site
    rep = report(official_store.root, metric=metric, regime=regime)
    board = doc["boards"][metric][regime]
    keyed = {_key(doc, r["entry"]): r for r in board["rows"]}
    scopes = doc["scopes"]

    def of(rows, **match):
        return {(r["model"], r["source"]): r for r in rep[rows]
                if all(r[k] == v for k, v in match.items())}

    leader = [k for k, r in of("leader_tie_group").items() if r["leader"]]
    assert [_key(doc, board["leader"])] == leader
    assert sorted(_key(doc, e) for e in board["tie_group"]) == \
        sorted(k for k, r in of("leader_tie_group").items() if r["tied_with_leader"])
    for key, r in of("leader_tie_group").items():          # the one rule, with its p
        assert keyed[key]["p_value"] == r["p_value"] and keyed[key]["tied"] == \
            r["tied_with_leader"]
        assert board["rule"]["threshold"] == r["threshold"]
    assert (board["rule"]["n_tasks"], board["rule"]["compared"], board["rule"]["too_few"]) == (
        100, 39, None)
    for key, r in of("aggregates").items():
        assert keyed[key]["scores"] == [r[s] for s in scopes]
    for key, r in of("rankings").items():
        assert keyed[key]["ranks"] == [r[s] for s in scopes]
    for key, r in of("score_intervals", scope="macro").items():
        assert (keyed[key]["low"], keyed[key]["high"]) == (r["low"], r["high"])
    for key, r in of("rank_intervals", scope="macro").items():
        assert (keyed[key]["rank_low"], keyed[key]["rank_high"]) == (r["rank_low"],
                                                                     r["rank_high"])
    test = next(r for r in rep["rank_tests"] if r["regime"] == regime and r["scope"] == "all")
    cd = doc["cd"][metric][regime]
    assert (cd["critical_difference"], cd["p_value"]) == (test["critical_difference"],
                                                          test["p_value"])
    # shown as the report shows it (store.vocab.pvalues): the full regime's underflows
    shown = "< 1e-300" if regime == "full" else "= " + p_text(test["p_value"])
    assert cd["p_is"] == "Friedman P " + shown
    assert {_key(doc, e): v for e, v in cd["ranks"]} == \
        {k: r["average_rank"] for k, r in of("average_ranks", regime=regime, scope="all").items()}
    for few in ("10shot", "1shot"):
        assert {_key(doc, e): rest for e, *rest in doc["rank_shift"][metric][few]} == \
            {k: [r["rank_a"], r["rank_b"], r["shift"]]
             for k, r in of(f"rank_shift_full_{few}").items()}
    columns = doc["degradation_columns"]
    assert {(_key(doc, e), s): rest for e, s, *rest in doc["degradation"][metric]} == \
        {((r["model"], r["source"]), r["scope"]): [r[c] for c in columns[1:]]
         for r in rep["degradation"]}


def test_a_geneb_mini_site_claims_only_what_the_rule_decides(tmp_path):
    """Issue 41: the site of a geneb-mini store showed "null–null" rank intervals and said "no
    other entry's rank interval overlaps the leader's" though none exist. Each category has one
    task, so macro has no bootstrap interval; the rule's sign-flip test still separates the
    6-mer spectrum, ahead on all 13 tasks (p = 2/2^13 <= 0.05/2), and the board carries it."""
    from engine.mini import TASKS
    from engine.site.data import site_data
    from store.db import Snapshot
    from store.tables.catalogs import models_with_builtins
    from tests.engine.site_build import mini_store

    paths = mini_store(tmp_path / "store")
    out = tmp_path / "site"
    build_site(paths.root, out, "--suite", "geneb-mini")
    doc = site_document(out)
    board = doc["boards"]["mcc"]["full"]
    assert all(r["rank_low"] is None and r["low"] is None for r in board["rows"])
    assert board["rule"] == {"n_tasks": 13, "threshold": pytest.approx(0.025), "compared": 2,
                             "threshold_text": "0.05/2", "too_few": None}
    keyed = {_key(doc, r["entry"])[0]: r for r in board["rows"]}
    assert [_key(doc, e)[0] for e in board["tie_group"]] == ["kmer-6"]
    assert keyed["kmer-4"]["p_value"] == keyed["kmer-3"]["p_value"] == 2 / 2 ** 13
    script = (out / "assets" / "site.js").read_text()
    assert "rank interval overlaps" not in script and "rank_low === null" in script
    # three tasks: too few for any claim, and the board says so in words
    few = site_data(Snapshot(paths), models_with_builtins(paths), tuple(TASKS[:3]),
                    suite="geneb-mini", title="t", resamples=200, level=0.95, seed=0)
    rule = few["boards"]["mcc"]["full"]["rule"]
    assert rule["too_few"] == ("3 tasks: too few to separate any model from the leader at 95 % "
                               "when it is compared with 2 others: the smallest possible p is "
                               "0.25, above 0.05/2")
    assert len(few["boards"]["mcc"]["full"]["tie_group"]) == 3


def test_the_site_is_whole_and_small(site):
    out, summary, doc = site
    assert summary["models"] == 40 and summary["tasks"] == 100
    assert doc["table_version"] == 1 and doc["generator"] == "geneb-engine site"
    assert "context_curve" not in doc          # no model at two context policies: as before
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    assert pages == {"index.html", *(m["page"] for m in doc["models"]),
                     *(t["page"] for t in doc["tasks"])}
    assert {m["id"]: m["size"] for m in doc["models"]}["GROVER"] == "<100M"
    badges = {e["badge"] for e in doc["entries"]}
    assert badges == {"Official"}
    for name in ("leaderboard.json", "leaderboard_tasks.json"):    # the official page's files
        assert json.loads((out / name).read_text())["data"]["full"]
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.name != MARKER)
    assert size == summary["bytes"] < 5_000_000


def test_the_script_cannot_be_ended_by_a_store_text():
    text = embedded({"model": "</script><script>alert(1)</script><!--"})
    assert "<" not in text
    assert json.loads(text.removeprefix("window.GENEB_SITE = ").removesuffix(";\n")) == \
        {"model": "</script><script>alert(1)</script><!--"}


# --- the output folder (store.output_folder): the site's own files, the user's kept ------------

USER_FILES = {"README.md": "---\nsdk: static\n---\n", "CNAME": "geneb.example.org\n",
              ".git/HEAD": "ref: refs/heads/main\n", ".git/objects/ab/cdef": "blob",
              "models/mine.html": "my page", "figures/scale.png": "my figure"}


def _with_user_files(folder: Path) -> dict[str, str]:
    for name, text in USER_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return {n: d for n, d in digest(folder).items() if n in USER_FILES}


def _site_files(folder: Path) -> dict[str, str]:
    """The site's files in `folder` (name -> sha256): everything but the user's and the
    marker."""
    return {n: d for n, d in digest(folder).items()
            if d != "dir" and n not in USER_FILES and n != MARKER}


def test_the_users_files_are_kept(small_stores, tmp_path):
    out, alone = tmp_path / "site", tmp_path / "alone"
    build_site(small_stores["four"], out, "--resamples", "0")
    build_site(small_stores["three"], alone, "--resamples", "0")   # the same site, by itself
    mine = _with_user_files(out)
    assert (out / "models" / "GROVER.html").exists()                   # of store "four" only
    build_site(small_stores["three"], out, "--resamples", "0")
    assert {n: d for n, d in digest(out).items() if n in USER_FILES} == mine
    assert _site_files(out) == _site_files(alone)                      # GROVER.html removed
    marker = json.loads((out / MARKER).read_text())
    assert marker["generator"] == "geneb-engine site"
    assert {n: d for n, [d] in marker["files"].items()} == _site_files(alone)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone", "site"]   # nothing beside


def test_a_name_the_site_needs_taken_by_a_users_file_is_refused(small_stores, tmp_path,
                                                                 capsys):
    out = tmp_path / "site"
    (out / "models").mkdir(parents=True)
    (out / "index.html").write_text("my own index")
    (out / "models" / "GROVER.html").write_text("my notes on GROVER")
    before = digest(tmp_path)
    refused(capsys, small_stores["one"], "site", "--store", str(small_stores["one"]),
            "-o", str(out), "--resamples", "0",
            names=(f"-o {out}", "index.html, models/GROVER.html are not what geneb-engine "
                                "site wrote there", "nothing was written"))
    assert digest(tmp_path) == before


def test_a_site_file_the_user_changed_is_theirs(small_stores, tmp_path, capsys):
    out = tmp_path / "site"
    build_site(small_stores["three"], out, "--resamples", "0")
    (out / "index.html").write_text("edited by hand")
    before = digest(tmp_path)
    refused(capsys, small_stores["three"], "site", "--store", str(small_stores["three"]),
            "-o", str(out), "--resamples", "0",
            names=("index.html is not what geneb-engine site wrote there (or changed since)",))
    assert digest(tmp_path) == before


@pytest.mark.parametrize("where", REFUSED_PLACES)
def test_a_folder_that_is_not_for_a_site_is_refused(small_stores, tmp_path, capsys,
                                                     monkeypatch, where):
    refused_place(capsys, monkeypatch, tmp_path, small_stores["one"], where, "site", "-o")


def test_the_current_folder_is_taken_when_empty_or_a_site(small_stores, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build_site(small_stores["one"], ".", "--resamples", "0")
    build_site(small_stores["three"], ".", "--resamples", "0")
    assert site_document(tmp_path)["models"][0]["id"] == "BioFM-265M"


def test_a_site_of_the_version_before_the_marker_is_replaced_in_place(small_stores, tmp_path):
    """A folder 2dfd362 wrote (no marker; its files listed by its site.json) with the user's
    files added: the new site replaces the old one's files and keeps the user's."""
    out, alone = tmp_path / "site", tmp_path / "alone"
    build_site(small_stores["four"], out, "--resamples", "0")
    (out / MARKER).unlink()                     # the layout of 2dfd362: no marker
    mine = _with_user_files(out)
    build_site(small_stores["three"], out, "--resamples", "0")
    build_site(small_stores["three"], alone, "--resamples", "0")
    assert {n: d for n, d in digest(out).items() if n in USER_FILES} == mine
    assert _site_files(out) == _site_files(alone)


def test_what_killed_builds_of_the_version_before_left_is_cleared(small_stores, tmp_path,
                                                                  capsys):
    """2dfd362 built the site in `.DIR.geneb-site-PID` and moved the previous one aside to
    `.DIR.geneb-site-old-PID`: a partial build is removed, a previous site (with the user's
    files) moved back when DIR is missing, else kept and named."""
    dead = 4_194_304 + 1              # above Linux's pid_max: no process has it
    partial = tmp_path / f".site.geneb-site-{dead}"
    aside = tmp_path / f".site.geneb-site-old-{dead}"
    build_site(small_stores["four"], aside, "--resamples", "0")
    (aside / MARKER).unlink()
    mine = _with_user_files(aside)
    (partial / "models").mkdir(parents=True)
    (partial / "models" / "GROVER.html").write_text("half")
    build_site(small_stores["three"], tmp_path / "site", "--resamples", "0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert {n: d for n, d in digest(tmp_path / "site").items() if n in USER_FILES} == mine
    shutil.copytree(tmp_path / "site", aside)                      # aside again, DIR present
    capsys.readouterr()
    build_site(small_stores["three"], tmp_path / "site", "--resamples", "0")
    assert aside.exists()
    assert f"{aside} is a previous site an interrupted build" in capsys.readouterr().err


def test_a_failed_write_leaves_the_previous_site(small_stores, tmp_path, capsys, monkeypatch):
    out = tmp_path / "site"
    build_site(small_stores["three"], out, "--resamples", "0")
    before = digest(tmp_path)
    fill_the_disk(monkeypatch, at=40)
    refused(capsys, small_stores["four"], "site", "--store", str(small_stores["four"]),
            "-o", str(out), "--resamples", "0",
            names=(f"-o {out}: cannot write (No space left on device); the previous output "
                   "is as it was",))
    assert digest(tmp_path) == before            # no temporary file left either
