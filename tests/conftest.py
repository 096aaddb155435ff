"""Fixtures shared across the test packages."""

from __future__ import annotations

from pathlib import Path

import pytest

# The published GENEB reference data (never copied into the project).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SUBMISSIONS = SHARED_DATA / "geneb-submissions"
LEADERBOARD = SHARED_DATA / "geneb-leaderboard" / "leaderboard.json"


@pytest.fixture(scope="session")
def official_store(tmp_path_factory):
    """A store holding the 40 official submissions and leaderboard.json, imported once per
    session. Read-only for the tests: copy it (`shutil.copytree`) before changing anything."""
    from store.paths import resolve_store
    from store.submission import import_files

    paths = resolve_store(tmp_path_factory.mktemp("official") / "store")
    import_files(paths, [SUBMISSIONS, LEADERBOARD])
    return paths
