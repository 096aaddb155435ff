"""The model registry as a whole (MTEB-style) and what `--models` resolves to."""

from __future__ import annotations

import pytest

from engine.registry import resolve_model
from store.catalog import (
    ARCHITECTURE_FAMILIES,
    ENCODERS,
    PADDING_SIDES,
    POOLINGS,
    PROVENANCES,
    REMOTE_CODE,
    TOKENIZATION_FAMILIES,
    ModelMeta,
    load_models,
    parse_model_entries,
)
from store.official.data import model_meta
from store.vocab.encoder_kinds import ADAPTERS
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task

OFFICIAL = model_meta()   # the official model_meta.json, shipped with the package


def official_models():
    return {k: m for k, m in load_models().items() if m.provenance == "official"}


def test_every_official_model_is_present_with_its_exact_params_and_display():
    models = official_models()
    assert set(models) == set(OFFICIAL) and len(models) == 40
    for model_id, meta in OFFICIAL.items():
        assert models[model_id].params == meta["params"], model_id
        assert models[model_id].display == meta["display"], model_id


def test_every_entry_uses_the_closed_vocabularies():
    for m in load_models().values():
        assert m.architecture_family in ARCHITECTURE_FAMILIES, m.model_id
        assert m.tokenization_family in TOKENIZATION_FAMILIES, m.model_id
        assert m.provenance in PROVENANCES, m.model_id
        assert m.pooling in POOLINGS and m.remote_code in REMOTE_CODE, m.model_id
        assert m.padding_side in (None, *PADDING_SIDES), m.model_id
        assert m.encoder in ENCODERS, m.model_id


def test_every_entry_says_how_it_runs():
    for m in load_models().values():
        if m.encoder == "hf":
            assert m.hub_id and "/" in m.hub_id, m.model_id
        elif m.encoder == "kmer":
            assert m.encoder_k in (3, 4, 6)
        elif m.encoder in ADAPTERS:    # its own code loads the checkpoint (none from the hub)
            assert m.notes and m.remote_code != "required", m.model_id
        else:
            assert m.encoder == "external" and m.remote_code != "no" and m.notes
        if m.revision is not None:   # a commit, or the branch the family's package loads
            assert len(m.revision) == 40 or (
                m.remote_code == "package" and f"revision {m.revision}" in m.notes), m.model_id


def test_recipes_from_the_official_extractors():
    models = load_models()
    # Hyena: the masked mean without special tokens, never padded (its forward reads no mask).
    hyena = models["hyenadna-large-1m-seqlen-hf"]
    assert (hyena.pooling, hyena.padding_side, hyena.special_tokens) == ("mean", "none", False)
    assert models["PlantCaduceus_l32"].padding_side == "none"
    assert models["GenomeOcean-4B"].padding_side == "left"
    assert models["GenomeOcean-4B"].max_tokens == 10240
    assert models["DNABERT-S"].pooling == "cls"
    assert models["Omni-DNA-1B"].max_tokens == 250
    assert models["enformer-official-rough"].requires == "enformer-pytorch"


@pytest.mark.parametrize("entry, field", [
    ({"model_id": "x", "hub_id": "o/x", "pooling": "max"}, "pooling"),
    ({"model_id": "x", "hub_id": "o/x", "padding_side": "middle"}, "padding_side"),
    ({"model_id": "x", "hub_id": "o/x", "remote_code": "yes"}, "remote_code"),
    ({"model_id": "x", "hub_id": "o/x", "max_tokens": 0}, "max_tokens"),
    ({"model_id": "x", "hub_id": "o/x", "cut_to_multiple": 0}, "'cut_to_multiple' must be a "
                                                               "positive integer"),
    ({"model_id": "x", "hub_id": "o/x", "special_tokens": "no"}, "'special_tokens' must be "
                                                                "true or false, not 'no'"),
    ({"model_id": "x", "hub_id": "o/x", "one_hot": 1}, "'one_hot' must be true or false"),
    ({"model_id": "x", "hub_id": "o/x", "encoder": "magic"}, "encoder"),
    ({"model_id": "x", "hub_id": "o/x", "architecture_family": "RNN"}, "architecture_family"),
    ({"model_id": "x", "hub_id": "o/x", "tokenization_family": "unknown"},
     "tokenization_family"),
    ({"model_id": "x", "hub_id": "o/x", "provenance": "mine"}, "provenance"),
])
def test_a_bad_user_entry_names_the_file_entry_and_field(entry, field):
    with pytest.raises(GenebError, match=rf"models.toml: model entry 1 \(x\).*{field}"):
        parse_model_entries([entry], "models.toml")


def test_a_model_outside_the_vocabularies_is_refused_however_it_is_built():
    with pytest.raises(GenebError) as info:
        ModelMeta.one_off("x", tokenization_family="unknown")
    assert str(info.value) == ("model x: tokenization_family = 'unknown' is not one of "
                               "single-nucleotide, k-mer, BPE, mixed/other")
    with pytest.raises(GenebError, match=r"^models.toml: model entry 1 \(x\): pooling = 'max' "
                                         r"is not one of mean, mean-with-padding, cls, tracks, "
                                         r"trunk$"):
        parse_model_entries([{"model_id": "x", "hub_id": "o/x", "pooling": "max"}],
                            "models.toml")


def test_a_model_known_in_part_is_unknown_in_the_vocabularies_terms():
    m = ModelMeta.one_off("org/x", hub_id="org/x", params=5)
    assert (m.display, m.params, m.architecture, m.architecture_family, m.tokenization,
            m.tokenization_family, m.pretraining_data, m.provenance, m.encoder) == (
        "org/x", 5, "unknown", "Other", "unknown", "mixed/other", "unknown", "local", "hf")
    user = parse_model_entries([{"model_id": "x", "hub_id": "o/x"}], "models.toml")[0]
    assert user == ModelMeta.one_off("x", hub_id="o/x")


def test_one_user_entry_adds_a_model(tmp_path):
    user = tmp_path / "models.toml"
    user.write_text('[[model]]\nmodel_id = "my-model"\nhub_id = "me/my-dna-model"\n'
                    'max_tokens = 512\n')
    m = load_models(user)["my-model"]
    assert (m.hub_id, m.encoder, m.pooling, m.max_tokens) == ("me/my-dna-model", "hf", "mean",
                                                              512)
    assert resolve_model("my-model", load_models(user)) == m


def test_resolve_catalog_id_hub_id_and_revision():
    catalog = load_models()
    commit = "0123456789abcdef0123456789abcdef01234567"    # a model commit, made up
    assert resolve_model("GROVER", catalog).model_id == "GROVER"
    assert resolve_model("grover", catalog).model_id == "GROVER"
    by_hub = resolve_model("PoetschLab/GROVER", catalog)
    assert by_hub.model_id == "GROVER"
    pinned = resolve_model(f"PoetschLab/GROVER@{commit}", catalog)
    assert pinned.model_id == "GROVER" and pinned.revision == commit
    assert resolve_model(f"GROVER@{commit}", catalog).revision == commit
    new = resolve_model("someone/dna-encoder", catalog)
    assert (new.model_id, new.display, new.hub_id, new.encoder, new.provenance,
            new.architecture_family, new.tokenization_family, new.revision) == (
        "someone/dna-encoder", "dna-encoder", "someone/dna-encoder", "hf", "local", "Other",
        "mixed/other", None)
    assert resolve_model(f"someone/dna-encoder@{commit}", catalog).revision == commit


def test_resolve_local_checkpoint_directory(tmp_path):
    ckpt = tmp_path / "my-ckpt"
    ckpt.mkdir()
    with pytest.raises(GenebError, match="my-ckpt: not a Hugging Face checkpoint"):
        resolve_model(str(ckpt), load_models())
    (ckpt / "config.json").write_text('{"model_type": "bert"}')
    m = resolve_model(str(ckpt), load_models())
    assert (m.model_id, m.path, m.architecture_family, m.remote_code) == (
        "my-ckpt", str(ckpt.resolve()), "Transformer encoder", "no")
    (ckpt / "config.json").write_text('{"model_type": "x", "auto_map": {"AutoModel": "m.M"}}')
    assert resolve_model(str(ckpt), load_models()).remote_code == "required"


def test_unknown_model_lists_close_matches():
    with pytest.raises(GenebError, match=r"unknown model 'GROVR' \(did you mean GROVER"):
        resolve_model("GROVR", load_models())
    with pytest.raises(GenebError, match=r"--models \./no/such/dir: no such folder \(/"):
        resolve_model("./no/such/dir", load_models())


def test_report_on_a_broken_user_file_is_one_line_exit_2(tmp_path, capsys):
    from engine.cli import main

    (tmp_path / "models.toml").write_text("[model]\nmodel_id = 'x'\n")
    assert main(["report", "--store", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"geneb-engine report: {tmp_path / 'models.toml'}: 'model' must be a list of tables, "
        "one [[model]] per model\n")


@pytest.mark.parametrize("model_id, needs", [("BioFM-265M", "biofm_eval"),
                                             ("space", "SPACE repository"),
                                             ("dna_gpt3b_m", "not published")])
def test_a_model_without_a_path_says_what_the_user_can_do(tmp_path, capsys, model_id, needs):
    from tests.engine.in_process import refused

    store = tmp_path / "store"
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "t.csv", 20, 10, 2, 1, length=30)
    err = refused(capsys, store, "fill", "--suite", str(suite), "--models", model_id,
                  "--store", str(store), names=(f"model {model_id}", needs))
    if needs == "not published":
        assert "'path' pointing at a local checkpoint" in err
    else:
        assert 'encoder = "official-extractor"' in err and "import --official" in err
