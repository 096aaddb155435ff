"""A model given by its checkpoint folder is first-class: its id is the documented rule
(`engine.registry.PATH_MODEL_ID`), the store remembers the folder (its model catalog), so that
`fill --models ID` runs it afterwards, `status` suggests a command that works, `models` lists it
and the dashboard's missing-evaluations screen offers it as runnable."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402

import pytest  # noqa: E402

from engine.cli import build_parser, main  # noqa: E402
from engine.registry import PATH_MODEL_ID, path_model_id  # noqa: E402
from store.catalog import ModelMeta, load_models  # noqa: E402
from store.db import query  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.in_process import run  # noqa: E402
from tests.engine.tiny_models import build  # noqa: E402


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """A store where `fill --models <folder>` ran a tiny BERT (save_pretrained) on one task,
    regime full; a second suite it has no results on."""
    root = tmp_path_factory.mktemp("path-models")
    checkpoint = build("bert", root / "checkpoints" / "my-tiny-bert", max_len=64)
    suites = {}
    for name, seed in (("one", 1), ("other", 2)):
        suites[name] = root / name
        suites[name].mkdir()
        write_task(suites[name] / f"{name}_task.csv", 24, 12, 2, seed, length=30)
    store = root / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suites["one"]), "--models",
                 str(checkpoint), "--regimes", "full"]) == 0
    return {"store": store, "checkpoint": checkpoint, "suites": suites}


def local_models(store) -> list[str]:
    return sorted(query(StorePaths(store), "SELECT DISTINCT model FROM results")["model"])


def test_the_folder_runs_under_its_name_and_the_id_names_it_afterwards(ran, capsys):
    assert local_models(ran["store"]) == ["my-tiny-bert"]
    rc, err = run(capsys, "fill", "--store", str(ran["store"]), "--suite",
                  str(ran["suites"]["one"]), "--models", "my-tiny-bert", "--regimes", "1shot")
    assert rc == 0, err
    rows = query(StorePaths(ran["store"]),
                 "SELECT regime, count(*) AS n FROM results GROUP BY regime ORDER BY regime")
    assert rows.rows() == [("1shot", 5), ("full", 5)]


def test_status_names_the_id_and_the_command_it_suggests_runs(ran, capsys):
    other = str(ran["suites"]["other"])
    capsys.readouterr()
    assert main(["status", "--store", str(ran["store"]), "--suite", other, "--models",
                 "my-tiny-bert", "--regimes", "full"]) == 0
    out = capsys.readouterr().out
    suggested = re.search(r"`(geneb-engine fill [^`]*)`", out.replace("\n", ""))
    assert suggested, out
    argv = shlex.split(suggested[1])[1:]
    assert argv == ["fill", "--suite", other, "--models", "my-tiny-bert", "--regimes", "full"]
    rc, err = run(capsys, *argv, "--store", str(ran["store"]))
    assert rc == 0, err
    assert query(StorePaths(ran["store"]), "SELECT count(*) AS n FROM results WHERE task = "
                 "'other_task'")["n"][0] == 5


def test_models_lists_the_folder_by_its_id(ran, capsys):
    capsys.readouterr()
    assert main(["models", "--store", str(ran["store"]), "--search", "my-tiny", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(m["model_id"], m["path"]) for m in listed] == [
        ("my-tiny-bert", str(ran["checkpoint"].resolve()))]


def test_the_dashboard_offers_the_folder_as_runnable(ran):
    from geneb_tui.core import view_cache
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot

    snap = StoreSnapshot.load(StorePaths(ran["store"]))
    data = view_cache.missing_view(snap, Filters(suite="geneb-v1"), ("full",), "cpu")
    assert "my-tiny-bert" in data.candidates
    assessed = data.assessed["my-tiny-bert"]
    assert assessed.runnable, assessed.why
    assert assessed.spec == "my-tiny-bert"


def test_fill_help_says_models_may_be_folders_and_which_id_they_get():
    fill = build_parser()._subparsers._group_actions[0].choices["fill"]
    text = " ".join(fill.format_help().split())
    assert "checkpoint folders (written by save_pretrained)" in text
    assert " ".join(PATH_MODEL_ID.split()) in text


def test_the_id_of_a_folder_whose_name_is_taken(tmp_path):
    catalog = load_models()                         # the built-in catalog holds kmer-3
    mine = (tmp_path / "runs" / "kmer-3").resolve()
    assert path_model_id(mine, catalog) == "runs-kmer-3"
    first = (tmp_path / "a" / "bert").resolve()
    catalog["bert"] = ModelMeta.one_off("bert", path=str(first))
    assert path_model_id(first, catalog) == "bert"          # the same folder keeps its id
    second = (tmp_path / "b" / "bert").resolve()
    assert path_model_id(second, catalog) == "b-bert"
    catalog["b-bert"] = ModelMeta.one_off("b-bert", path=str(tmp_path / "elsewhere"))
    with pytest.raises(GenebError, match=r"would be bert or b-bert, and other models have both"):
        path_model_id(second, catalog)
