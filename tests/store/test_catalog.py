"""The model catalogs: the user's models.toml, and the store's catalog completed with them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from store.catalog import ModelMeta, load_models, param_count, params_text, scale_band
from store.official.submission import import_files
from store.paths import resolve_store
from store.tables.catalogs import models_frame, models_with_builtins, register_models
from store.vocab.errors import GenebError
from tests.conftest import SELF_REPORTED


@pytest.mark.parametrize("content, problem", [
    (b"[[model]\n", "not valid TOML"),
    (b"[model]\nmodel_id = 'x'\n", "'model' must be a list of tables, one [[model]] per model"),
    (b"model = 3\n", "'model' must be a list of tables, one [[model]] per model"),
    (b"\xff\xfe", "cannot be read ('utf-8' codec can't decode byte 0xff"),
])
def test_a_broken_user_file_is_one_error_naming_it(tmp_path, content, problem):
    user = tmp_path / "models.toml"
    user.write_bytes(content)
    with pytest.raises(GenebError) as info:
        load_models(user)
    assert str(info.value).startswith(f"{user}: {problem}")


def test_a_folder_as_the_user_file_is_one_error_naming_it(tmp_path):
    (tmp_path / "models.toml").mkdir()
    with pytest.raises(GenebError, match=r"models.toml: cannot be read \(\[Errno 21\]"):
        load_models(tmp_path / "models.toml")


def test_the_store_catalog_is_completed_with_the_builtin_and_user_models(tmp_path):
    paths = resolve_store(tmp_path / "store")
    paths.root.mkdir()
    paths.user_models.write_text('[[model]]\nmodel_id = "mine"\nhub_id = "me/mine"\n')
    register_models(paths, [ModelMeta.one_off("GROVER", display="stored GROVER")])
    models = models_with_builtins(paths)
    assert models["model_id"].is_unique().all()
    assert set(models["model_id"]) == {*load_models(), "mine"}
    assert models.row(0, named=True)["display"] == "stored GROVER"     # a stored entry wins
    paths.user_models.write_text("[model]\n")
    with pytest.raises(GenebError, match="models.toml: 'model' must be a list of tables"):
        models_with_builtins(paths)


def test_a_submitted_model_the_catalogs_lack_is_registered_in_the_vocabularies(tmp_path):
    paths = resolve_store(tmp_path / "store")
    submission = json.loads((SELF_REPORTED / "splicebert-1024nt.json").read_text())
    submission["model_id"] = "my-splicebert"           # a model no catalog knows
    (tmp_path / "my-splicebert.json").write_text(json.dumps(submission))
    [outcome] = import_files(paths, [tmp_path / "my-splicebert.json"])
    assert outcome.model == "my-splicebert"
    row = models_with_builtins(paths).filter(model_id=outcome.model).row(0, named=True)
    assert (row["architecture"], row["architecture_family"], row["tokenization"],
            row["tokenization_family"], row["provenance"]) == (
        "unknown", "Other", "unknown", "mixed/other", "self-reported")


def test_a_model_without_a_parameter_count_has_none_in_every_catalog_frame(tmp_path):
    """The k-mer baselines (params = 0 in models.toml) and a model known in part: None, "n/a"
    as a scale band; a counted model keeps its count. A store catalog written before the rule
    (0) reads as None too."""
    assert [param_count(n) for n in (0, None, 7_000_000_000)] == [None, None, 7_000_000_000]
    assert scale_band(0) == scale_band(None) == "n/a" and scale_band(86_000_000) == "<100M"
    builtin = load_models()
    assert builtin["kmer-3"].params == 0 and builtin["METAGENE-1"].params == 7_000_000_000
    frame = models_frame([builtin["kmer-3"], builtin["METAGENE-1"], ModelMeta.one_off("x")])
    assert frame.select("params", "scale_band").rows() == [
        (None, "n/a"), (7_000_000_000, ">1B"), (None, "n/a")]
    paths = resolve_store(tmp_path / "store")
    paths.catalog.mkdir(parents=True)
    old = models_frame([builtin["kmer-4"], builtin["METAGENE-1"]]).with_columns(
        pl.Series("params", [0, 7_000_000_000], dtype=pl.Int64))
    old.write_parquet(paths.catalog_table("models"))
    models = models_with_builtins(paths)
    params = dict(models.select("model_id", "params").rows())
    assert params["kmer-4"] is None and params["kmer-3"] is None
    assert params["METAGENE-1"] == 7_000_000_000


@pytest.mark.parametrize("count, shown", [
    (0, "n/a"), (None, "n/a"), (999, "999"), (1_000, "1K"), (7.5e6, "7.5M"), (1.2e9, "1.2B"),
    (19_710_474, "19.7M"), (117_000_000, "117M"), (2_500_000_000, "2.5B"),
    (1_234_567, "1.23M"), (999_999, "1000K"),     # rounded within its unit, as the site's script
])
def test_a_parameter_count_is_written_one_way(count, shown):
    """Three significant digits in the largest unit the count reaches, trailing zeros dropped
    (the command line, the dashboard, the figures' and the scale plot's axes alike); the
    dashboard wrote 19,710,474 as 20M and 1,234,567 as 1.2M, the figures' axis as 19.7105M."""
    assert params_text(count) == shown


def test_the_log_axes_tick_labels_stay_as_the_figures_wrote_them():
    """The figures' scale axis and the dashboard's scale plot label powers of ten: the labels
    their own formatters wrote (`f"{value / unit:g}"`), so the figures do not change."""
    assert [params_text(10.0 ** t) for t in range(13)] == [
        "1", "10", "100", "1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B",
        "1000B"]
