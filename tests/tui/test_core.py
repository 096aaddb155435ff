"""The UI-free core: filters, the fill protocol."""

from __future__ import annotations

import pytest

from geneb_tui.core.fill import fill_command, parse_line
from geneb_tui.core.filters import Filters
from store.catalog import params_text, parse_params


def test_params_parse_and_format():
    assert parse_params("50M") == 50_000_000
    assert parse_params("1.5b") == 1_500_000_000
    assert parse_params("2e8") == 200_000_000
    assert parse_params(" ") is None
    with pytest.raises(ValueError):
        parse_params("lots")
    assert params_text(117_000_000) == "117M" and params_text(2_500_000_000) == "2.5B"
    assert params_text(None) == "n/a"   # no count (store.catalog.param_count)


def test_filters_describe_and_clear():
    f = Filters(regime="10shot", metric="acc", architecture_family="Mamba", scale_band="custom",
                params_min=10**8, search="nt", suite="geneb-mini")
    text = f.describe()
    for part in ("regime 10shot", "metric Acc", "arch Mamba", "params 100M–∞", "search “nt”"):
        assert part in text
    assert f.cleared() == Filters(suite="geneb-mini") and f.cleared().is_default


def test_fill_events_and_command(tmp_path):
    plan = parse_line('{"event": "plan", "cells_total": 3, "cells_missing": 2}')
    assert plan.kind == "plan" and plan.total == 2
    cell = parse_line('{"event":"cell","model":"kmer-3","task":"t","regime":"full",'
                      '"done":1,"total":2,"eta_s":0.5}')
    assert (cell.kind, cell.done, cell.total) == ("cell", 1, 2)
    assert parse_line("warning: something").kind == "log"
    cmd = fill_command(tmp_path, "geneb-mini", ["kmer-3"], ["mini_promoter_tata"], ["full"],
                       python="py")
    assert cmd == ["py", "-m", "engine.cli", "fill", "--store", str(tmp_path), "--suite",
                   "geneb-mini", "--json", "--models", "kmer-3", "--tasks",
                   "mini_promoter_tata", "--regimes", "full"]


@pytest.mark.parametrize("kind", ["mini", "official", "mixed", "one_task"])
def test_the_dashboard_opens_on_the_suite_the_commands_take(kind, store_of_kind):
    """One rule (`store.vocab.suites.store_suite`): the suite the dashboard opens on is the
    one `report` and the other reading commands take when given no --suite (the mixed store:
    geneb-v1 among geneb-v1 and geneb-mini)."""
    import argparse

    from engine.commands.common import reading_suite
    from geneb_tui.core.query import StoreSnapshot
    from store.db import Snapshot

    paths = store_of_kind(kind)
    opened = StoreSnapshot.load(paths).filters_for(Filters(), opening=True).suite
    args = argparse.Namespace(suite=None, data_dir=None, subsample=None, reference=None,
                              command="report")
    suite, _ = reading_suite(args, Snapshot(paths), None)
    assert opened == suite.name == {"mini": "geneb-mini"}.get(kind, "geneb-v1")


def test_the_suite_rule_takes_geneb_v1_among_several_and_asks_without_it():
    from store.vocab.suites import SuiteChoice, store_suite

    assert store_suite(["geneb-mini", "geneb-v1"]) == ("geneb-v1", SuiteChoice.PREFERRED)
    assert store_suite(["geneb-mini", "tiny"]) == (None, SuiteChoice.SEVERAL)   # commands ask
    assert store_suite([]) == ("geneb-v1", SuiteChoice.DEFAULT)
