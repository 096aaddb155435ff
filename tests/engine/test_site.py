"""`geneb-engine site -o DIR`: its numbers are `report --json`'s, its script escapes the
store's text, and the folder is written whole (a previous site replaced, any other refused)."""

from __future__ import annotations

import json

import pytest

from engine.site.build import embedded
from store.vocab.pvalues import p_text
from tests.engine.in_process import refused
from tests.engine.site_build import build_site, report, site_document
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


def test_the_site_is_whole_and_small(site):
    out, summary, doc = site
    assert summary["models"] == 40 and summary["tasks"] == 100
    assert doc["table_version"] == 1 and doc["generator"] == "geneb-engine site"
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    assert pages == {"index.html", *(m["page"] for m in doc["models"]),
                     *(t["page"] for t in doc["tasks"])}
    assert {m["id"]: m["size"] for m in doc["models"]}["GROVER"] == "<100M"
    badges = {e["badge"] for e in doc["entries"]}
    assert badges == {"Official"}
    for name in ("leaderboard.json", "leaderboard_tasks.json"):    # the official page's files
        assert json.loads((out / name).read_text())["data"]["full"]
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size == summary["bytes"] < 5_000_000


def test_the_script_cannot_be_ended_by_a_store_text():
    text = embedded({"model": "</script><script>alert(1)</script><!--"})
    assert "<" not in text
    assert json.loads(text.removeprefix("window.GENEB_SITE = ").removesuffix(";\n")) == \
        {"model": "</script><script>alert(1)</script><!--"}


def test_a_previous_site_is_replaced(site, official_store, tmp_path):
    out = tmp_path / "site"
    build_site(official_store.root, out, "--title", "first", "--resamples", "0")
    (out / "models" / "stale.html").write_text("old page")
    build_site(official_store.root, out, "--title", "second", "--resamples", "0")
    assert site_document(out)["title"] == "second"
    assert not (out / "models" / "stale.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]     # no temporary folder left


def test_a_folder_of_other_files_is_refused(official_store, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = digest(tmp_path)
    refused(capsys, official_store.root, "site", "--store", str(official_store.root),
            "-o", str(out), names=(f"-o {out}", "not a previous GENEB site"))
    assert digest(tmp_path) == before
