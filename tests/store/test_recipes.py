"""The recipe table (`store/catalogs/recipes.toml`) against the model catalog and the official
leaderboard: one row per leaderboard model, its `ours` the catalog entry's recipe, a stated
difference wherever one was found."""

from __future__ import annotations

import re

import pytest

from store.catalog import RECIPE_DEFAULTS, RECIPE_FIELDS, ModelMeta, load_models
from store.official import recipes
from store.official.data import submission_headers
from store.official.recipes import RESOLUTIONS, recipe_table
from store.vocab.errors import GenebError

TABLE = recipe_table()
ROWS = {r.model_id: r for r in TABLE.recipes}


def test_every_leaderboard_model_has_one_row():
    ids = [r.model_id for r in TABLE.recipes]
    assert len(ids) == len(set(ids)) == 41
    assert set(ids) == {h["model_id"] for h in submission_headers()}


@pytest.mark.parametrize("model_id", sorted(ROWS))
def test_ours_is_the_catalog_entry(model_id):
    entry = load_models()[model_id]
    assert ROWS[model_id].our_recipe() == {f: getattr(entry, f) for f in RECIPE_FIELDS}


def test_a_changed_catalog_recipe_no_longer_matches_its_row():
    """What the test above catches: the catalog's DNABERT-S as it was before the table (the
    masked mean, the tokenizer's limit) is not the row's."""
    before = ModelMeta.one_off("DNABERT-S", hub_id="zhihan1996/DNABERT-S")
    assert ROWS["DNABERT-S"].our_recipe() != {f: getattr(before, f) for f in RECIPE_FIELDS}
    assert ROWS["DNABERT-S"].our_recipe() == {**RECIPE_DEFAULTS, "pooling": "cls",
                                              "max_tokens": 512}


def test_every_row_names_its_file_commit_and_resolution():
    assert TABLE.repository == "darlednik/GENEB"
    assert re.fullmatch(r"[0-9a-f]{40}", TABLE.pipeline_commit)
    for r in TABLE.recipes:
        assert re.fullmatch(r"[0-9a-f]{40}", r.commit), r.model_id
        assert r.extractor.endswith(".py") and r.resolution in RESOLUTIONS, r.model_id
        assert all((r.loading, r.tokenizer, r.batch, r.pooling, r.dtype, r.note)), r.model_id
        # a difference is stated wherever one was found, and only there
        assert bool(r.difference) == (r.resolution not in ("same", "not-run")), r.model_id


def test_the_differences_found():
    found = {r.model_id: r.resolution for r in TABLE.recipes
             if r.resolution not in ("same", "not-run")}
    assert found == {
        "METAGENE-1": "deliberate", "GenomeOcean-4B": "catalog",
        "GENERator-eukaryote-3b-base": "engine", "GENERator-eukaryote-1.2b-base": "engine",
        "enformer-official-rough": "engine", "PlantCaduceus_l32": "engine",
        "caduceus-ps_seqlen-131k_d_model-256_n_layer-16": "engine",
        "caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3": "engine",
        "gpt2_gene_multi_v2_ft": "catalog", "gpt2_gene_v1": "catalog",
        "DNABERT-S": "catalog", "dnabert2-no-flashattention": "catalog", "MutBERT": "engine",
        "hyenadna-large-1m-seqlen-hf": "engine", "hyenadna-medium-160k-seqlen-hf": "engine",
        "splicebert-1024nt": "engine"}


def test_the_models_whose_presets_can_differ_and_how_their_official_runs_batched():
    """The six official values that depend on the batch (the batch-dependent recipes: a mean
    over padding, or a model that reads no mask) and the one run at batch 1; every model the
    engine runs that masks its padding cannot differ beyond rounding."""
    by = {kind: {r.model_id for r in TABLE.recipes if r.presets == kind}
          for kind in recipes.PRESET_DIFFERENCES}
    assert by["can-differ"] == {
        "METAGENE-1", "hyenadna-large-1m-seqlen-hf", "hyenadna-medium-160k-seqlen-hf",
        "PlantCaduceus_l32", "caduceus-ps_seqlen-131k_d_model-256_n_layer-16",
        "caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3"}
    assert by["same"] == {"evo-1-131k-base"}
    assert by["not-run"] == {r.model_id for r in TABLE.recipes if r.resolution == "not-run"}
    ref = recipes.reference_of
    assert ref("hyenadna-large-1m-seqlen-hf") == recipes.Reference(4, "tokenizer", mask=False)
    assert ref("METAGENE-1") == recipes.Reference(4, "tokenizer", mask=True)
    assert ref("GenomeOcean-4B").padding_side == "left"
    assert ref("splicebert-1024nt").batch_size == 8
    assert ref("evo-1-131k-base").fixed and ref("evo-1-131k-base").batch_size == 1
    assert ref("a-model-of-my-own") == recipes.DEFAULT_REFERENCE == recipes.Reference(4)
    # where the catalog takes the batch-1 value, the official batch differs from it
    assert {m for m, e in load_models().items() if m in ROWS and (
        e.pooling == "mean-with-padding" or e.padding_side == "none")} == by["can-differ"]


def test_a_row_outside_the_vocabularies_is_one_error(tmp_path, monkeypatch):
    text = recipes.RECIPES_FILE.read_text()
    bad = tmp_path / "recipes.toml"
    for old, new, problem in (
            ('resolution = "same"', 'resolution = "fine"', "resolution 'fine' is not one of"),
            ("ours = {}", "ours = { width = 3 }", "ours names ['width'], not recipe fields"),
            ('note = "As nucleotide', 'notes = "As nucleotide', "fields ['note', 'notes']"),
            ('presets = "rounding"', 'presets = "never"', "presets 'never' is not one of"),
            ("reference = { batch_size = 4 }", "reference = { batch_size = 0 }",
             "batch_size at least 1"),
            ("reference = { batch_size = 4 }", "reference = { batch = 4 }",
             "unexpected keyword argument 'batch'")):
        bad.write_text(text.replace(old, new, 1))
        monkeypatch.setattr(recipes, "RECIPES_FILE", bad)
        recipe_table.cache_clear()
        try:
            with pytest.raises(GenebError, match=re.escape(problem)):
                recipe_table()
        finally:
            recipe_table.cache_clear()
