"""The random-initialisation control: a model's architecture with weights drawn from a seed,
its revision the weights' sha256, its results under its own model id."""

from __future__ import annotations

import hashlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from transformers import AutoConfig, AutoModel  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import parse_model_entries  # noqa: E402
from store.db import query  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.paths import resolve_store  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.in_process import refused, run  # noqa: E402
from tests.engine.tiny_models import build, random_dna  # noqa: E402

SEQS = random_dna(6, 20, 50, seed=4)


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return build("bert", tmp_path_factory.mktemp("ri") / "tiny-bert")


def _encoder(folder: Path, seed: int | None):
    model = resolve_model(str(folder), {})
    return build_encoder(model if seed is None else model.randomised(seed),
                         EncoderOptions(device="cpu"))


def _sha256(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().numpy().tobytes())
    return digest.hexdigest()


def test_the_weights_come_from_the_seed_and_their_sha256_is_the_revision(bert):
    before = torch.random.get_rng_state()
    seven = _encoder(bert, 7)
    assert torch.equal(torch.random.get_rng_state(), before)   # the caller's generator kept
    torch.manual_seed(7)
    by_hand = AutoModel.from_config(AutoConfig.from_pretrained(bert))
    assert seven.revision == f"random-init-7-sha256-{_sha256(by_hand)}"
    assert seven.settings["revision"] == seven.revision         # the embeddings' identity
    again, eight, trained = _encoder(bert, 7), _encoder(bert, 8), _encoder(bert, None)
    assert again.revision == seven.revision and eight.revision != seven.revision
    assert np.array_equal(seven.encode(SEQS), again.encode(SEQS))
    assert not np.allclose(seven.encode(SEQS), eight.encode(SEQS))
    assert not np.allclose(seven.encode(SEQS), trained.encode(SEQS))
    assert trained.revision == checkpoint_fingerprint(bert)      # the folder (store.fingerprint)


def test_fill_stores_the_control_under_its_own_id(tmp_path, capsys, bert):
    suite, store = tmp_path / "suite", tmp_path / "store"
    suite.mkdir()
    write_task(suite / "t.csv", 24, 12, 2, 1, length=40)
    argv = ["fill", "--suite", str(suite), "--store", str(store), "--regimes", "full"]
    rc, err = run(capsys, *argv, "--models", str(bert), "--random-init", "7")
    assert rc == 0, err
    rows = query(resolve_store(store), "SELECT DISTINCT model, model_revision FROM results")
    assert rows.rows() == [("tiny-bert-random-init-7", _encoder(bert, 7).revision)]
    refused(capsys, store, *argv, "--models", "kmer-3", "--random-init",
            names=("--random-init", "kmer-3"))
    refused(capsys, store, *argv, "--models", str(bert), "--random-init", "-1",
            names=("--random-init", "-1 is below 0"))


def test_an_entry_cannot_set_the_seed_itself():
    with pytest.raises(GenebError, match="'random_init' is not an entry's field"):
        parse_model_entries([{"model_id": "x", "hub_id": "a/b", "random_init": 3}], "m.toml")
