"""A family adapter's model run end to end through `geneb-engine fill` (in this process): a
hub-layout task, the test zoo's models.toml in a fresh store, the full regime."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def fill_one_task(tmp_path: Path, models_toml: Path, model_id: str, *extra: str
                  ) -> tuple[dict[str, list[str]], np.ndarray, dict]:
    """Run `fill` for `model_id` on one task and check that its results landed (that model,
    that task only); returns the task's sequences per split, the stored test embeddings and
    their attributes."""
    import zarr

    from engine.cli import main
    from store.db import query
    from store.embeddings import EmbeddingStore
    from store.paths import StorePaths
    from tests.engine.tiny_models import hub_layout_task

    texts = hub_layout_task(tmp_path / "suite")
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(models_toml.read_text())
    assert main(["fill", "--store", str(store), "--suite", str(tmp_path / "suite"),
                 "--models", model_id, "--regimes", "full", *extra]) == 0
    paths = StorePaths(store.resolve())
    rows = query(paths, "SELECT model, task FROM results")
    assert set(rows["model"].to_list()) == {model_id}
    assert set(rows["task"].to_list()) == {"task_a"}
    group = zarr.open_group(str(EmbeddingStore(paths).split_path(model_id, "task_a", "test")),
                            mode="r")
    return texts, group["embeddings"][:], dict(group.attrs)
