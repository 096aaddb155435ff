"""Every command on every kind of store, and the layout of its tables.

Stores (built once for the module): empty, geneb-mini only, official only, mixed (official,
local geneb-v1, local on a task folder), one model only, one task only, two suites without
geneb-v1 (geneb-mini and a task folder). Every command exits 0
or its documented 1 (report: nothing to report; doctor: problems) or 2 (export --submission of
incomplete results), never with a traceback, and its tables fit 80 and 100 columns without
cutting an id. The report at 80 and 100 columns is compared with the text snapshots in
`__snapshots__/` (rewrite them with GENEB_UPDATE_SNAPSHOTS=1 after a deliberate change).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from rich.cells import cell_len
from rich.console import Console

from engine.cli import main
from engine.commands.layout import Col, FitTable
from tests.engine.conftest import write_task
from tests.store.local_rows import local_rows, local_store

SNAPSHOTS = Path(__file__).parent / "__snapshots__"
BOX = set("│┃━─┏┗┡└")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = main(list(argv))
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def stores(tmp_path_factory, official_store):
    """kind -> (store, suite)."""
    root = tmp_path_factory.mktemp("stores")
    tiny, one = root / "tiny", root / "one"
    tiny.mkdir()
    one.mkdir()
    write_task(tiny / "bin_task.csv", 120, 60, 2, 1)
    write_task(tiny / "tri_task.csv", 150, 60, 3, 2)
    (tiny / "manifest.csv").write_text(
        "task_id,category,label\nbin_task,Promoters,Binary\ntri_task,Enhancers,Three\n")
    write_task(one / "solo_task.csv", 120, 60, 2, 3)

    def fill(store, suite, *models):
        assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", *models,
                     "--regimes", "full"]) == 0

    fill(root / "mini", "geneb-mini", "kmer-3")
    shutil.copytree(official_store.root, root / "official")
    shutil.copytree(official_store.root, root / "mixed")
    local_store(root / "mixed", "GROVER", local_rows("GROVER"))
    fill(root / "mixed", tiny, "kmer-3", "kmer-4")
    local_store(root / "one-model", "GROVER", local_rows("GROVER"))
    fill(root / "one-task", one, "kmer-3")
    shutil.copytree(root / "mini", root / "two-suites")      # geneb-mini and tiny, no geneb-v1
    fill(root / "two-suites", tiny, "kmer-3")
    (root / "empty").mkdir()      # a store folder never written (a missing one is warned of)
    return {"empty": (root / "empty", "geneb-v1"), "mini": (root / "mini", "geneb-mini"),
            "official": (root / "official", "geneb-v1"), "mixed": (root / "mixed", "geneb-v1"),
            "one-model": (root / "one-model", "geneb-v1"),
            "one-task": (root / "one-task", str(one)),
            "two-suites": (root / "two-suites", "geneb-mini")}


KINDS = ("empty", "mini", "official", "mixed", "one-model", "one-task")
# (command, allowed exit statuses); SUITE and OUT are filled in per store
COMMANDS = [
    (("status", "--suite", "SUITE"), {0}),
    (("status", "--suite", "SUITE", "--source", "official", "--models", "GROVER"), {0}),
    (("export", "--suite", "SUITE", "--csv", "OUT/x.csv"), {0}),
    (("export", "--suite", "SUITE", "--csv", "OUT/x.csv", "--per-seed", "--regimes", "full"),
     {0}),
    (("export", "--submission", "GROVER", "-o", "OUT"), {0, 2}),
    (("report", "--suite", "SUITE"), {0, 1}),
    (("report", "--suite", "SUITE", "--regime", "10shot", "--metric", "acc"), {0, 1}),
    (("report", "--suite", "SUITE", "--regime", "1shot", "--metric", "f1_macro"), {0, 1}),
    (("report", "--suite", "SUITE", "--source", "local"), {0, 1}),
    (("report", "--suite", "SUITE", "--source", "official"), {0, 1}),
    (("tasks", "--suite", "SUITE"), {0}),
    (("recommend", "--suite", "SUITE"), {0}),
    (("recommend", "--suite", "SUITE", "--labels-per-class", "1", "--max-params", "1B"), {0}),
    (("models",), {0}),
    (("doctor",), {0, 1}),
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_command_on_every_kind_of_store(stores, kind, tmp_path, capsys, monkeypatch):
    store, suite = stores[kind]
    monkeypatch.setenv("COLUMNS", "80")
    for argv, allowed in COMMANDS:
        argv = [a.replace("SUITE", suite).replace("OUT", str(tmp_path)) for a in argv]
        if argv[0] == "report":   # every interval drawn and shown, from fewer resamples than
            argv += ["--resamples", "100"]   # the default (test_report_on_the_official_store's)
        rc, out, err = run(capsys, *argv, "--store", str(store))
        what = f"{kind}: {' '.join(argv)}"
        assert rc in allowed, f"{what}: exit {rc}\n{err}"
        assert "Traceback" not in err + out, what
        wide = [line for line in out.splitlines() if cell_len(line) > 80 and BOX & set(line)]
        assert not wide, f"{what}: table lines wider than 80 columns:\n" + "\n".join(wide)
        if rc == 0:
            assert out.strip(), what
        elif argv[0] != "doctor":
            assert err.startswith(("geneb-engine ", "no ")), f"{what}: {err}"
            if argv[0] == "report":
                assert len(err.splitlines()) == 1 and "geneb-engine " in err, what
        if argv[0] == "report" and rc == 0:
            assert "Aggregates (" in out and "Category leaders" in out, what
        if argv[0] == "export" and "--csv" in argv:
            header = (tmp_path / "x.csv").read_text().splitlines()[0].split(",")
            assert header[:2] == ["model", "task"] and header[-6:] == [
                "display", "suite", "domain", "task_health", "table_version", "filters"], what
        json_argv = [*argv, "--json"]
        if argv[0] in ("status", "report", "tasks", "models", "doctor", "recommend"):
            rc_json, out_json, err_json = run(capsys, *json_argv, "--store", str(store))
            assert rc_json in allowed | {0} and "Traceback" not in err_json, what
            json.loads(out_json)


def test_what_each_kind_of_store_says(stores, tmp_path, capsys, monkeypatch):
    """The documented outcomes, and a reason wherever a result comes out empty."""
    monkeypatch.setenv("COLUMNS", "100")
    empty, mini = stores["empty"][0], stores["mini"][0]
    rc, out, _ = run(capsys, "status", "--store", str(empty))
    assert rc == 0 and "no local results for suite geneb-v1" in out
    rc, out, _ = run(capsys, "export", "--store", str(empty), "--csv", str(tmp_path / "e.csv"))
    assert rc == 0 and "header only" in out and "holds no results" in out
    rc, _, err = run(capsys, "report", "--store", str(empty))
    assert rc == 1 and "no results for protocol geneb-v1" in err

    # geneb-mini only: its only suite is the default; no 10shot results at all
    rc, _, err = run(capsys, "report", "--store", str(mini), "--suite", "geneb-v1")
    assert rc == 1 and "on the tasks of geneb-mini" in err and "--suite geneb-mini" in err
    rc, _, err = run(capsys, "report", "--store", str(mini), "--suite", "geneb-mini",
                     "--regime", "10shot")
    assert rc == 1 and "no 10shot results" in err and "--regime full" in err
    rc, out, _ = run(capsys, "status", "--store", str(mini), "--suite", "geneb-mini",
                     "--models", "kmer-3", "kmer-6", "--regimes", "full")
    assert rc == 0 and "13/13" in out
    assert ("no local results of kmer-6 on suite geneb-mini" in out
            and "geneb-engine fill --suite geneb-mini --models kmer-6 --regimes full" in out)
    rc, out, _ = run(capsys, "export", "--store", str(mini), "--csv", str(tmp_path / "k.csv"),
                     "--models", "kmer-6")
    assert rc == 0 and "no results of model kmer-6" in out and "fill --models kmer-6" in out
    rc, out, _ = run(capsys, "export", "--store", str(mini), "--csv", str(tmp_path / "k.csv"),
                     "--models", "kmer-3", "--sources", "official")
    assert rc == 0 and "no results of source official" in out and "import --official" in out
    rc, out, _ = run(capsys, "models", "--architecture", "Hyena", "--scale", ">1B")
    assert rc == 0 and "no model of the" in out and "--architecture 'Hyena'" in out

    # official only: GROVER's submission needs local results
    rc, _, err = run(capsys, "export", "--store", str(stores["official"][0]),
                     "--submission", "GROVER", "-o", str(tmp_path))
    assert rc == 2 and "GROVER: no local results" in err
    # mixed: both sources side by side, names never cut
    rc, out, _ = run(capsys, "report", "--store", str(stores["mixed"][0]), "--suite", "geneb-v1")
    assert rc == 0 and "GENERator-eukaryote-1.2b (official)" in out and "GROVER (local)" in out
    assert "…" not in out
    # one model: GROVER's 300 local cells are complete, its submission is written
    rc, out, _ = run(capsys, "export", "--store", str(stores["one-model"][0]),
                     "--submission", "GROVER", "-o", str(tmp_path))
    assert rc == 0 and (tmp_path / "GROVER.json").exists()
    # one task: its own category, a report with nothing to correlate
    store, suite = stores["one-task"]
    rc, out, _ = run(capsys, "report", "--store", str(store), "--suite", suite)
    assert rc == 0 and "none: rho needs at least 3 entries" in out


def test_export_records_what_it_exports(stores, tmp_path):
    store = stores["mixed"][0]
    out = tmp_path / "x.csv"
    assert main(["export", "--store", str(store), "--suite", "geneb-v1", "--csv", str(out),
                 "--models", "GROVER",
                 "nucleotide-transformer-v2-50m-3mer-multi-species", "--regimes", "full"]) == 0
    frame = pl.read_csv(out)
    assert frame.columns[:5] == ["model", "task", "category", "regime", "source"]
    display = dict(zip(frame["model"], frame["display"], strict=True))
    assert display == {"GROVER": "GROVER",
                       "nucleotide-transformer-v2-50m-3mer-multi-species": "NT-v2-50m-3mer-MS"}
    assert set(frame["suite"]) == {"geneb-v1"} and frame["table_version"].n_unique() == 1
    assert set(frame["filters"]) == {
        "models=GROVER,nucleotide-transformer-v2-50m-3mer-multi-species; regimes=full"}
    assert frame.height == 100 * 3          # GROVER local and official, NT official


@pytest.mark.parametrize("width", [80, 100])
def test_tables_fit_and_ids_stay_whole(stores, capsys, monkeypatch, width):
    from store.catalog import geneb_v1_tasks, load_models

    monkeypatch.setenv("COLUMNS", str(width))
    store = str(stores["mixed"][0])
    for argv in (("tasks",), ("models",), ("status", "--source", "official"),
                 ("report", "--suite", "geneb-v1")):
        rc, out, _ = run(capsys, *argv, "--store", store)
        assert rc == 0
        lines = out.splitlines()
        assert all(cell_len(line) <= width for line in lines if BOX & set(line)), argv
        assert "…" not in out, argv
        if argv[0] in ("tasks", "models", "status"):
            ids = ([t.task_id for t in geneb_v1_tasks()] if argv[0] == "tasks" else
                   [m for m in load_models() if m.startswith(("nucleotide", "caduceus"))])
            text = {word.strip("│ ") for line in lines for word in line.split("│")}
            assert all(i in text for i in ids), argv        # every id whole, on one line


def _snapshot_store(root: Path):
    """Fixed values for 4 models (2 of them also as official results) on 13 tasks, one per
    GENEB category, in 3 regimes: a report that is the same on every machine."""
    from store.catalog import CATEGORY_ORDER, TaskMeta
    from store.paths import resolve_store
    from store.tables.catalogs import register_tasks
    from store.tables.results import append_rows
    from store.vocab.protocol import GENEB_V1, REGIMES, SEEDS

    paths = resolve_store(root)
    tasks = [TaskMeta(f"snap_task_{i:02d}", f"task {i} of {c}", c, "snap", "snap")
             for i, c in enumerate(CATEGORY_ORDER)]
    register_tasks(paths, tasks)
    models = ["GROVER", "nucleotide-transformer-v2-50m-3mer-multi-species",
              "dnabert2-no-flashattention", "kmer-3"]
    rows = []
    for m, model in enumerate(models):
        for r, regime in enumerate(REGIMES):
            for t, task in enumerate(tasks):
                # rankings that differ between categories and regimes
                value = round((0.80, 0.74, 0.69, 0.55)[m] - 0.22 * r
                              + 0.05 * (((t + 1) * (m + 2) + r * m) % 5) - 0.1, 4)
                sources = ["local", "official"] if m < 2 else ["local"]
                for source in sources:
                    shift = 0.013 if source == "official" else 0.0
                    for seed in (SEEDS if source == "local" else (None,)):
                        rows.append({"model": model, "task": task.task_id, "regime": regime,
                                     "seed": seed, "probe": "logreg",
                                     "protocol": GENEB_V1.name,
                                     "protocol_hash": GENEB_V1.hash, "mcc": value + shift,
                                     "acc": (1 + value) / 2, "f1_macro": value,
                                     "source": source, "shared_fit": regime == "full"})
    append_rows(paths, rows)
    return paths, tuple(tasks)


@pytest.mark.parametrize("width", [80, 100])
def test_report_snapshot(tmp_path, width):
    from engine.commands.report_tables import Names, render
    from store.analyses.compute import compute
    from store.analyses.question import Question
    from store.tables.catalogs import models_with_builtins

    paths, tasks = _snapshot_store(tmp_path / "store")
    models = models_with_builtins(paths)
    frames = compute(paths, models, Question(regime="full", metric="mcc", tasks=tasks))
    console = Console(width=width, record=True, soft_wrap=True, file=io.StringIO(),
                      color_system=None)
    render(console, frames, Names(models, mixed=True), regime="full", metric="mcc")
    text = "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"
    assert all(cell_len(line) <= width for line in text.splitlines())
    snapshot = SNAPSHOTS / f"report_{width}.txt"
    if os.environ.get("GENEB_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(text)
    assert snapshot.exists(), f"no {snapshot}; write it with GENEB_UPDATE_SNAPSHOTS=1"
    assert text == snapshot.read_text(), (
        f"the report at {width} columns changed; if on purpose, rerun with "
        "GENEB_UPDATE_SNAPSHOTS=1 and review the diff of " + str(snapshot))


def _render(table: FitTable, width: int) -> list[str]:
    console = Console(width=width, record=True, soft_wrap=True, file=io.StringIO(),
                      color_system=None)
    console.print(table)
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_fit_table_layouts():
    long_id = "InstaDeepAI_nucleotide_transformer_downstream_tasks_revised_H3K4me1_x" * 1
    table = FitTable("t", [Col("task", key=True), Col("label", drop=2), Col("category"),
                           Col("source", drop=1)], max_drop=2)
    table.add_row("short_id", "a label", "Promoters", "NT")
    table.add_row(long_id, "another label", "Histone Mod.", "NT-rev")
    wide = _render(table, 200)
    assert any(long_id in line and "another label" in line for line in wide)
    dropped = _render(table, 100)                   # source, then label, left out
    assert any(long_id in line and "Histone Mod." in line for line in dropped)
    assert dropped[-1].startswith("left out at 100 columns: label, source")
    stacked = _render(table, 60)                    # the id alone does not fit: one entry
    assert long_id in stacked and "    another label · Histone Mod. · NT-rev" in stacked
    assert all(cell_len(line) <= 60 for line in stacked if line != long_id)

    split = FitTable("numbers", [Col("model", key=True), *(Col(f"c{i}", justify="right")
                                                           for i in range(12))],
                     compact=True, split=True)
    split.add_row("GENERator-eukaryote-1.2b (official)", *(f"0.{i:03d}" for i in range(12)))
    blocks = _render(split, 80)
    assert sum("GENERator-eukaryote-1.2b (official)" in line for line in blocks) == 2
    assert all(cell_len(line) <= 80 for line in blocks)
    empty = FitTable("nothing", [Col("a")], empty="no pair differs in one attribute")
    assert _render(empty, 80) == ["nothing", "none: no pair differs in one attribute"]


def test_a_reading_command_takes_the_stores_only_suite_and_says_so(stores, tmp_path, capsys):
    """report, status and export with no --suite on a store whose results are all on
    geneb-mini: that suite, named in their header and in --json."""
    mini = str(stores["mini"][0])
    chosen = "suite geneb-mini: the store's only suite with"
    rc, out, _ = run(capsys, "report", "--store", mini)
    assert rc == 0 and out.startswith(chosen) and "3-mer spectrum" in out
    rc, out, _ = run(capsys, "report", "--store", mini, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["suite"] == "geneb-mini" and doc["suite_chosen"].startswith(chosen)
    assert {r["model"] for r in doc["aggregates"]} == {"kmer-3"}
    rc, out, _ = run(capsys, "status", "--store", mini)
    assert rc == 0 and out.startswith(chosen + " local results") and "13/39" in out
    rc, out, _ = run(capsys, "export", "--store", mini, "--csv", str(tmp_path / "m.csv"))
    assert rc == 0 and "13 rows of suite geneb-mini" in out and chosen in out
    assert set(pl.read_csv(tmp_path / "m.csv")["suite"]) == {"geneb-mini"}


def test_a_store_with_results_on_several_suites_without_geneb_v1_asks_which(stores, tmp_path,
                                                                           capsys):
    """Results on geneb-mini and on the folder suite `tiny`: each reading command asks,
    naming both, and writes nothing."""
    two = str(stores["two-suites"][0])
    for argv in (("report",), ("status",), ("export", "--csv", str(tmp_path / "x.csv")),
                 ("recommend",)):
        rc, _, err = run(capsys, *argv, "--store", two)
        assert rc == 2, argv
        assert err == (f"geneb-engine {argv[0]}: the store {Path(two).resolve()} has "
                       f"{'local results' if argv[0] == 'status' else 'results'} on 2 suites "
                       "(geneb-mini, tiny); give --suite geneb-mini or --suite tiny\n"), argv
    assert not (tmp_path / "x.csv").exists()


def test_with_geneb_v1_among_several_suites_every_reading_command_takes_it_and_says_so_first(
        stores, tmp_path, capsys):
    """The mixed store has results on geneb-v1 and on the folder suite `tiny`: report,
    export, recommend and site take geneb-v1, as the dashboard opens it, and their first line
    says so and how to name the other; status reads local results, on both suites too."""
    mixed = str(stores["mixed"][0])
    first = "suite geneb-v1 (the store also has results on tiny: --suite tiny)"
    for argv in (("report", "--resamples", "0"), ("export", "--csv", str(tmp_path / "x.csv")),
                 ("recommend", "--resamples", "100"),
                 ("site", "-o", str(tmp_path / "site"), "--resamples", "10"),
                 ("status",)):
        rc, out, _ = run(capsys, *argv, "--store", mixed)
        line = first.replace("results", "local results") if argv[0] == "status" else first
        assert rc == 0 and out.splitlines()[0] == line, (argv, out[:300])
    rc, out, _ = run(capsys, "report", "--store", mixed, "--resamples", "0", "--json")
    assert json.loads(out)["suite"] == "geneb-v1" and json.loads(out)["suite_chosen"] == first
    # one source narrows it to one suite: the official results are all on geneb-v1
    rc, out, _ = run(capsys, "report", "--store", mixed, "--source", "official")
    assert rc == 0 and out.startswith("suite geneb-v1: the store's only suite with official")


def test_names_of_another_suite_of_the_store_are_one_line_naming_it(stores, tmp_path, capsys):
    """Tasks of a suite other than the one a command reads (taken by the rule or given), and
    models whose results are all on another suite, are one line naming that suite, exit 2."""
    mixed = str(stores["mixed"][0])
    rc, _, err = run(capsys, "report", "--store", mixed, "--tasks", "bin_task")
    assert rc == 2 and err == ("geneb-engine report: --tasks: bin_task is a task of tiny, not "
                               "geneb-v1: add --suite tiny\n")
    rc, _, err = run(capsys, "status", "--store", mixed, "--suite", "geneb-v1", "--tasks",
                     "bin_task", "tri_task")
    assert rc == 2 and err == ("geneb-engine status: --tasks: bin_task, tri_task are tasks of "
                               "tiny, not geneb-v1: give --suite tiny\n")
    rc, _, err = run(capsys, "export", "--store", mixed, "--csv", str(tmp_path / "x.csv"),
                     "--models", "kmer-4")
    assert rc == 2 and err == ("geneb-engine export: --models: kmer-4 has results only on "
                               "tiny, not geneb-v1: add --suite tiny\n")
    assert not (tmp_path / "x.csv").exists()
    # geneb-mini's tasks, named to a command that writes (its suite is geneb-v1 by default)
    rc, _, err = run(capsys, "fill", "--store", mixed, "--models", "kmer-3", "--tasks",
                     "mini_promoter_tata")
    assert rc == 2 and err == ("geneb-engine fill: --tasks: mini_promoter_tata is a task of "
                               "geneb-mini, not geneb-v1: give --suite geneb-mini\n")
    # a name no suite holds keeps its did-you-mean
    rc, _, err = run(capsys, "report", "--store", mixed, "--tasks", "bin_tsak")
    assert rc == 2 and "unknown task 'bin_tsak' (did you mean bin_task?)" in err


def test_a_suite_the_store_knows_by_name_is_read_without_its_folder(stores, capsys):
    """The one-task store's results are on a folder suite (`one`): report and status find it
    by name, from the task catalog, and status says it used the store's data hashes."""
    store = str(stores["one-task"][0])
    rc, out, _ = run(capsys, "report", "--store", store)
    assert rc == 0 and out.startswith("suite one: the store's only suite with results")
    rc, by_name, _ = run(capsys, "report", "--store", store, "--suite", "one", "--json")
    rc_path, by_path, _ = run(capsys, "report", "--store", store, "--suite",
                              stores["one-task"][1], "--json")
    assert rc == rc_path == 0
    strip = ("suite", "suite_chosen")
    assert ({k: v for k, v in json.loads(by_name).items() if k not in strip}
            == {k: v for k, v in json.loads(by_path).items() if k not in strip})
    rc, _, err = run(capsys, "report", "--store", store, "--suite", "onee")
    assert rc == 2 and "unknown suite 'onee' (did you mean one?)" in err
    rc, out, _ = run(capsys, "status", "--store", store, "--suite", "one", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["rows"] and doc["data"].startswith("the store's current data")
    assert "not where their files are" in doc["data"]


def test_report_leaves_out_the_entries_without_results_on_its_suite(stores, capsys):
    """The mixed store's 40 official models have no result on `tiny`: report --suite tiny
    lists kmer-3 and kmer-4 only, not 40 empty rows."""
    rc, out, _ = run(capsys, "report", "--store", str(stores["mixed"][0]), "--suite", "tiny",
                     "--json")
    doc = json.loads(out)
    assert rc == 0 and {r["model"] for r in doc["aggregates"]} == {"kmer-3", "kmer-4"}


def test_a_one_task_scope_has_null_intervals_and_a_dash(stores, capsys, monkeypatch):
    """geneb-mini has one task per category: its categories and macro get no interval, rank
    interval or tie group (null in --json, a dash and a note on screen); micro (13 tasks) keeps
    its interval."""
    monkeypatch.setenv("COLUMNS", "200")
    mini = str(stores["mini"][0])
    rc, out, _ = run(capsys, "report", "--store", mini, "--json")
    doc = json.loads(out)
    scopes = {r["scope"]: r for r in doc["score_intervals"]}
    assert rc == 0 and scopes["micro"]["low"] < scopes["micro"]["value"] < scopes["micro"]["high"]
    assert all(r["low"] is None and r["high"] is None
               for s, r in scopes.items() if s != "micro")
    assert all(r["rank_low"] is None for r in doc["rank_intervals"] if r["scope"] != "micro")
    assert all(r["p_best"] is None for r in doc["leader_tie_group"])
    rc, out, _ = run(capsys, "report", "--store", mini)
    row = next(line for line in out.splitlines() if "3-mer spectrum" in line)
    micro = scopes["micro"]
    shown = f"{micro['value']:.3f} [" in row and " — " in row.replace("│", " ")
    assert shown and "— in place of an interval: a scope of one task has no interval" in out
