"""One model's parameter count reads the same on every surface that shows it: the command line
(`models`, `recommend`, the cluster placement's line), the figures' scale axis and the
dashboard (its table, its filter line). Before one formatter, SpliceBERT 1024nt's 19,710,474 was
19.7M on the command line, 20M in the dashboard and 19.7105M on a figure's axis."""

from __future__ import annotations

from matplotlib.figure import Figure

from engine import figures
from engine.cli import main
from engine.cluster.placement import gpus_for
from geneb_tui.core.filters import Filters
from geneb_tui.core.table_view import Column, Row, TableView
from store.catalog import load_models

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
