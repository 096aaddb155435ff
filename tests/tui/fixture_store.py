"""Stores for the dashboard tests, built with the real import of the official submissions."""

from __future__ import annotations

import json
from pathlib import Path

from store.official.data import official_tree
from store.official.submission import import_files
from store.paths import StorePaths, resolve_store

# The published files, materialised from the data shipped in the package (store.official.data).
DATA = official_tree()
SUBMISSIONS = DATA / "submissions"                 # the 40 official submissions
LEADERBOARD = DATA / "leaderboard.json"
OFFICIAL_IDS = sorted(p.stem for p in SUBMISSIONS.glob("*.json"))


def build_official_store(root: Path, files: list[Path] | None = None) -> StorePaths:
    paths = resolve_store(root)
    import_files(paths, sorted(files or SUBMISSIONS.glob("*.json")))
    return paths


def leaderboard() -> dict:
    """`leaderboard.json`'s rows per regime: {"full": [...], "10shot": [...], "1shot": [...]}."""
    return json.loads(LEADERBOARD.read_text())["data"]


def board(regime: str) -> dict[str, dict]:
    """The leaderboard's rows of one regime for the 40 official models, by model id."""
    return {r["model"]: r for r in leaderboard()[regime] if r["model"] in OFFICIAL_IDS}
