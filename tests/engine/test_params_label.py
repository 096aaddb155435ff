"""One model's parameter count reads the same on every surface that shows it: the command line
(`models`, `recommend`, the cluster placement's line), the figures' scale axis and the
dashboard (its table, its filter line). Before one formatter, SpliceBERT 1024nt's 19,710,474 was
19.7M on the command line, 20M in the dashboard and 19.7105M on a figure's axis. And a count a
user types is read one way (`store.catalog.parse_params`) by `recommend --max-params`, the
dashboard's scale range and its Recommend form: before, the command line refused '1,000,000'
and '1G' that the dashboard took."""

from __future__ import annotations

import argparse

import pytest
from matplotlib.figure import Figure

from engine import figures
from engine.cli import main
from engine.cluster.placement import gpus_for
from engine.commands.recommend import param_limit
from geneb_tui.core.filters import Filters, parse_bounds
from geneb_tui.core.recommend import parse_field
from geneb_tui.core.table_view import Column, Row, TableView
from store.catalog import load_models, params_text, parse_params

MODEL = "splicebert-1024nt"
SHOWN = "19.7M"


def test_every_surface_writes_a_models_parameter_count_alike(capsys):
    meta = load_models()[MODEL]
    count = meta.params
    assert count == 19_710_474
    assert main(["models", "--search", MODEL]) == 0
    assert f" {SHOWN} " in capsys.readouterr().out

    fig = Figure()
    figures._scale(fig, {"points": [{"params": count, "macro": 0.5, "source": "local"}],
                        "rho": []})
    assert fig.axes[0].xaxis.get_major_formatter()(count) == SHOWN

    column = Column("params", "Params", "meta")
    view = TableView(Filters(), (column,), [Row(MODEL, "local", {"params": count})], "params",
                     True, 1)
    assert view.cell_text(view.rows[0], column) == SHOWN
    assert Filters(scale_band="custom", params_min=count).describe_model_filters() == (
        f"params {SHOWN}–∞")

    _, why = gpus_for(meta, cluster_gpus=1, gpus_per_model=None)
    assert why.startswith(f"{SHOWN} parameters (< 100M): ")


@pytest.mark.parametrize("text, count", [
    ("50M", 50_000_000), ("1.5b", 1_500_000_000), ("19.7M", 19_700_000), ("1G", 10 ** 9),
    ("2e8", 200_000_000), ("500000000", 500_000_000), ("1,000,000", 10 ** 6),
    ("250_000", 250_000), (" 3k ", 3_000), ("0.1234567M", 123_457)])
def test_every_surface_reads_a_typed_parameter_count_alike(text, count):
    assert parse_params(text) == count
    assert param_limit(text) == count                          # recommend --max-params
    assert parse_field("max_params", text) == count            # the Recommend form
    assert parse_bounds(text, "") == (count, None)             # the filter dialog's range


@pytest.mark.parametrize("text", ["lots", "M", "1.5Q", "-1M", "nan", "inf", "1e400"])
def test_every_surface_refuses_what_is_not_a_parameter_count(text):
    with pytest.raises(ValueError):
        parse_params(text)
    with pytest.raises(argparse.ArgumentTypeError, match="is not a parameter count"):
        param_limit(text)
    with pytest.raises(ValueError, match="Max params: .* is not a parameter count"):
        parse_field("max_params", text)
    with pytest.raises(ValueError, match="Params from: .* is not a parameter count"):
        parse_bounds(text, "")


def test_a_shown_parameter_count_reads_back_as_itself():
    """What `params_text` shows of each catalog model, typed back, is that count to its three
    significant digits (a filter at a shown count keeps the model shown)."""
    for meta in load_models().values():
        if meta.params:
            shown = params_text(meta.params)
            assert params_text(parse_params(shown)) == shown
            assert abs(parse_params(shown) - meta.params) <= 0.005 * meta.params, meta.model_id
