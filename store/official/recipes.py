"""The recipe table, `store/catalogs/recipes.toml`: each official extractor's recipe beside our
catalog entry's, and what was done about each difference.

One row per model of the official leaderboard: the extractor file and the commit it was read
at, how it loads the model, its tokenizer call, its batch, its pooling and dtype (text, as
read), `ours` (the entry's recipe fields that differ from the defaults, `store.catalog.
RECIPE_FIELDS`; a test holds them equal to the catalog) and a `resolution` from `RESOLUTIONS`.
The docs page "Recipes" renders it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache

from store.catalog import CATALOG_DIR, RECIPE_DEFAULTS, RECIPE_FIELDS
from store.vocab.errors import GenebError

RECIPES_FILE = CATALOG_DIR / "recipes.toml"

RESOLUTIONS: dict[str, str] = {
    "same": "no difference",
    "catalog": "fixed in the catalog",
    "engine": "the engine learned what the recipe needs",
    "deliberate": "a stated, deliberate difference",
    "not-run": "not run by this engine (no adapter or no published weights); recorded",
}


@dataclass(frozen=True)
class Recipe:
    model_id: str
    extractor: str          # its file in the official repository
    commit: str             # the commit it was read at
    loading: str
    tokenizer: str
    batch: str
    pooling: str
    dtype: str
    ours: dict              # the catalog entry's recipe fields that differ from the defaults
    resolution: str         # a RESOLUTIONS key
    difference: str         # what differed before, "" when nothing
    note: str

    def our_recipe(self) -> dict:
        """Every recipe field of our entry, as this row states it."""
        return {**RECIPE_DEFAULTS, **self.ours}


@dataclass(frozen=True)
class RecipeTable:
    repository: str         # the official repository (owner/name)
    pipeline: str           # the script every extractor ran through
    pipeline_commit: str
    recipes: tuple[Recipe, ...]


@cache
def recipe_table() -> RecipeTable:
    """The table, checked: known fields, known recipe fields in `ours`, known resolutions."""
    with open(RECIPES_FILE, "rb") as f:
        data = tomllib.load(f)
    names = {f.name for f in fields(Recipe)}
    rows = []
    for i, row in enumerate(data["recipe"], 1):
        where = f"{RECIPES_FILE}: recipe {i} ({row.get('model_id', '?')})"
        if set(row) != names:
            raise GenebError(f"{where}: fields {sorted(set(row) ^ names)} missing or unknown")
        if unknown := set(row["ours"]) - set(RECIPE_FIELDS):
            raise GenebError(f"{where}: ours names {sorted(unknown)}, not recipe fields")
        if row["resolution"] not in RESOLUTIONS:
            raise GenebError(f"{where}: resolution {row['resolution']!r} is not one of "
                             f"{', '.join(RESOLUTIONS)}")
        rows.append(Recipe(**row))
    return RecipeTable(**data["official"], recipes=tuple(rows))
