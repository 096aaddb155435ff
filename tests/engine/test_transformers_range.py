"""A registry entry's `transformers` range: parsed and validated with the entry, checked by the
engine's preflight and by the dashboard against the installed version (the package metadata,
monkeypatched here), with one line saying what is installed, what is needed, what to install."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from engine.encoders import EncoderOptions, preflight
from store import runnable
from store.catalog import load_models, parse_model_entries, transformers_problem
from store.hf_cache import HubReach
from store.runnable import assess
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task
from tests.engine.in_process import refused

ROOT = Path(__file__).resolve().parents[2]
ENTRY = '[[model]]\nmodel_id = "old-code"\nhub_id = "org/old-code"\nparams = 1000\n'


def installed_transformers(monkeypatch, version: str) -> None:
    """importlib.metadata.version answers `version` for transformers (the rest as installed),
    and the hub answers (the dashboard's other question about a hub model)."""
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: version if name == "transformers" else real(name))
    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))


def entry(spec: str | None):
    known = {} if spec is None else {"transformers": spec}
    return parse_model_entries([{"model_id": "old-code", "hub_id": "org/old-code", **known}],
                               "models.toml")[0]


def test_the_field_is_read_from_a_models_toml(tmp_path):
    user = tmp_path / "models.toml"
    user.write_text(ENTRY + 'transformers = ">=4.40, <5"\n')
    models = load_models(user)
    assert models["old-code"].transformers == ">=4.40, <5"
    assert models["kmer-4"].transformers is None               # unset: any transformers


@pytest.mark.parametrize("value", ['"5"', '"=<5"', '"~=5"', '" "', "5", '["<5"]'])
def test_a_malformed_range_is_refused_naming_the_entry_and_the_field(tmp_path, value):
    user = tmp_path / "models.toml"
    user.write_text(ENTRY + f"transformers = {value}\n")
    with pytest.raises(GenebError) as caught:
        load_models(user)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{user}: model entry 1 (old-code): transformers = "), message
    assert "is not a PEP 440 version range" in message


def test_models_refuses_a_malformed_range_in_one_line(tmp_path, capsys):
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(ENTRY + 'transformers = "five"\n')
    refused(capsys, store, "models", "--store", str(store),
            names=("models.toml: model entry 1 (old-code)", "transformers = 'five'"))


@pytest.mark.parametrize(("version", "spec", "needed"), [
    ("5.1.0", "<5", "<5"),
    ("5.0.0rc1", "<5", "<5"),           # a pre-release of 5 is not below 5 (PEP 440)
    ("4.57.6", "<5", None),
    ("4.58.0.dev0", "<5", None),        # a development build is judged by its number
    ("4.39.3", ">=4.40, <5", "<5,>=4.40"),
    ("5.1.0", ">=5", None),
])
def test_preflight_checks_the_installed_version(monkeypatch, version, spec, needed):
    installed_transformers(monkeypatch, version)
    model = entry(spec)
    if needed is None:
        preflight(model, EncoderOptions())
        return
    with pytest.raises(GenebError) as caught:
        preflight(model, EncoderOptions())
    assert str(caught.value) == (
        f"model old-code: its entry needs transformers{needed} and transformers {version} is "
        f"installed; run it from a separate environment with pip install "
        f"'transformers{needed}'")


def test_an_entry_without_a_range_runs_with_any_transformers(monkeypatch):
    installed_transformers(monkeypatch, "99.0")
    unset = entry(None)
    assert unset.transformers is None and transformers_problem(None) is None
    assert preflight(unset, EncoderOptions()) is None            # passes, refusing nothing
    assert assess(asdict(unset), "old-code", installed=lambda package: True).runnable
    # the same entry with a range is judged against that transformers 99.0
    with pytest.raises(GenebError, match=r"needs transformers<99 and transformers 99\.0 is "):
        preflight(entry("<99"), EncoderOptions())
    assert not assess(asdict(entry("<99")), "old-code", installed=lambda package: True).runnable


def test_the_dashboard_says_the_same(monkeypatch):
    model = entry("<5")
    installed_transformers(monkeypatch, "5.1.0")
    with pytest.raises(GenebError) as caught:
        preflight(model, EncoderOptions())
    verdict = assess(asdict(model), "old-code", installed=lambda package: True)
    assert not verdict.runnable
    assert f"model old-code: {verdict.why}" == str(caught.value)
    assert verdict.short == ("not runnable: its entry needs transformers<5 and transformers "
                             "5.1.0 is installed")
    installed_transformers(monkeypatch, "4.57.6")
    assert assess(asdict(model), "old-code", installed=lambda package: True).runnable


def test_fill_refuses_before_touching_the_store(monkeypatch, tmp_path, capsys):
    installed_transformers(monkeypatch, "5.1.0")
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "tiny_task.csv", 20, 10, 2, 1, length=30)
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(ENTRY + 'transformers = "<5"\n')
    refused(capsys, store, "fill", "--suite", str(suite), "--models", "old-code",
            "--regimes", "full", "--store", str(store),
            names=("model old-code:", "transformers 5.1.0 is installed",
                   "pip install 'transformers<5'"))


def test_the_dashboard_reads_the_version_without_importing_transformers():
    code = ("import sys\n"
            "from store.runnable import assess\n"
            "meta = {'encoder': 'hf', 'hub_id': 'org/m', 'transformers': '<1'}\n"
            "verdict = assess(meta, 'm', installed=lambda package: True)\n"
            "print(verdict.runnable, 'transformers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["False", "False"]
