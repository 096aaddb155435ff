"""Score against context in `report --figures` and the static site (issue 45): a store where
two models each hold three context policies (`fill --context-lengths`) on a suite of two
categories draws the curve figure (macro) and the per-category one (a panel per category) and
puts the curves in the site's data, with the values `report --json` prints as `context_curve`;
a store without it has neither (tests/engine/test_report_figures.py, test_site.py)."""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET

import pytest

from engine.cli import main
from engine.figures import FORMATS, draw
from tests.engine.conftest import CONTEXT_CATEGORIES, CONTEXT_MODELS, CONTEXT_RESAMPLES

MODELS = CONTEXT_MODELS
CONTEXTS = ("crop-left-10", "crop-left-20", "crop")
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
def swept(context_sweep, tmp_path_factory):
    """The context sweep's (tests/engine/conftest.py) `report --json --figures`, the figures'
    folder and its site's document."""
    store, suite, site = context_sweep
    figures = tmp_path_factory.mktemp("context-figures") / "figures"
    rep = json.loads(_engine("report", "--store", str(store), "--suite", str(suite),
                             "--resamples", CONTEXT_RESAMPLES, "--json", "--figures",
                             str(figures)))
    return rep, figures, json.loads((site / "site.json").read_text(encoding="utf-8"))


def _svg_text(path) -> set[str]:
    svg = ET.parse(path).getroot()
    return {"".join(e.itertext()) for e in svg.iter() if e.tag.endswith("}text")}


def test_the_report_has_the_curve_of_both_models_at_macro_then_each_category(swept):
    rep = swept[0]
    assert [(c["scope"], c["model"], c["context"]) for c in rep["context_curve"]] == [
        (s, m, c) for s in ("macro", *CONTEXT_CATEGORIES) for m in MODELS for c in CONTEXTS]
    for c in rep["context_curve"]:                  # two tasks a category: every interval
        assert c["low"] <= c["value"] <= c["high"], c


def test_the_text_report_has_a_table_per_scope_with_the_json_values(swept, context_sweep,
                                                                      monkeypatch):
    """`report`'s section: the macro table, then one row per category and point, the category
    shown literally (its Rich markup escaped), the values `--json` prints."""
    store, suite, _ = context_sweep
    monkeypatch.delenv("COLUMNS", raising=False)          # not a terminal: 200 columns
    text = _engine("report", "--store", str(store), "--suite", str(suite), "--resamples",
                   CONTEXT_RESAMPLES)
    macro, categories = text.split("Score against context")[1:]
    assert categories.startswith(" per category (full, mcc, 95 % task-bootstrap interval")
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in categories.splitlines()
            if line.startswith("│")]
    assert rows == [[c["scope"], c["model"], c["context"], str(c["context_length"] or "—"),
                     *(f"{c[k]:.3f}" for k in ("value", "low", "high"))]
                    for c in swept[0]["context_curve"][6:]]
    assert sum(line.startswith("│") for line in macro.splitlines()) == 6


def _axes(figs: dict, name: str):
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from engine.figures import STYLE, figure

    with matplotlib.rc_context(STYLE):
        return FigureCanvasAgg(figure(name, figs[name])).figure.axes


def _series(ax, rows: list[dict]) -> None:
    """A series per model on `ax`: the errorbar lines' (x, y) are the rows' values."""
    for i, model in enumerate(MODELS):
        assert ax.containers[i].get_label() == model
        points = [c["value"] for c in rows if c["model"] == model]
        assert list(ax.containers[i].lines[0].get_ydata()) == pytest.approx(points)


def test_the_figures_draw_each_model_at_each_context_macro_and_per_category(swept):
    rep, folder, _ = swept
    figs = json.loads((folder / "figures.json").read_text(encoding="utf-8"))
    macro = [c for c in rep["context_curve"] if c["scope"] == "macro"]
    assert figs["context_curve"] == {"context_curve": macro}
    assert figs["context_curve_categories"] == {"context_curve": rep["context_curve"][6:]}
    assert set(figs) == {"context_curve", "context_curve_categories"}   # full only, 4 tasks
    for name in figs:
        for fmt in FORMATS:
            assert (folder / f"{name}.{fmt}").stat().st_size > 1000
    assert {*MODELS, "10 (left)", "20 (left)", "own limit", "Score against context"} <= \
        _svg_text(folder / "context_curve.svg")
    assert {*MODELS, *CONTEXT_CATEGORIES, "own limit", "Score against context per category"} \
        <= _svg_text(folder / "context_curve_categories.svg")    # the category drawn literally
    (ax,) = _axes(figs, "context_curve")
    _series(ax, macro)
    panels = _axes(figs, "context_curve_categories")
    assert [ax.get_title() for ax in panels if ax.get_visible()] == list(CONTEXT_CATEGORIES)
    for ax, category in zip(panels, CONTEXT_CATEGORIES, strict=False):
        _series(ax, [c for c in rep["context_curve"] if c["scope"] == category])


def test_the_site_holds_the_reports_curve(swept):
    rep, _, doc = swept
    assert {m: list(c) for m, c in doc["context_curve"].items()} == {   # every metric, one
        m: ["full"] for m in doc["metrics"]}                             # regime filled
    columns = ["model", "entry", *doc["context_columns"]]
    rows = [dict(zip(columns, r, strict=True)) for r in doc["context_curve"]["mcc"]["full"]]
    for row, want in zip(rows, rep["context_curve"], strict=True):
        entry = doc["entries"][row["entry"]]
        assert doc["models"][entry["model"]]["id"] == want["entry"]
        assert (row["scope"], row["model"], row["context"]) == (
            want["scope"], want["model"], want["context"])
        assert row["context_length"] == want["context_length"]
        for k in ("value", "low", "high"):
            assert row[k] == pytest.approx(want[k], abs=1e-12), (row, k)
    assert len(rows) == len(rep["context_curve"])


def test_a_model_id_is_drawn_literally(swept):
    rows = [r | {"model": MATHY} for r in swept[0]["context_curve"]
            if r["model"] == MODELS[0] and r["scope"] == "macro"]
    svg = draw("context_curve", {"context_curve": rows})["svg"]
    text = ["".join(e.itertext()) for e in ET.fromstring(svg).iter() if e.tag.endswith("}text")]
    assert MATHY in text
