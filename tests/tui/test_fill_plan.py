"""The missing-evaluations plan and the remote-code trust rule, called directly (no pilot):
`geneb_tui.core.fill_plan` on a store with known missing cells and on catalog entries with and
without remote code, pinned or not."""

from __future__ import annotations

import sys

import pytest

from geneb_tui.core import fill_plan, view_cache
from geneb_tui.core.fill import FillChoices
from geneb_tui.core.filters import Filters
from store import runnable
from store.catalog import geneb_v1_tasks
from store.hf_cache import HubReach
from store.runnable import Runnability, assess
from store.tables.results import append_rows
from tests.store.local_rows import local_rows

COMMIT = "0123456789abcdef0123456789abcdef01234567"
PROMOTERS = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"]


@pytest.fixture
def hub(monkeypatch):
    """The hub answers and nothing is cached: what a hub model's assessment depends on."""
    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))
    monkeypatch.setattr(runnable, "is_cached", lambda repo, revision: False)


def head(root) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "fill", "--store", str(root), "--suite",
            "geneb-v1", "--json"]


def test_the_plan_runs_the_ticked_models_missing_cells_and_nothing_else(mixed_store, hub,
                                                                        monkeypatch):
    """mixed_store: GROVER and MutBERT (official, every cell) and kmer-3 with two seeds of the
    first three Promoters tasks (partial: missing); one more task done here in full."""
    from geneb_tui.core.query import StoreSnapshot

    monkeypatch.setattr(runnable, "package_installed", lambda package: True)

    append_rows(mixed_store, local_rows("kmer-3", PROMOTERS[3:4], ("full",), value=0.5))
    snap = StoreSnapshot.load(mixed_store)
    data = view_cache.missing_view(snap, Filters(category="Promoters"), ("full",), "cpu")
    counts = fill_plan.missing_counts(data.candidates, data.cells)
    assert counts["GROVER"] == counts["MutBERT"] == 0
    assert counts["kmer-3"] == len(PROMOTERS) - 1 == 21
    models = fill_plan.ticked(data.candidates, {"kmer-3", "GROVER", "gone"}, data.assessed)
    assert models == ["kmer-3", "GROVER"]   # the list's ("3-mer spectrum"); "gone" is no candidate
    cells = fill_plan.cells_of(data.cells, models)
    want = [t for t in PROMOTERS if t != PROMOTERS[3]]
    assert cells == [("kmer-3", t, "full") for t in want]
    suite = snap.suite_tasks("geneb-v1")["task_id"].to_list()
    run = fill_plan.plan(mixed_store.root, "geneb-v1", suite, models, cells, data.assessed,
                         FillChoices(device="cpu"), ("full",), " 16 ", "")
    assert run == fill_plan.FillPlan(
        ("kmer-3",), tuple(want), ("full",),
        (*head(mixed_store.root), "--models", "kmer-3", "--tasks", *want, "--regimes", "full",
         "--device", "cpu", "--batch-size", "16"))
    assert run.shown.startswith("geneb-engine fill --store ")


def ready(model_id: str, **kw) -> Runnability:
    return Runnability(model_id, True, **kw)


def test_the_whole_suite_is_not_listed_and_regimes_keep_the_protocol_order(tmp_path):
    assessed = {"a": ready("a"), "b": ready("b", warning="⚠ needs ≈30 GiB")}
    cells = [("a", "t2", "1shot"), ("a", "t1", "full"), ("b", "t1", "1shot")]
    run = fill_plan.plan(tmp_path, "geneb-v1", ["t1", "t2"], ["a", "b"], cells, assessed,
                         FillChoices(executor="ray", dtype="bfloat16"), ("full",), "",
                         "ray://head:10001")
    assert run.tasks == () and run.regimes == ("full", "1shot")
    assert run.command[len(head(tmp_path)):] == (
        "--models", "a", "b", "--regimes", "full", "1shot", "--dtype", "bfloat16",
        "--executor", "ray", "--address", "ray://head:10001")
    assert run.warning == "⚠ needs ≈30 GiB"


def test_a_suite_the_store_lacks_runs_whole_for_the_ticked_models(tmp_path):
    run = fill_plan.plan(tmp_path, "geneb-mini", [], ["kmer-3"], [],
                         {"kmer-3": ready("kmer-3")}, FillChoices(), ("full", "10shot"), "", "")
    assert run.command[len(head(tmp_path)) - 1:] == (
        "--json", "--models", "kmer-3", "--regimes", "full", "10shot")


@pytest.mark.parametrize(("models", "cells", "batch", "address", "why"), [
    ([], [], "", "", "Nothing to run: tick runnable models first (space, or a for all)."),
    (["a"], [], "", "", "Nothing missing for the ticked models in this selection."),
    (["a"], [("a", "t1", "full")], "0", "",
     "Batch size: batch size must be a positive whole number, not '0'"),
    (["a"], [("a", "t1", "full")], "", "head:65536",
     "Ray address: a Ray address is auto, HOST:PORT or ray://HOST:PORT, not 'head:65536'"),
])
def test_what_is_refused_says_why(tmp_path, models, cells, batch, address, why):
    choices = FillChoices(executor="ray")
    got = fill_plan.plan(tmp_path, "geneb-v1", ["t1"], models, cells, {"a": ready("a")},
                         choices, ("full",), batch, address)
    assert got == fill_plan.Refused(why)


# -- the trust rule ----------------------------------------------------------------------------
def entry(model_id: str, **kw) -> Runnability:
    meta = {"hub_id": f"org/{model_id}", "params": 50_000_000, **kw}
    return assess(meta, model_id, device="cpu", memory=None, installed=lambda p: True)


def trusted_run(tmp_path, a: Runnability, trust: bool):
    return fill_plan.plan(tmp_path, "geneb-v1", ["t1"], [a.model_id],
                          [(a.model_id, "t1", "full")], {a.model_id: a},
                          FillChoices(trust_remote_code=trust), ("full",), "", "")


def test_a_model_without_remote_code_never_waits_for_trust(tmp_path, hub):
    a = entry("plain")
    assert a.runnable and not a.remote_code
    assert fill_plan.Trust.of(["plain"], {"plain": a}, False) == fill_plan.Trust((), False)
    run = trusted_run(tmp_path, a, False)
    assert "--trust-remote-code" not in run.command and "plain" in run.command
    assert fill_plan.needs_text(a, False) == "≈191 MiB fp32"
    assert fill_plan.detail_text(a) == "≈191 MiB fp32"


@pytest.mark.parametrize(("revision", "spec", "needs"), [
    (COMMIT, f"pinned@{COMMIT}", "trusts code at 0123456789ab"),     # pinned: its commit
    (None, "pinned", "trusts code, resolves the commit at run"),      # fill resolves main's
    ("v2", "pinned", "trusts code, resolves the commit at run"),      # a tag is no commit
])
def test_remote_code_waits_for_the_toggle_then_runs_at_its_commit(tmp_path, hub, revision,
                                                                  spec, needs):
    a = entry("pinned", remote_code="required", revision=revision)
    assert a.runnable and a.remote_code and a.spec == spec
    refused = trusted_run(tmp_path, a, False)
    assert refused == fill_plan.Refused(
        "pinned run(s) Python code from the model's hub repository: press t to pass "
        "--trust-remote-code (the code runs at its pinned commit, else at the one its branch "
        "names when the run starts, then pinned for this store), or untick it.")
    assert fill_plan.needs_text(a, False) == f"{needs} · ≈191 MiB fp32 (t: off)"
    run = trusted_run(tmp_path, a, True)
    assert run.command[-5:] == ("--models", spec, "--regimes", "full", "--trust-remote-code")
    assert fill_plan.needs_text(a, True) == f"{needs} · ≈191 MiB fp32"
    assert fill_plan.detail_text(a) == (f"{needs} · ≈191 MiB fp32; runs as --models {spec} "
                                        "with --trust-remote-code")


def test_a_commit_the_store_pinned_before_still_asks_for_trust(small_store, hub):
    """A model whose code `fill --trust-remote-code` resolved before runs at the store's pin
    (the snapshot's catalog holds it as its revision), but the pin names the code, not the
    user's consent: each run still passes the flag only with the toggle."""
    from geneb_tui.core.query import StoreSnapshot

    pin = "fedcba9876543210fedcba9876543210fedcba98"
    small_store.user_models.write_text('[[model]]\nmodel_id = "remote"\nhub_id = "org/remote"\n'
                                       'params = 50000000\nremote_code = "required"\n')
    small_store.pins.write_text(f'[[pin]]\nhub_id = "org/remote"\nbranch = "main"\n'
                                f'commit = "{pin}"\n')
    snap = StoreSnapshot.load(small_store)
    a = assess(snap.catalog["remote"], "remote", device="cpu", installed=lambda p: True)
    assert a.spec == f"remote@{pin}"
    assert fill_plan.Trust.of(["remote"], {"remote": a}, False).waits
    run = trusted_run(small_store.root, a, True)
    assert run.command[-5:] == ("--models", f"remote@{pin}", "--regimes", "full",
                                "--trust-remote-code")


def test_a_model_that_cannot_run_shows_why_whatever_the_toggle(hub):
    a = entry("own", remote_code="custom")
    assert not a.runnable
    assert fill_plan.needs_text(a, False) == fill_plan.needs_text(a, True) == a.short
    assert fill_plan.ticked(["own"], {"own"}, {"own": a}) == []
