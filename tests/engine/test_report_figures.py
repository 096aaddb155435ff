"""`geneb-engine report --figures DIR`: every figure of the official store drawn as SVG and PNG,
`figures.json` holding exactly the values `report --json` prints, the same store giving the
same bytes, a model id drawn literally, and a DIR that cannot be written refused in one line."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from engine.cli import main
from engine.figures import FIGURES, FORMATS, cd_groups
from store.paths import resolve_store
from store.tables.catalogs import models_with_builtins
from store.tables.results import append_rows
from tests.engine.in_process import outputs, refused
from tests.store.local_rows import local_rows

RESAMPLES = "30"
# A model id matplotlib would read as mathtext (and fail on: `\notacommand`), with markup.
MATHY = r"$\notacommand{x}^2$ <b>&amp;"


def _figures(store, out) -> tuple[dict, dict, str]:
    """(`report --json`, `figures.json`, stderr) of one run with `--figures out`."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main(["report", "--store", str(store), "--json", "--resamples", RESAMPLES,
                   "--figures", str(out)])
    assert rc == 0, stderr.getvalue()
    return (json.loads(stdout.getvalue()),
            json.loads((out / "figures.json").read_text(encoding="utf-8")), stderr.getvalue())


@pytest.fixture(scope="module")
def drawn(official_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("figures") / "new" / "figures"   # created, parents too
    rep, figs, err = _figures(official_store.root, out)
    return out, rep, figs, err


def test_every_figure_is_written(drawn):
    out, _, figs, err = drawn
    assert sorted(figs) == sorted(FIGURES)
    assert err == f"figures: 5 of 5 in {out} (SVG and PNG), their values in figures.json\n"
    for name in FIGURES:
        svg = ET.parse(out / f"{name}.svg").getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        png = (out / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000, name


def _where(rows: list[dict], **equal) -> list[dict]:
    return [r for r in rows if all(r[k] == v for k, v in equal.items())]


def test_figure_data_is_the_reports(drawn, official_store):
    _, rep, figs, _ = drawn
    assert figs["rank_shift"] == {f"rank_shift_full_{r}": rep[f"rank_shift_full_{r}"]
                                  for r in ("10shot", "1shot")}
    assert figs["degradation"] == {"degradation_summary": rep["degradation_summary"]}
    assert figs["scale"]["rho"] == _where(rep["scale_rho_intervals"], scope="macro")
    assert figs["scale"]["rho"][0]["low"] < figs["scale"]["rho"][0]["high"]
    params = dict(zip(*models_with_builtins(official_store).select("model_id", "params"),
                      strict=True))
    assert {(p["model"], p["source"]): (p["params"], p["macro"])
            for p in figs["scale"]["points"]} == \
        {(r["model"], r["source"]): (params[r["model"]], r["macro"])
         for r in rep["aggregates"] if (params.get(r["model"]) or 0) > 0}
    assert len(figs["scale"]["points"]) == 40
    cd = figs["critical_difference"]
    assert [cd["rank_test"]] == _where(rep["rank_tests"], regime="full", scope="all")
    assert cd["average_ranks"] == sorted(_where(rep["average_ranks"], regime="full",
                                                scope="all"), key=lambda r: r["average_rank"])
    assert figs["controlled_pairs"] == {
        "controlled_pairs": rep["controlled_pairs"],
        "intervals": _where(rep["controlled_pair_intervals"], scope="macro")}
    assert len(figs["controlled_pairs"]["intervals"]) == len(rep["controlled_pairs"]) == 102


def test_cd_groups_are_the_maximal_runs_within_the_cd(drawn):
    assert cd_groups([1.0, 2.0, 4.0, 7.0], 2.5) == [[0, 1], [1, 2]]
    assert cd_groups([1.0, 2.0, 3.0], 5.0) == [[0, 2]]
    assert cd_groups([1.0, 4.0], 3.0) == []          # a difference of the CD is significant
    cd = drawn[2]["critical_difference"]
    ranks = [r["average_rank"] for r in cd["average_ranks"]]
    width = cd["rank_test"]["critical_difference"]
    assert cd["groups"]
    for first, last in cd["groups"]:
        assert ranks[last] - ranks[first] < width
        assert last + 1 == len(ranks) or ranks[last + 1] - ranks[first] >= width


def test_the_same_store_gives_the_same_bytes(drawn, official_store, tmp_path):
    out = drawn[0]
    _figures(official_store.root, tmp_path)
    for name in FIGURES:
        for fmt in FORMATS:
            assert (tmp_path / f"{name}.{fmt}").read_bytes() == \
                (out / f"{name}.{fmt}").read_bytes(), (name, fmt)


def _svg_text(path) -> list[str]:
    return ["".join(e.itertext()) for e in ET.parse(path).getroot().iter()
            if e.tag == "{http://www.w3.org/2000/svg}text"]


def test_a_model_id_is_drawn_literally(official_store, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(official_store.root, store)
    append_rows(resolve_store(store), local_rows(MATHY))
    out = tmp_path / "figures"
    _, figs, _ = _figures(store, out)
    assert MATHY in [r["model"] for r in figs["rank_shift"]["rank_shift_full_1shot"]]
    for name in ("rank_shift", "critical_difference"):
        assert any(f"{MATHY} (local)" in t for t in _svg_text(out / f"{name}.svg")), name


def test_an_empty_analysis_is_said_and_not_written(official_store, tmp_path, capsys):
    (tmp_path / "critical_difference.svg").write_text("stale")   # a previous run's
    rc, out, err = outputs(capsys, "report", "--store", str(official_store.root),
                           "--resamples", "0", "--figures", str(tmp_path))
    assert rc == 0, err
    assert ("figures: critical_difference not written: the critical-difference diagram (no "
            "rank tests: --resamples 0, or no entry with every task)") in out
    assert not (tmp_path / "critical_difference.svg").exists()
    figs = json.loads((tmp_path / "figures.json").read_text(encoding="utf-8"))
    assert sorted(figs) == sorted(set(FIGURES) - {"critical_difference"})
    assert figs["controlled_pairs"]["intervals"] == []


@pytest.mark.parametrize("where", ["file", "under-file", "unwritable"])
def test_a_dir_that_cannot_be_written_is_refused(official_store, tmp_path, capsys, where):
    (tmp_path / "file").write_text("x")
    target = {"file": tmp_path / "file", "under-file": tmp_path / "file" / "figs",
              "unwritable": tmp_path / "dir"}[where]
    if where == "unwritable":
        (target / "figures.json").mkdir(parents=True)   # where the data file goes: a folder
    refused(capsys, official_store.root, "report", "--store", str(official_store.root),
            "--resamples", "0", "--figures", str(target), names=("--figures", str(target)))


def test_figures_and_domain_are_refused(official_store, tmp_path, capsys):
    refused(capsys, official_store.root, "report", "--store", str(official_store.root),
            "--domain", "in", "--figures", str(tmp_path), names=("--figures", "--domain"))


def test_figures_without_matplotlib_are_refused(official_store, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    refused(capsys, official_store.root, "report", "--store", str(official_store.root),
            "--figures", str(tmp_path), names=("--figures", "matplotlib", "figures"))
    assert not any(tmp_path.iterdir())
