""""Runs here" for a hub model (`store.runnable.assess` over `store.hf_cache`): yes with a whole
cached snapshot, whatever the hub; without one, no while the hub is offline (HF_HUB_OFFLINE, or
the engine's recent answer that it cannot be reached), yes after a recent answer, and ? (never
yes) where nothing tells; `recommend` shows it. No network call anywhere."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from store import hf_cache
from store.catalog import load_models
from store.runnable import assess, here_text

COMMIT = "0123456789abcdef0123456789abcdef01234567"
GROVER = asdict(load_models(None)["GROVER"])                  # hub_id PoetschLab/GROVER


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """An empty Hugging Face cache, the hub not offline by the environment."""
    folder = tmp_path / "hf-hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))   # no recorded answer
    return folder


def here(entry=GROVER, model="GROVER"):
    return assess(entry, model, installed=lambda package: True)


def test_offline_without_a_cached_snapshot_it_does_not_run_here_and_says_why(cache,
                                                                           monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a = here()
    assert (a.runnable, a.runs_here, here_text(a.runs_here)) == (False, False, "no")
    assert a.why == ("no cached snapshot of PoetschLab/GROVER and the hub is offline "
                     "(HF_HUB_OFFLINE is set); `geneb-engine fetch-models GROVER` on a machine "
                     "that reaches the hub, then copy its Hugging Face cache here")
    assert a.short == ("not runnable: no cached snapshot of PoetschLab/GROVER and the hub is "
                       "offline (HF_HUB_OFFLINE is set)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "yes")             # huggingface_hub's true values
    assert here().runs_here is False
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert here().runs_here is None


def test_a_whole_cached_snapshot_runs_here_offline(cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = cache / "models--PoetschLab--GROVER" / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (cache / "models--PoetschLab--GROVER" / "refs").mkdir()
    (cache / "models--PoetschLab--GROVER" / "refs" / "main").write_text(COMMIT)
    assert here().runs_here is False                        # a config alone is not a checkpoint
    (snapshot / "model.safetensors").write_bytes(b"x")
    a = here()
    assert (a.runs_here, a.why, a.unsure) == (True, "", "")
    # pinned at another commit: that one is not cached
    assert here({**GROVER, "revision": "f" * 40}).runs_here is False


def test_without_a_recent_answer_of_the_hub_it_cannot_be_told(cache):
    a = here()
    assert (a.runnable, a.runs_here, here_text(a.runs_here)) == (True, None, "?")
    assert a.unsure == ("no snapshot of the weights is cached here, and whether the hub can "
                        "be reached is not known (no geneb-engine run has asked the hub at "
                        "https://huggingface.co in the last 60 minutes)")
    assert a.short.endswith("? " + a.unsure)


def test_the_engines_last_answer_decides_while_it_is_recent(cache, monkeypatch):
    url = "https://huggingface.co"
    problem = f"the hub at {url} cannot be reached (ConnectError)"
    hf_cache.record_reach(url, problem, now=1_000_000.0)
    at = lambda seconds: hf_cache.hub_reach(now=1_000_000.0 + seconds)   # noqa: E731
    assert at(60).reachable is False and at(60).why.startswith(problem + " (at ")
    assert at(hf_cache.REACH_FRESH_S + 1).reachable is None       # too old to tell
    hf_cache.record_reach(url, None, now=1_000_000.0)
    assert at(60).reachable is True
    hf_cache.record_reach("http://127.0.0.1:9", problem, now=1_000_000.0)   # another endpoint
    assert at(60).reachable is True
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9/")
    assert at(60).reachable is False
    # assess reads the same: recorded now, unreachable
    hf_cache.record_reach("http://127.0.0.1:9", problem)
    a = here()
    assert a.runs_here is False and f"and the hub is offline ({problem} (at " in a.why
    hf_cache.record_reach("http://127.0.0.1:9", None)
    assert here().runs_here is True


def test_a_damaged_record_is_no_answer(cache):
    path = hf_cache.user_cache_dir() / hf_cache.REACH_FILE
    path.parent.mkdir(parents=True)
    for text in ("{", "[]", '{"https://huggingface.co": 3}',
                 '{"https://huggingface.co": {"checked_at": "x", "problem": null}}',
                 '{"https://huggingface.co": {"checked_at": 1e18, "problem": null}}'):
        path.write_text(text)
        assert hf_cache.hub_reach().reachable is None, text


def test_a_local_folder_and_weight_free_kinds_need_no_hub(cache, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    assert here({**GROVER, "path": str(folder)}).runs_here is True
    kmer = asdict(load_models(None)["kmer-3"])
    assert here(kmer, "kmer-3").runs_here is True
