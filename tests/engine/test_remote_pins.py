"""Remote code without hunting commits: `fill --trust-remote-code` runs a hub model whose
entry names no commit at the commit its branch names (from the hub when it answers, else from
the cached snapshot's ref), says so in one line, pins it for the store (`<store>/pins.toml`), and
every later run uses the pin, asking the hub nothing, even after the branch moved.

The checkpoint is a tiny BERT whose config names its own code (`auto_map` -> tiny_remote.py, a
BertModel subclass), in huggingface_hub's cache at two commits whose code differs only in what
it writes to a marker file when it is imported: the marker says which commit's code ran. The
hub is a local server (`tests.engine.local_hub.AnsweringHub`) that lists the requests made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from engine.encoders.pins import trusted_commits
from store.catalog import ModelMeta
from store.db import query
from store.paths import resolve_store
from store.pins import Pin, record_pins
from tests.engine.conftest import write_task
from tests.engine.local_hub import AnsweringHub
from tests.engine.test_offline_models import into_cache
from tests.engine.tiny_models import build

ROOT = Path(__file__).resolve().parents[2]
REPO = "org/tiny-remote"
COMMIT_A = "a" * 40
COMMIT_B = "b" * 40
CODE = """\
import os

from transformers import BertConfig, BertModel

with open(os.environ["REMOTE_MARKER"], "a") as marker:
    marker.write("{name}\\n")


class TinyRemoteConfig(BertConfig):
    model_type = "tiny-remote"


class TinyRemoteModel(BertModel):
    config_class = TinyRemoteConfig
"""
USER_TEXT = """\
# my own note: keep this line
[[pin]]
hub_id = "org/other"   # pinned by hand
branch = "main"
commit = "0123456789abcdef0123456789abcdef01234567"
"""


def remote_checkpoint(folder: Path, name: str) -> Path:
    build("bert", folder, max_len=64)
    (folder / "tiny_remote.py").write_text(CODE.format(name=name))
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="tiny-remote", auto_map={
        "AutoConfig": "tiny_remote.TinyRemoteConfig", "AutoModel": "tiny_remote.TinyRemoteModel"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture
def setup(tmp_path):
    """The cache (main at COMMIT_A, COMMIT_B beside it), a suite of two tasks, and a store whose
    models.toml has the model without a revision, and whose pins.toml holds the user's text."""
    cache = tmp_path / "hf-cache"
    into_cache(cache, REPO, remote_checkpoint(tmp_path / "code-a", "A"), COMMIT_A)
    into_cache(cache, REPO, remote_checkpoint(tmp_path / "code-b", "B"), COMMIT_B, ref=None)
    suite = tmp_path / "suite"
    suite.mkdir()
    for i in (1, 2):
        write_task(suite / f"task_{i}.csv", 20, 10, 2, i, length=30)
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny-remote"\nhub_id = "{REPO}"\nremote_code = "required"\n'
        "params = 1000\n")
    (store / "pins.toml").write_text(USER_TEXT)
    return tmp_path, cache, suite, store


def fill(tmp_path: Path, cache: Path, suite: Path, store: Path, task: str, *extra: str,
         endpoint: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path / "hf-home"),
           "REMOTE_MARKER": str(tmp_path / "marker"), "TRANSFORMERS_VERBOSITY": "error",
           "HF_HUB_OFFLINE": "0" if endpoint else "1", "COLUMNS": "1000"}
    if endpoint:
        env["HF_ENDPOINT"] = endpoint
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", "fill", "--suite", str(suite), "--models",
         "tiny-remote", "--tasks", task, "--regimes", "full", "--device", "cpu",
         "--store", str(store), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def pins_of(store: Path) -> dict:
    return {p["hub_id"]: p["commit"]
            for p in tomllib.loads((store / "pins.toml").read_text())["pin"]}


def revisions(store: Path) -> list[tuple[str, str]]:
    return query(resolve_store(store), "SELECT DISTINCT task, model_revision FROM results "
                                       "ORDER BY task").rows()


def test_fill_pins_the_commit_its_branch_names_and_later_runs_use_the_pin(setup):
    tmp_path, cache, suite, store = setup
    marker = tmp_path / "marker"
    hub = AnsweringHub()
    try:
        hub.commits[(REPO, "main")] = COMMIT_A
        first = fill(tmp_path, cache, suite, store, "task_1", "--trust-remote-code",
                     endpoint=hub.url)
        assert first.returncode == 0, first.stderr
        line = (f"model tiny-remote: runs the code of {REPO} at commit {COMMIT_A} (what main "
                f"names now, read from the hub; pinned in {store / 'pins.toml'}: later runs "
                "use this commit until you change it there)")
        assert line in " ".join(first.stdout.split()), first.stdout
        assert [r for r in hub.requests if "/api/models/" in r] == \
            [f"GET /api/models/{REPO}/revision/main"]
        assert marker.read_text() == "A\n"                      # commit A's code ran
        text = (store / "pins.toml").read_text()
        assert text.startswith(USER_TEXT)                       # the user's text as written
        assert pins_of(store) == {"org/other": "0123456789abcdef0123456789abcdef01234567",
                                  REPO: COMMIT_A}
        assert revisions(store) == [("task_1", COMMIT_A)]

        # main moves on, on the hub and in the cache; the pin holds, and the hub is not asked
        hub.commits[(REPO, "main")] = COMMIT_B
        (cache / "models--org--tiny-remote" / "refs" / "main").write_text(COMMIT_B)
        hub.requests.clear()
        second = fill(tmp_path, cache, suite, store, "task_2", "--trust-remote-code",
                      endpoint=hub.url)
        assert second.returncode == 0, second.stderr
        assert hub.requests == []
        assert (f"runs the code of {REPO} at commit {COMMIT_A} (pinned for main in "
                f"{store / 'pins.toml'})") in " ".join(second.stdout.split()), second.stdout
        assert marker.read_text() == "A\nA\n"
        assert (store / "pins.toml").read_text() == text
        assert revisions(store) == [("task_1", COMMIT_A), ("task_2", COMMIT_A)]
    finally:
        hub.close()


def test_without_the_opt_in_it_is_refused_in_one_line_and_nothing_is_pinned(setup):
    tmp_path, cache, suite, store = setup
    proc = fill(tmp_path, cache, suite, store, "task_1")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "model tiny-remote: " in lines[0] and "--trust-remote-code" in lines[0], lines[0]
    assert (store / "pins.toml").read_text() == USER_TEXT
    assert not (tmp_path / "marker").exists()
    assert not (store / "results").exists()


def test_offline_the_cached_ref_names_the_commit_and_without_one_it_is_one_line(setup):
    tmp_path, cache, suite, store = setup
    ref = cache / "models--org--tiny-remote" / "refs" / "main"
    ref.unlink()
    refused = fill(tmp_path, cache, suite, store, "task_1", "--trust-remote-code")
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1, refused.stderr
    assert (f"model tiny-remote: its code runs only at a commit, and which commit main of "
            f"{REPO} is cannot be told here: HF_HUB_OFFLINE is set") in lines[0], lines[0]
    assert "`geneb-engine fetch-models tiny-remote`" in lines[0]
    assert (store / "pins.toml").read_text() == USER_TEXT and not (store / "results").exists()

    ref.write_text(COMMIT_B)
    done = fill(tmp_path, cache, suite, store, "task_1", "--trust-remote-code")
    assert done.returncode == 0, done.stderr
    assert (f"at commit {COMMIT_B} (what main names now, read from the Hugging Face cache "
            f"{cache};") in " ".join(done.stdout.split()), done.stdout
    assert pins_of(store)[REPO] == COMMIT_B
    assert (tmp_path / "marker").read_text() == "B\n"


def test_each_trusted_model_is_said_at_the_commit_it_runs(tmp_path):
    """Its own commit, the store's pin (named by --models too: the dashboard passes the pin as
    ID@<commit>), or none without the opt-in; nothing here asks the hub."""
    paths = resolve_store(tmp_path)
    record_pins(paths, [Pin(REPO, "main", COMMIT_A)])
    m = ModelMeta.one_off("m", hub_id=REPO, remote_code="required")
    named_a, named_b = replace(m, revision=COMMIT_A), replace(m, revision=COMMIT_B)
    models, trusted = trusted_commits(paths, [named_a, named_b, m], True)
    assert [x.revision for x in models] == [COMMIT_A, COMMIT_B, COMMIT_A]
    assert [t.how for t in trusted] == [f"pinned in {paths.pins}",
                                        "the commit its entry or --models names",
                                        f"pinned for main in {paths.pins}"]
    assert not any(t.pin for t in trusted)                 # nothing new to pin
    assert trusted_commits(paths, [m], False) == ([m], [])
