"""Score against context in `report --figures` and the static site (issue 45): a store where
two models each hold three context policies (`fill --context-lengths`) draws the curve figure
and puts the curve in the site's data, with the values `report --json` prints as
`context_curve`; a store without it has neither (tests/engine/test_report_figures.py,
test_site.py)."""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET

import pytest

from engine.cli import main
from engine.figures import FORMATS, draw
from tests.engine.conftest import write_task

RESAMPLES = "100"
MODELS = ("kmer-3", "kmer-4")
# A model id matplotlib would read as mathtext (and fail on), with markup.
MATHY = r"$\notacommand{x}^2$ <b>&amp;"


def _engine(*argv: str) -> str:
    """stdout of `geneb-engine argv` run in this process (exit status 0 asserted)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    assert rc == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Two k-mer models at lengths 10 and 20 and their own limit on three tasks of one
    category (macro has intervals): `report --json --figures`, and the site's document."""
    root = tmp_path_factory.mktemp("context-figures")
    suite = root / "suite"
    suite.mkdir()
    for i in range(3):
        write_task(suite / f"task_{i}.csv", 30, 12, 2, i, length=40)
    (suite / "manifest.csv").write_text(
        "task_id,category\n" + "".join(f"task_{i},Promoters\n" for i in range(3)))
    store = ("--store", str(root / "store"))
    fill = ("fill", *store, "--suite", str(suite), "--models", *MODELS, "--regimes", "full",
            "--json")
    _engine(*fill)
    _engine(*fill, "--context-lengths", "10", "20")
    figures, site = root / "figures", root / "site"
    rep = json.loads(_engine("report", *store, "--suite", str(suite), "--resamples", RESAMPLES,
                             "--json", "--figures", str(figures)))
    _engine("site", *store, "--suite", str(suite), "--resamples", RESAMPLES, "-o", str(site))
    return rep, figures, json.loads((site / "site.json").read_text(encoding="utf-8"))


def test_the_report_has_the_curve_of_both_models(swept):
    rep = swept[0]
    assert [(c["model"], c["context"]) for c in rep["context_curve"]] == [
        (m, c) for m in MODELS for c in ("crop-left-10", "crop-left-20", "crop")]


def test_the_figure_draws_each_model_at_each_context(swept):
    rep, folder, _ = swept
    figs = json.loads((folder / "figures.json").read_text(encoding="utf-8"))
    assert figs["context_curve"] == {"context_curve": rep["context_curve"]}
    assert set(figs) == {"context_curve"}      # full regime only, 3 tasks, no params
    for fmt in FORMATS:
        assert (folder / f"context_curve.{fmt}").stat().st_size > 1000
    svg = ET.parse(folder / "context_curve.svg").getroot()
    text = {"".join(e.itertext()) for e in svg.iter() if e.tag.endswith("}text")}
    assert {*MODELS, "10 (left)", "20 (left)", "own limit", "Score against context"} <= text
    # a series per model: the errorbar lines' (x, y) are the curve's values in the figure
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from engine.figures import STYLE, figure

    with matplotlib.rc_context(STYLE):
        ax = FigureCanvasAgg(figure("context_curve", figs["context_curve"])).figure.axes[0]
    for i, model in enumerate(MODELS):
        assert ax.containers[i].get_label() == model
        points = [c["value"] for c in rep["context_curve"] if c["model"] == model]
        assert list(ax.containers[i].lines[0].get_ydata()) == pytest.approx(points)


def test_the_site_holds_the_reports_curve(swept):
    rep, _, doc = swept
    assert {m: list(c) for m, c in doc["context_curve"].items()} == {   # every metric, one
        m: ["full"] for m in doc["metrics"]}                             # regime filled
    columns = ["model", "entry", *doc["context_columns"]]
    rows = [dict(zip(columns, r, strict=True)) for r in doc["context_curve"]["mcc"]["full"]]
    for row, want in zip(rows, rep["context_curve"], strict=True):
        entry = doc["entries"][row["entry"]]
        assert doc["models"][entry["model"]]["id"] == want["entry"]
        assert row["model"] == want["model"] and row["context"] == want["context"]
        assert row["context_length"] == want["context_length"]
        for k in ("value", "low", "high"):
            assert row[k] == pytest.approx(want[k], abs=1e-12), (row, k)
    assert len(rows) == len(rep["context_curve"])


def test_a_model_id_is_drawn_literally(swept):
    rows = [r | {"model": MATHY} for r in swept[0]["context_curve"] if r["model"] == MODELS[0]]
    svg = draw("context_curve", {"context_curve": rows})["svg"]
    text = ["".join(e.itertext()) for e in ET.fromstring(svg).iter() if e.tag.endswith("}text")]
    assert MATHY in text
