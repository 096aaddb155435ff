"""Issue 43 parts 3 and 4: every hub entry of the catalog at a 40-hex commit with the record it
was read from, or a stated reason; `fetch-models` checks the commit it fetched against it; the
catalog's commit changes nothing a run records (results stay current, nothing is recomputed);
the licences of weights and code, the one commercial-use rule, and `recommend`'s licence
constraints on the official results."""

from __future__ import annotations

import json

import pytest

from engine.encoders.revision import told_revisions
from store.catalog import commit_problem, load_models, parse_model_entries
from store.licences import ALLOWED, CHECK, NOT_ALLOWED, UNKNOWN, commercial_use
from store.vocab.errors import GenebError
from store.vocab.revisions import is_pinned
from tests.engine.test_offline_models import (  # noqa: F401  (fixtures)
    COMMIT,
    REPO,
    cli,
    fake_hub_files,
    hub,
    served,
    store,
    tiny_bert,
)
from tests.engine.test_recommend import answer, answer_of, mine  # noqa: F401  (fixture)

OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def test_every_hub_entry_has_a_commit_with_its_record_or_a_reason():
    hub_models = [m for m in load_models().values() if m.hub_id]
    assert len(hub_models) == 34
    assert {m.model_id: commit_problem(m) for m in hub_models if commit_problem(m)} == {}
    for m in hub_models:
        assert (m.commit is None) or (is_pinned(m.commit) and m.commit == m.commit.lower()
                                      and m.commit_source and m.commit[:7] in m.commit_source)
    # the branch the catalog ran at before is resolved or says why it cannot be
    evo = load_models()["evo-1-131k-base"]
    assert evo.revision == "1.1_fix" and (evo.commit or "1.1_fix" in evo.commit_reason)
    # the rule itself: a commit without its record, and neither, are what it names
    bare = parse_model_entries([{"model_id": "x", "hub_id": "org/x", "commit": COMMIT}], "t")[0]
    assert commit_problem(bare) == "its commit names no record it was read from (commit_source)"
    none = parse_model_entries([{"model_id": "x", "hub_id": "org/x"}], "t")[0]
    assert commit_problem(none) == "no commit and no reason (commit_reason)"


def test_a_commit_that_is_no_commit_is_refused_naming_the_entry():
    with pytest.raises(GenebError, match=r"models.toml: model entry 1 \(x\): commit = 'main' is "
                                         r"not a commit \(40 hex characters\)"):
        parse_model_entries([{"model_id": "x", "hub_id": "org/x", "commit": "main"}],
                            "models.toml")


def test_every_catalog_model_has_both_licences_and_their_source():
    for m in load_models().values():
        assert m.weights_licence and m.code_licence and m.licence_source, m.model_id
        if UNKNOWN in (m.weights_licence, m.code_licence):
            assert "unknown" in m.licence_source or m.weights_licence != UNKNOWN, m.model_id


def test_the_catalogs_commit_changes_nothing_a_run_records():
    """Earlier runs and imported official results recorded no revision for a hub model at
    main (`NO_REVISION`): the revision told before a run (what the planner and `status` compare
    with) stays the entry's own, so nothing is stale or computed again."""
    catalog = load_models()
    pinned = [catalog[m] for m in ("METAGENE-1", "gena-lm-bert-base",
                                   "dnabert2-no-flashattention")]
    assert all(m.commit for m in pinned)
    assert told_revisions(pinned) == {m.model_id: None for m in pinned}
    assert told_revisions([catalog["evo-1-131k-base"]]) == {"evo-1-131k-base": "1.1_fix"}


def test_fetch_models_says_whether_it_fetched_the_catalogs_commit(
        hub, answering_hub, store, tmp_path, tiny_bert, monkeypatch, capsys):  # noqa: F811
    # the user's entry runs REPO at main and records the commit COMMIT for it
    at_main = store
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny"\nhub_id = "{REPO}"\ncommit = "{COMMIT}"\n'
        'commit_source = "a test"\nparams = 1000\n')
    calls = fake_hub_files(monkeypatch, served(tmp_path, tiny_bert))
    rc, out, err = cli(capsys, "fetch-models", "tiny", "--store", str(at_main), "--json")
    assert rc == 0, err
    assert calls[0][:2] == (REPO, None)          # main, as the entry says
    [done] = json.loads(out)
    assert (done["commit"], done["catalog_commit"], done["catalog_match"]) == \
        (COMMIT, COMMIT, True)
    rc, out, _ = cli(capsys, "fetch-models", "tiny", "--store", str(at_main))
    assert "; the commit the catalog records" in out

    text = (at_main / "models.toml").read_text().replace(COMMIT, OTHER)
    (at_main / "models.toml").write_text(text)
    rc, out, _ = cli(capsys, "fetch-models", "tiny", "--store", str(at_main))
    assert rc == 0
    assert (f"not the commit the catalog records ({OTHER}, read from a test): main names "
            "another now") in out and f"`--models tiny@{OTHER}`" in out
    rc, out, _ = cli(capsys, "fetch-models", "tiny", "--store", str(at_main), "--json")
    assert json.loads(out)[0]["catalog_match"] is False


@pytest.mark.parametrize(("licence", "verdict"), [
    ("Apache-2.0", ALLOWED), ("mit", ALLOWED), ("CC-BY-4.0", ALLOWED), ("none", ALLOWED),
    ("CC-BY-NC-SA-4.0", NOT_ALLOWED), ("CC-BY-NC-4.0", NOT_ALLOWED),
    ("LBNL BSD-style", CHECK), ("unknown", UNKNOWN),
    (None, UNKNOWN), ("", UNKNOWN)])
def test_commercial_use_is_decided_by_one_table(licence, verdict):
    assert commercial_use(licence) == verdict


def test_recommend_answers_a_licence_constraint_on_the_official_results(official_store):
    root = str(official_store.root)
    catalog = load_models()
    a = answer("--store", root, "--licence-allows", "commercial")
    report = answer_of("report", "--store", root, "--regime", "full", "--resamples", "0")
    allowed = {m for m, meta in catalog.items()
               if commercial_use(meta.weights_licence) == ALLOWED
               and commercial_use(meta.code_licence) == ALLOWED}
    ranked = sorted(report["aggregates"], key=lambda r: -r["macro"])
    assert a["picks"][0]["model"] == next(r["model"] for r in ranked if r["model"] in allowed)
    assert {p["model"] for p in a["picks"]} <= allowed
    out = {x["model"]: x["reasons"] for x in a["excluded"] if x["kind"] == "constraint"}
    assert not set(out) & allowed
    assert {r["model"] for r in report["aggregates"]} - allowed <= set(out)
    assert out["nucleotide-transformer-2.5b-multi-species"] == [
        "weights licence CC-BY-NC-SA-4.0 does not permit commercial use"]
    assert out["GenomeOcean-4B"] == [
        "weights licence LBNL BSD-style: check the terms",
        "code licence LBNL BSD-style: check the terms"]
    assert out["GROVER"] == ["weights licence unknown"]       # its code is transformers'
    assert out["DNABERT-S"] == ["weights licence unknown", "code licence unknown"]
    assert a["question"]["constraints"]["commercial"] is True

    mit = answer("--store", root, "--licence", "MIT")
    only_mit = {m for m, meta in catalog.items()
                if {meta.weights_licence, meta.code_licence} == {"MIT"}}
    assert "GENERator-eukaryote-3b-base" in only_mit
    assert mit["picks"][0]["model"] == next(r["model"] for r in ranked
                                            if r["model"] in only_mit)
    assert {p["model"] for p in mit["picks"]} <= only_mit
    reasons = {x["model"]: x["reasons"] for x in mit["excluded"] if x["kind"] == "constraint"}
    assert reasons["METAGENE-1"] == ["weights licence Apache-2.0 not in MIT",
                                     "code licence Apache-2.0 not in MIT"]


def test_a_licence_list_that_names_nothing_is_one_line(official_store, capsys):
    from engine.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["recommend", "--store", str(official_store.root), "--licence", " , "])
    assert exit_.value.code == 2
    assert "names no licence; give SPDX ids such as MIT,Apache-2.0" in capsys.readouterr().err


def test_export_csv_has_each_models_licences_escaped_like_every_store_text(
        mine, tmp_path):  # noqa: F811
    """The hand-set store of test_recommend (its own copy here); the user's entry for DNABERT-S
    gives it a licence that reads as a formula."""
    import csv

    from engine.cli import main

    root, _ = mine
    (root / "models.toml").write_text(
        '[[model]]\nmodel_id = "DNABERT-S"\nhub_id = "zhihan1996/DNABERT-S"\n'
        'commit_reason = "a test"\nweights_licence = "=HYPERLINK(1)"\n'
        'code_licence = "=HYPERLINK(1)"\n')
    out = tmp_path / "x.csv"
    assert main(["export", "--store", str(root), "--csv", str(out), "--suite", "mine"]) == 0
    rows = list(csv.DictReader(out.open()))
    licence = {r["model"]: r["licence"] for r in rows}
    assert licence == {"METAGENE-1": "Apache-2.0", "GROVER": "weights unknown, code Apache-2.0",
                       "MutBERT": "MIT", "DNABERT-S": "'=HYPERLINK(1)",
                       "kmer-3": "weights none, code Apache-2.0"}
    assert list(rows[0])[-7:] == ["licence", "display", "suite", "domain", "task_health",
                                  "table_version", "filters"]


def test_a_store_registered_before_the_licences_shows_the_catalogs(tmp_path):
    """A store's model catalog written before the commit and licence fields (its rows lack
    the columns) reads them from the catalog's entries: the site's model facts and the
    dashboard's Licence column have them."""
    import polars as pl

    from engine.site.data import _models
    from store.paths import StorePaths
    from store.tables.catalogs import CATALOG_FACTS, models_with_builtins, register_models

    paths = StorePaths(tmp_path / "store")
    catalog = load_models()
    register_models(paths, [catalog["METAGENE-1"], catalog["GROVER"]])
    file = paths.catalog_table("models")
    pl.read_parquet(file).drop(*CATALOG_FACTS).write_parquet(file)
    frame = models_with_builtins(paths).filter(pl.col("model_id") == "METAGENE-1")
    assert frame.row(0, named=True)["licence"] == "Apache-2.0"
    assert frame.row(0, named=True)["commit"] == catalog["METAGENE-1"].commit
    [site] = _models([("GROVER", "official")], models_with_builtins(paths))
    assert (site["weights_licence"], site["code_licence"]) == ("unknown", "Apache-2.0")
    assert site["commit"] is None and "5e45af8" in site["commit_reason"]


def test_the_dashboards_table_shows_each_models_licence(official_store):
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot, build_view

    view = build_view(StoreSnapshot.load(official_store), Filters())
    assert [c.label for c in view.columns][-1] == "Licence"
    licence = {r.model: r.meta["licence"] for r in view.rows}
    assert licence["nucleotide-transformer-2.5b-multi-species"] == \
        "weights CC-BY-NC-SA-4.0, code Apache-2.0"
    assert licence["PlantCaduceus_l32"] == "Apache-2.0"


def test_the_dashboards_recommend_form_asks_the_commercial_constraint(official_store):
    """The Recommend view's Commercial use box asks what `--licence-allows commercial` asks:
    the same leader, the same licence reasons."""
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot
    from geneb_tui.core.recommend import Form, question
    from geneb_tui.core.recommend import answer as view_answer

    snap = StoreSnapshot.load(official_store)
    filters = snap.filters_for(Filters(), opening=True)
    a = view_answer(snap, question(snap, filters, Form(commercial=True)))
    command = answer("--store", str(official_store.root), "--licence-allows", "commercial")
    assert a.picks[0].model == command["picks"][0]["model"] == "GENERator-eukaryote-3b-base"
    reasons = {x.model: list(x.reasons) for x in a.excluded if x.kind == "constraint"}
    assert reasons == {x["model"]: x["reasons"] for x in command["excluded"]
                       if x["kind"] == "constraint"}
