"""Every option that takes a folder says what is wrong with the path given: no such folder
(and where a relative path points), or a file where a folder should be; one line, exit 2, the
store as it was (`store.folders`)."""

from __future__ import annotations

import pytest

from tests.engine.conftest import write_task
from tests.engine.in_process import refused


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The working folder: a task file `task.csv`, a suite folder `suite/`, an empty store
    `store/`, no `nope/`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "store").mkdir()
    write_task(tmp_path / "task.csv", 20, 10, 2, 1, length=30)
    (tmp_path / "suite").mkdir()
    write_task(tmp_path / "suite" / "task.csv", 20, 10, 2, 1, length=30)
    return tmp_path


FILL = ("fill", "--suite", "suite", "--models", "kmer-3")
NO_FOLDER = "no such folder ({here}/nope)"
A_FILE = "is a file, not a folder"


@pytest.mark.parametrize("argv, says", [
    (("fill", "--suite", "suite", "--models", "./nope"),
     ("--models ./nope: " + NO_FOLDER, "save_pretrained")),
    (("fill", "--suite", "suite", "--models", "./task.csv"),
     ("--models ./task.csv: " + A_FILE, "save_pretrained")),
    (("fill", "--suite", "task.csv", "--models", "kmer-3"),
     ("--suite task.csv: " + A_FILE, "a single task file goes in a folder of its own")),
    (("fill", "--suite", "./nope", "--models", "kmer-3"), ("--suite ./nope: " + NO_FOLDER,)),
    (("tasks", "--suite", "task.csv"), ("--suite task.csv: " + A_FILE,)),
    (("fill", "--models", "kmer-3", "--data-dir", "./nope"),
     ("--data-dir ./nope: " + NO_FOLDER, "data download")),
    (("fill", "--models", "kmer-3", "--data-dir", "task.csv"), ("--data-dir task.csv: " + A_FILE,)),
    (("data", "verify", "--data-dir", "./nope"), ("--data-dir ./nope: " + NO_FOLDER,)),
    (("data", "where", "--data-dir", "task.csv"), ("--data-dir task.csv: " + A_FILE,)),
    (("leaderboard", "-o", "task.csv"), ("-o task.csv: " + A_FILE,)),
    (("leaderboard", "-o", "task.csv/out"),
     ("-o task.csv/out: cannot be created, {here}/task.csv is a file",)),
    (("export", "--submission", "kmer-3", "-o", "task.csv/kmer-3.json"),
     ("-o task.csv/kmer-3.json: its folder task.csv " + A_FILE,)),
])
def test_a_folder_option_names_what_is_wrong_with_the_path(here, capsys, argv, says):
    store = here / "store"
    refused(capsys, store, *argv, "--store", str(store),
            names=tuple(s.format(here=here) for s in says))


def test_the_data_folder_of_the_environment_is_named_as_such(here, capsys, monkeypatch):
    monkeypatch.setenv("GENEB_DATA_DIR", "task.csv")
    store = here / "store"
    refused(capsys, store, "fill", "--models", "kmer-3", "--store", str(store),
            names=("$GENEB_DATA_DIR task.csv: " + A_FILE,))


@pytest.mark.parametrize("data_dir, says", [
    ("task.csv", "--data-dir task.csv: " + A_FILE),
    ("task.csv/sub", "--data-dir task.csv/sub: cannot be created, {here}/task.csv is a file")])
def test_download_into_a_file_is_refused_before_the_hub_is_asked(here, capsys, undecided_hub,
                                                                 listener, data_dir, says):
    store = here / "store"
    refused(capsys, store, "data", "download", "--data-dir", data_dir, "--store", str(store),
            names=(says.format(here=here),))
    assert listener.connections == 0
