"""Fixtures for the dashboard tests: stores built with the real import, a settled pilot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixture_store import SUBMISSIONS, build_official_store  # noqa: E402

from geneb_tui.app import GenebApp  # noqa: E402
from store.protocol import GENEB_V1  # noqa: E402
from store.results import append_rows  # noqa: E402


@pytest.fixture(scope="session")
def official_store(tmp_path_factory):
    """The 40 official submissions, imported once (tests only read it)."""
    return build_official_store(tmp_path_factory.mktemp("official"))


@pytest.fixture
def small_store(tmp_path):
    """Two official models: a non-empty store that tests may write to."""
    files = [SUBMISSIONS / "GROVER.json", SUBMISSIONS / "MutBERT.json"]
    return build_official_store(tmp_path / "store", files)


def local_rows(model: str, tasks: list[str], regime: str = "full", value: float = 0.5):
    return [{"model": model, "task": t, "regime": regime, "seed": seed, "probe": "logreg",
             "protocol": "geneb-v1", "protocol_hash": GENEB_V1.hash, "mcc": value + i * 0.01,
             "acc": 0.7, "f1_macro": 0.6,
             "source": "local"}
            for i, t in enumerate(tasks) for seed in (13, 17)]


@pytest.fixture
def mixed_store(tmp_path):
    """Two official models and a partial local run of kmer-3 (three geneb-v1 tasks)."""
    files = [SUBMISSIONS / "GROVER.json", SUBMISSIONS / "MutBERT.json"]
    paths = build_official_store(tmp_path / "store", files)
    from store.catalog import geneb_v1_tasks

    tasks = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"][:3]
    append_rows(paths, local_rows("kmer-3", tasks))
    return paths


async def settle(pilot, rounds: int = 3) -> None:
    """Let the workers finish and their messages be handled (no sleeps)."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.fixture
def make_app():
    def make(paths, **kwargs) -> GenebApp:
        return GenebApp(paths, **kwargs)

    return make
