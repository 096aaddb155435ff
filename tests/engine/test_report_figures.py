"""`geneb-engine report --figures DIR`: every figure of the official store drawn as SVG and PNG,
`figures.json` holding exactly the values `report --json` prints, the same store giving the
same bytes, a model id drawn literally, and a DIR that cannot be written refused in one line."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from engine.cli import main
from engine.figures import FIGURES, FORMATS, OPTIONAL, cd_groups
from store.output_folder import MARKER
from store.paths import resolve_store
from store.tables.catalogs import models_with_builtins
from store.tables.results import append_rows
from tests.engine.in_process import outputs, refused
from tests.engine.site_build import REFUSED_PLACES, fill_the_disk, refused_place
from tests.helpers import digest
from tests.store.local_rows import local_rows

RESAMPLES = "30"
# A model id matplotlib would read as mathtext (and fail on: `\notacommand`), with markup.
MATHY = r"$\notacommand{x}^2$ <b>&amp;"


def _figures(store, out, resamples: str = RESAMPLES) -> tuple[dict, dict, str]:
    """(`report --json`, `figures.json`, stderr) of one run with `--figures out`."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main(["report", "--store", str(store), "--json", "--resamples", resamples,
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
    assert sorted(figs) == sorted(set(FIGURES) - set(OPTIONAL))   # and no line on those
    assert err == f"figures: 5 of 5 in {out} (SVG and PNG), their values in figures.json\n"
    for name in figs:
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
    for name in drawn[2]:
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
    cd = figs["critical_difference"]
    assert len(cd["average_ranks"]) == 41
    labels = _rank_labels(cd)
    assert list(labels)[-2:] == ["35", "41"]        # not 40 beside 41
    assert all(a.x1 < b.x0 for a, b in itertools.pairwise(labels.values())), \
        "the rank axis's labels overlap"


def _rank_labels(data: dict) -> dict:
    """The CD diagram's rank axis labels, left to right: text -> its box as drawn."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from engine.figures import STYLE, figure

    with matplotlib.rc_context(STYLE):
        canvas = FigureCanvasAgg(figure("critical_difference", data))
        canvas.draw()
        ax = canvas.figure.axes[0]
        ticks = [t for t in ax.texts if t.get_position()[1] == 0.5]    # above the axis
        boxes = sorted(((t.get_window_extent(canvas.get_renderer()), t.get_text())
                        for t in ticks), key=lambda b: b[0].x0)
    return {text: box for box, text in boxes}


def test_an_empty_analysis_is_said_and_not_written(official_store, small_stores, tmp_path,
                                                   capsys):
    _figures(small_stores["three"], tmp_path)        # a previous run's, with its CD diagram
    assert (tmp_path / "critical_difference.svg").exists()
    rc, out, err = outputs(capsys, "report", "--store", str(official_store.root),
                           "--resamples", "0", "--figures", str(tmp_path))
    assert rc == 0, err
    assert ("figures: critical_difference not written: the critical-difference diagram (no "
            "rank tests: --resamples 0, no entry with every task, or too few tasks to decide: "
            "fewer than 5)") in out
    assert not (tmp_path / "critical_difference.svg").exists()
    figs = json.loads((tmp_path / "figures.json").read_text(encoding="utf-8"))
    assert sorted(figs) == sorted(set(FIGURES) - {"critical_difference", *OPTIONAL})
    assert figs["controlled_pairs"]["intervals"] == []


def test_one_model_has_no_scale_figure(small_stores, tmp_path, capsys):
    """Spearman's rho of one point is undefined (`store.analyses.scale`: NULL below 3 models):
    the figure is not drawn, the report says why, figures.json leaves it out; a previous
    run's scale figure is removed, the user's own figure beside it kept."""
    _figures(small_stores["three"], tmp_path, resamples="0")
    assert (tmp_path / "scale.png").exists()
    (tmp_path / "notes.png").write_bytes(b"\x89PNG my own")
    rc, out, err = outputs(capsys, "report", "--store", str(small_stores["one"]),
                           "--resamples", "0", "--figures", str(tmp_path))
    assert rc == 0, err
    assert ("figures: scale not written: the scale analysis (fewer than 3 entries with a known "
            "parameter count: nothing to correlate)") in out
    assert "scale" not in json.loads((tmp_path / "figures.json").read_text(encoding="utf-8"))
    assert not (tmp_path / "scale.png").exists() and not (tmp_path / "scale.svg").exists()
    assert (tmp_path / "notes.png").read_bytes() == b"\x89PNG my own"


def test_the_users_files_are_kept_or_the_run_refused(small_stores, tmp_path, capsys):
    """A folder of the user's: a figure's name taken by one of their files (a figures.json, a
    scale.png) refused, naming it, nothing written; their files beside the figures kept, a
    scale.png of theirs too when no scale figure is drawn."""
    (tmp_path / "paper.tex").write_text("\\includegraphics{scale.png}")
    (tmp_path / "figures.json").write_text('{"mine": true}')
    (tmp_path / "scale.png").write_bytes(b"my own scale figure")
    before = digest(tmp_path)
    refused(capsys, small_stores["three"], "report", "--store", str(small_stores["three"]),
            "--figures", str(tmp_path), "--resamples", "0",
            names=(f"--figures {tmp_path}: figures.json, scale.png are not what geneb-engine "
                   "report --figures wrote there", "nothing was written"))
    assert digest(tmp_path) == before
    (tmp_path / "figures.json").unlink()
    _, figs, _ = _figures(small_stores["one"], tmp_path, resamples="0")    # no scale figure
    assert "scale" not in figs
    assert (tmp_path / "paper.tex").read_text() == "\\includegraphics{scale.png}"
    assert (tmp_path / "scale.png").read_bytes() == b"my own scale figure"
    marker = json.loads((tmp_path / MARKER).read_text(encoding="utf-8"))
    assert sorted(marker["files"]) == sorted(
        ["figures.json", *(f"{n}.{f}" for n in figs for f in FORMATS)])


def test_figures_of_the_version_before_the_marker_are_replaced(small_stores, tmp_path, capsys):
    """2dfd362 wrote no marker: its figures.json names the figures it drew; their files are
    taken as its own, any other file kept."""
    _figures(small_stores["three"], tmp_path, resamples="0")
    (tmp_path / MARKER).unlink()
    (tmp_path / "notes.png").write_bytes(b"mine")
    rc, _, err = outputs(capsys, "report", "--store", str(small_stores["one"]),
                         "--resamples", "0", "--figures", str(tmp_path))
    assert rc == 0, err
    assert not (tmp_path / "scale.png").exists()
    assert (tmp_path / "notes.png").read_bytes() == b"mine"


@pytest.mark.parametrize("where", REFUSED_PLACES)
def test_a_folder_that_is_not_for_figures_is_refused(small_stores, tmp_path, capsys,
                                                      monkeypatch, where):
    refused_place(capsys, monkeypatch, tmp_path, small_stores["one"], where, "report",
                  "--resamples", "0", "--figures")


@pytest.mark.parametrize("failure", ["full-disk", "folder-in-the-way"])
def test_a_failed_figure_write_leaves_the_previous_output(small_stores, tmp_path, capsys,
                                                          monkeypatch, failure):
    """The third file cannot be written (the disk is full), or a figure's name is now a
    folder of the user's: the previous run's figures all stay as they were."""
    _figures(small_stores["three"], tmp_path, resamples="0")
    if failure == "folder-in-the-way":
        (tmp_path / "scale.svg").unlink()
        (tmp_path / "scale.svg").mkdir()
        says = "scale.svg is not what geneb-engine report --figures wrote there"
    else:
        fill_the_disk(monkeypatch, at=3)
        says = "cannot write (No space left on device); the previous output is as it was"
    before = digest(tmp_path)
    refused(capsys, small_stores["four"], "report", "--store", str(small_stores["four"]),
            "--resamples", "0", "--figures", str(tmp_path), names=(f"--figures {tmp_path}: ",
                                                                   says))
    assert digest(tmp_path) == before            # no temporary file left either


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
