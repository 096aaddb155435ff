"""Where the store lives: `--store` beats `GENEB_HOME` beats `~/.geneb`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StorePaths:
    root: Path

    @property
    def catalog(self) -> Path:
        return self.root / "catalog"

    @property
    def embeddings(self) -> Path:
        return self.root / "embeddings.zarr"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def suites(self) -> Path:
        """Materialised built-in suites (e.g. geneb-mini as flat CSVs)."""
        return self.root / "suites"

    @property
    def user_models(self) -> Path:
        """The user's own model entries, same fields as the built-in catalog."""
        return self.root / "models.toml"


def resolve_store(store: str | os.PathLike | None = None) -> StorePaths:
    if store is None:
        store = os.environ.get("GENEB_HOME") or Path.home() / ".geneb"
    return StorePaths(Path(store).expanduser().resolve())
