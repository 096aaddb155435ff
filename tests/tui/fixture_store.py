"""Build a store from the official submissions (the real import once it exists)."""

from __future__ import annotations

import json
from pathlib import Path

from store.catalog import geneb_v1_tasks, load_models, register_models, register_tasks
from store.paths import StorePaths, resolve_store
from store.protocol import GENEB_V1
from store.results import write_fragment, safe_name

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SUBMISSIONS = DATA / "geneb-submissions"
LEADERBOARD = DATA / "geneb-leaderboard" / "leaderboard.json"


def _direct_import(paths: StorePaths, files: list[Path]) -> None:
    for f in files:
        sub = json.loads(f.read_text())
        rows = []
        for regime, tasks in sub["results"].items():
            for task, m in tasks.items():
                rows.append({
                    "model": sub["model_id"], "task": task, "regime": regime, "seed": None,
                    "probe": "logreg", "protocol": "geneb-v1", "protocol_hash": GENEB_V1.hash,
                    "mcc": m["MCC"], "acc": m["Acc"], "f1_macro": m["F1"],
                    "source": sub["meta"].get("provenance", "official"),
                })
        write_fragment(paths, rows, f"imported/{safe_name(sub['model_id'])}")
    register_tasks(paths, geneb_v1_tasks())
    models = load_models(None)
    register_models(paths, [models[json.loads(f.read_text())["model_id"]] for f in files
                            if json.loads(f.read_text())["model_id"] in models])


def build_official_store(root: Path, files: list[Path] | None = None) -> StorePaths:
    paths = resolve_store(root)
    files = sorted(files or SUBMISSIONS.glob("*.json"))
    _direct_import(paths, files)
    return paths


def leaderboard() -> dict:
    return json.loads(LEADERBOARD.read_text())["data"]
