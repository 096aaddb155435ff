"""The recipe table, `store/catalogs/recipes.toml`: each official extractor's recipe beside our
catalog entry's, and what was done about each difference.

One row per model of the official leaderboard: the extractor file and the commit it was read
at, how it loads the model, its tokenizer call, its batch, its pooling and dtype (text, as
read), `ours` (the entry's recipe fields that differ from the defaults, `store.catalog.
RECIPE_FIELDS`; a test holds them equal to the catalog) and a `resolution` from `RESOLUTIONS`.

Each row also says how the official run batched (`reference`, what `fill --preset reference`
reproduces, `Reference`: the default batch size, the padding side, whether the model got the
attention mask) and whether the two recipe presets (`store.vocab.variant.PRESETS`) can give
that model different embeddings (`presets`, a `PRESET_DIFFERENCES` key, and why). The engine
reads `reference_of`; the docs page "Recipes" renders the table.
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

# Whether `fill --preset normalized` and `--preset reference` can give a model different
# embeddings.
PRESET_DIFFERENCES: dict[str, str] = {
    "can-differ": "can differ: the official value depends on the batch",
    "rounding": "cannot differ beyond float rounding",
    "same": "the same computation",
    "not-run": "not run by this engine",
}
# How the official extractor padded a batch: on the tokenizer's own side, or on the side it set.
REFERENCE_PADDING: tuple[str, ...] = ("tokenizer", "left", "right")


@dataclass(frozen=True)
class Reference:
    """How an official run batched a model (`fill --preset reference`)."""

    batch_size: int          # the official run's default batch (main.py's --batch_size: 4)
    padding_side: str = "tokenizer"   # a REFERENCE_PADDING value
    mask: bool = True        # the model got the attention mask
    fixed: bool = False      # no other batch size is the official extractor's (`quirk` says why)
    quirk: str = ""


# A model the table does not list (a user's entry) runs main.py's loop: its default batch of
# 4, padded on its tokenizer's side, the mask passed.
DEFAULT_REFERENCE = Reference(batch_size=4)


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
    reference: dict         # the official batching, `Reference`'s fields
    presets: str            # a PRESET_DIFFERENCES key
    presets_why: str        # why (one sentence)

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
        if row["presets"] not in PRESET_DIFFERENCES:
            raise GenebError(f"{where}: presets {row['presets']!r} is not one of "
                             f"{', '.join(PRESET_DIFFERENCES)}")
        try:
            reference = Reference(**row["reference"])
        except TypeError as exc:
            raise GenebError(f"{where}: reference: {exc}") from None
        if reference.padding_side not in REFERENCE_PADDING or reference.batch_size < 1:
            raise GenebError(f"{where}: reference {row['reference']}: padding_side is one of "
                             f"{', '.join(REFERENCE_PADDING)}, batch_size at least 1")
        rows.append(Recipe(**row))
    return RecipeTable(**data["official"], recipes=tuple(rows))


def reference_of(model_id: str) -> Reference:
    """How the official run batched `model_id` (`DEFAULT_REFERENCE` for a model the table does
    not list)."""
    for row in recipe_table().recipes:
        if row.model_id == model_id:
            return Reference(**row.reference)
    return DEFAULT_REFERENCE
