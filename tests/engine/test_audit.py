"""`geneb-engine audit`: the shortcut probes (the geneb-v1 probe on length, GC, composition) on
generated tasks with a planted shortcut, and geneb-mini audited end to end by the CLI."""

from __future__ import annotations

import csv
import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef

from engine.audit import shortcut_mccs
from engine.cli import main
from engine.mini import TASKS
from store.audit.features import shortcut_features
from store.audit.report import audit_task
from store.audit.verdict import CLEAN, SHORTCUT, health
from store.paths import resolve_store
from store.tables.catalogs import register_tasks
from store.tables.results import append_rows
from store.vocab.protocol import GENEB_V1, SEEDS
from tests.engine.site_build import build_site, site_document
from tests.helpers import digest

RNG = np.random.default_rng(3535)


def seqs(n: int, length: int, gc: float = 0.5) -> list[str]:
    p = [(1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2]
    return ["".join(RNG.choice(list("ACGT"), length, p=p)) for _ in range(n)]


def task(kind: str) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """300 train and 100 test rows, label = row % 2: class 1 is shorter (`length`), GC-rich
    (`gc`), or like class 0 (`clean`)."""
    def split(n):
        y = np.arange(n) % 2
        if kind == "length":
            return [seqs(1, 300 if c else 400)[0] for c in y], y
        if kind == "gc":
            return [seqs(1, 400, 0.65 if c else 0.35)[0] for c in y], y
        return seqs(n, 400), y
    return (*split(300), *split(100))


def test_features_by_hand():
    f = shortcut_features(["AACG", "gcNN"])
    assert f["length"].ravel().tolist() == [4, 4]
    assert f["gc"].ravel().tolist() == pytest.approx([0.5, 1.0])
    comp = f["composition"]
    assert comp[0, :4].tolist() == pytest.approx([0.5, 0.25, 0.25, 0])     # A C G T
    # AA, AC, CG of 3 pairs; GC of 1 (the Ns break the rest)
    assert comp[0, 4:][[0, 1, 6]].tolist() == pytest.approx([1 / 3] * 3)
    assert comp[1, 4:][9] == 1.0 and comp[1, 4:].sum() == 1.0


def test_the_probe_is_the_geneb_v1_fit():
    train, y_train, test, y_test = task("gc")
    x_train, x_test = shortcut_features(train), shortcut_features(test)
    direct = LogisticRegression(max_iter=1000, random_state=13).fit(x_train["gc"], y_train)
    assert shortcut_mccs(train, y_train, test, y_test)["gc"] == \
        matthews_corrcoef(y_test, direct.predict(x_test["gc"]))


@pytest.mark.parametrize(("kind", "verdict", "feature"), [
    ("length", SHORTCUT, "length"), ("gc", SHORTCUT, "gc"), ("clean", CLEAN, None)])
def test_planted_shortcuts_are_found(kind, verdict, feature):
    train, y_train, test, y_test = task(kind)
    mccs = shortcut_mccs(train, y_train, test, y_test)
    audit, _, _ = audit_task("t", "h", train, y_train, test, y_test, mccs)
    h = health(audit)
    assert h.verdict == verdict
    if feature is not None:
        assert h.shortcut == feature and h.shortcut_mcc >= 0.9
    else:
        assert max(mccs.values()) < 0.3
    if kind == "length":
        assert mccs["length"] == 1.0
    if kind == "gc":
        assert mccs["length"] == 0.0        # one length: the probe predicts one class


# geneb-mini's verdicts on a new store (docs/guide/audit.md): its generators plant composition
# signals in these four tasks strong enough for the composition probe alone to reach MCC 0.5
# (after `geneb-engine demo` the k-mer results add a fifth: tests/engine/test_demo.py).
MINI_SHORTCUTS = {"mini_methyl_cpg", "mini_lncrna_mrna", "mini_species_4way",
                  "mini_regulatory_utr"}


def _audit(*argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["audit", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def mini_audit(tmp_path_factory) -> tuple[Path, dict]:
    """geneb-mini audited once on a new store: (the store, the audit's --json). Read-only: a
    test copies the store (`_copy`) before it changes anything."""
    store = tmp_path_factory.mktemp("mini-audit") / "store"
    return store, _audit("--store", str(store), "--suite", "geneb-mini")


def _copy(store: Path, folder: Path) -> Path:
    shutil.copytree(store, folder / "s")
    return folder / "s"


def test_geneb_mini_end_to_end(mini_audit, tmp_path, capsys):
    store, doc = str(_copy(mini_audit[0], tmp_path)), mini_audit[1]
    verdicts = {t["task"]: t["verdict"] for t in doc["tasks"]}
    assert len(verdicts) == 13 and len(doc["measured"]) == 13
    assert {t for t, v in verdicts.items() if v != CLEAN} == MINI_SHORTCUTS
    assert all(verdicts[t] == SHORTCUT for t in MINI_SHORTCUTS)
    assert all(t["exact"]["across"] == 0 and t["near"]["test_rows"] == 0 for t in doc["tasks"])
    assert doc["shared"] == []
    again = _audit("--store", store, "--suite", "geneb-mini", "--tasks", "mini_methyl_cpg")
    assert again["measured"] == [] and again["tasks"][0]["verdict"] == SHORTCUT
    refreshed = _audit("--store", store, "--suite", "geneb-mini", "--tasks", "mini_methyl_cpg",
                       "--refresh")
    assert refreshed["measured"] == ["mini_methyl_cpg"]
    assert refreshed["tasks"] == again["tasks"]
    capsys.readouterr()
    assert main(["audit", "--store", store, "--suite", "geneb-mini"]) == 0
    text = capsys.readouterr().out
    assert "mini_methyl_cpg" in text and "shortcut" in text and "13 task(s) reused" in text


def _flat(folder, rows) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.csv").write_text("text,label,split\n" + "".join(
        f"{s},{y},{sp}\n" for s, y, sp in rows))


def test_leaks_shared_across_tasks_of_a_folder(tmp_path):
    suite = tmp_path / "suite"
    train, y_train, test, y_test = task("clean")
    test[0] = train[0]
    rows = [(s, y, "train") for s, y in zip(train, y_train, strict=True)] + \
           [(s, y, "test") for s, y in zip(test, y_test, strict=True)]
    _flat(suite, rows)
    other = seqs(300, 400)
    (suite / "b.csv").write_text("text,label,split\n" + "".join(
        f"{s},{i % 2},{'train' if i < 200 else 'test'}\n"
        for i, s in enumerate(test[1:4] + other[3:]))) 
    doc = _audit("--store", str(tmp_path / "s"), "--suite", str(suite))
    by_task = {t["task"]: t for t in doc["tasks"]}
    assert by_task["a"]["exact"]["across"] == 1 and by_task["a"]["leak_share"] == 0.01
    assert by_task["a"]["verdict"] == "leaky"
    assert doc["shared"] == [{"task": "a", "other": "b", "shared": 3}]


@pytest.mark.parametrize(("argv", "message"), [
    (("--suite", "geneb-mini", "--tasks", "mini_methyl"),
     "did you mean mini_methyl_cpg"),
    (("--suite", "{missing}",), "no such folder"),
    (("--suite", "{bad}",), "label 'x' is not an integer"),
])
def test_bad_input_is_one_line_and_leaves_the_store(mini_audit, tmp_path, capsys, argv,
                                                    message):
    store = _copy(mini_audit[0], tmp_path)      # a store holding audits
    bad = tmp_path / "bad"         # task a reads (and would be measured), task b cannot
    _flat(bad, [(s, i % 2, sp) for sp, n in (("train", 20), ("test", 10))
                for i, s in enumerate(seqs(n, 50))])
    (bad / "b.csv").write_text("text,label,split\nACGT,x,train\nACGA,1,test\n")
    before = digest(store)
    capsys.readouterr()
    argv = [a.format(missing=tmp_path / "nope", bad=bad) for a in argv]
    assert main(["audit", "--store", str(store), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("geneb-engine audit: ")
    assert message in err
    assert digest(store) == before


# Report: model "wide" scores 1.0 on the four flagged geneb-mini tasks and 0.65 on the others,
# "even" 0.7 everywhere: with the flagged tasks "wide" leads (micro (4 + 9 * 0.65) / 13 =
# 0.758), without them "even" does (0.7 against 0.65). 0.7 keeps the clean tasks clean: their
# best shortcut (0.48) is below 80% of it.
def _mcc(model: str, task: str) -> float:
    return 0.7 if model == "even" else 1.0 if task in MINI_SHORTCUTS else 0.65


@pytest.fixture(scope="module")
def audited_mini(mini_audit, tmp_path_factory):
    store, doc = _copy(mini_audit[0], tmp_path_factory.mktemp("audited")), mini_audit[1]
    hashes = {t["task"]: t["data_hash"] for t in doc["tasks"]}
    paths = resolve_store(store)
    register_tasks(paths, TASKS, hashes)
    append_rows(paths, [{"model": model, "task": t.task_id, "regime": "full", "seed": seed,
                         "probe": "logreg", "protocol": GENEB_V1.name,
                         "protocol_hash": GENEB_V1.hash, "mcc": _mcc(model, t.task_id),
                         "acc": 0.7, "f1_macro": 0.6, "source": "local", "shared_fit": True,
                         "data_hash": hashes[t.task_id]}
                        for model in ("wide", "even") for t in TASKS for seed in SEEDS])
    return store


def _report(store, *argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["report", "--store", str(store), "--suite", "geneb-mini", "--resamples",
                     "0", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


def test_report_task_health_and_exclude_flagged(audited_mini, capsys):
    whole = _report(audited_mini)
    health = {r["task"]: r for r in whole["task_health"]}
    assert {t for t, r in health.items() if r["verdict"] != CLEAN} == MINI_SHORTCUTS
    assert health["mini_methyl_cpg"]["best_model_mcc"] == 1.0
    assert health["mini_phage_host"]["shortcut_share"] == pytest.approx(
        health["mini_phage_host"]["shortcut_mcc"] / 0.7)
    assert whole["excluded_flagged"] == []
    micro = {r["model"]: r["micro"] for r in whole["aggregates"]}
    assert micro == pytest.approx({"wide": (4 + 9 * 0.65) / 13, "even": 0.7})
    kept = _report(audited_mini, "--exclude-flagged")
    assert sorted(kept["excluded_flagged"]) == sorted(MINI_SHORTCUTS)
    assert len(kept["tasks"]) == 9
    micro = {r["model"]: r["micro"] for r in kept["aggregates"]}
    assert micro == pytest.approx({"wide": 0.65, "even": 0.7})
    capsys.readouterr()
    assert main(["report", "--store", str(audited_mini), "--suite", "geneb-mini",
                 "--resamples", "0", "--exclude-flagged"]) == 0
    out = capsys.readouterr().out
    assert "--exclude-flagged: left out 4 flagged task(s): " in out
    assert "Task health: 4 of 13 audited task(s) flagged (0 not audited)" in out


def test_exclude_flagged_needs_an_audit(tmp_path, capsys):
    (tmp_path / "s").mkdir()
    assert main(["report", "--store", str(tmp_path / "s"), "--suite", "geneb-mini",
                 "--exclude-flagged"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("geneb-engine report: --exclude-flagged: no task of suite geneb-mini has "
                   "been audited; run `geneb-engine audit --suite geneb-mini` first")


def test_export_csv_has_each_task_s_verdict(audited_mini, tmp_path):
    out = tmp_path / "x.csv"
    assert main(["export", "--store", str(audited_mini), "--suite", "geneb-mini", "--csv",
                 str(out)]) == 0
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 13
    assert {r["task"]: r["task_health"] for r in rows} == {
        t.task_id: SHORTCUT if t.task_id in MINI_SHORTCUTS else CLEAN for t in TASKS}


def test_the_site_shows_each_audited_tasks_verdict(audited_mini, tmp_path):
    out = tmp_path / "site"
    build_site(audited_mini, out, "--suite", "geneb-mini", "--resamples", "0")
    shown = {t["id"]: t["health"] for t in site_document(out)["tasks"]}
    assert {t for t, v in shown.items() if v != CLEAN} == MINI_SHORTCUTS
    assert all(shown[t] == SHORTCUT for t in MINI_SHORTCUTS) and len(shown) == 13
