"""Hub models on nodes without the hub: the local Hugging Face cache first, one line when a model
is neither cached nor reachable, `fetch-models` and `models --cached`.

The hub is a local endpoint (`tests.engine.local_hub`, its fixtures in conftest.py): a closed
port (refused at once), a socket that counts the connections made to it, or a tiny HTTP server
that answers.
Caches are built here in huggingface_hub's layout (blobs named by their sha256, snapshot files
linked to them, refs/main) from tiny checkpoints saved with save_pretrained.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import socket
from pathlib import Path

import huggingface_hub
import numpy as np
import pytest
from huggingface_hub import constants

import engine.encoders.hf  # noqa: F401  (imported before the timed load)
from engine.cli import main
from engine.commands.fetch_models import SKIPPED
from engine.encoders import EncoderOptions, build_encoder, code_reference
from engine.encoders import hub as hub_module
from engine.registry import resolve_model
from store import hf_cache
from store.catalog import load_models
from store.paths import resolve_store
from store.pins import read_pins
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task
from tests.engine.in_process import refused, run
from tests.engine.local_hub import closed_port
from tests.engine.tiny_models import build, random_dna

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "org/tiny-bert"
SEQS = random_dna(6, 20, 60, seed=3)


@pytest.fixture
def hub(undecided_hub, monkeypatch, tmp_path):
    """An empty cache and a hub that refuses connections, the run's decision not yet made."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "ENDPOINT", closed_port())
    return cache


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return build("bert", tmp_path_factory.mktemp("ckpt") / "tiny-bert", max_len=64)


def into_cache(cache: Path, repo_id: str, checkpoint: Path, commit: str = COMMIT,
               ref: str | None = "main", names=None) -> Path:
    """The checkpoint's files (those of `names`, default all) in huggingface_hub's cache
    layout; returns the snapshot folder."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    for file in sorted(p for p in checkpoint.rglob("*") if p.is_file()):
        rel = file.relative_to(checkpoint).as_posix()
        if names is not None and rel not in names:
            continue
        data = file.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():          # a file fetched before stays
            link.symlink_to(os.path.relpath(blob, link.parent))
    if ref:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot


def hub_model(spec: str, store: Path | None = None):
    return resolve_model(spec, load_models(store / "models.toml" if store else None))


def embed(spec: str, store: Path | None = None) -> np.ndarray:
    return build_encoder(hub_model(spec, store), EncoderOptions(device="cpu")).encode(SEQS)


def local_embeddings(folder: Path) -> np.ndarray:
    return build_encoder(resolve_model(str(folder), {}),
                         EncoderOptions(device="cpu")).encode(SEQS)


# 1. neither cached nor reachable: one line, at once

@pytest.mark.parametrize("offline", [False, True])
def test_an_uncached_model_fails_at_once_in_one_line(hub, monkeypatch, offline):
    """Refused at the first answer: the hub is asked once (never, offline), no retry loop."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    model = hub_model(REPO)
    attempts = []
    connect = socket.socket.connect

    def counted(sock, address):
        attempts.append(address)
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", counted)
    with pytest.raises(GenebError) as caught:
        build_encoder(model, EncoderOptions(device="cpu"))
    assert len(attempts) == (0 if offline else 1), attempts
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"model {REPO}: {REPO} is not in the Hugging Face cache {hub} ")
    assert f"`geneb-engine fetch-models {REPO}`" in message
    # huggingface_hub 1.x reaches the hub through httpx, 0.x (transformers 4's) through requests
    refusal = "ConnectError" if int(huggingface_hub.__version__.split(".")[0]) >= 1 else \
        "ConnectionError"
    why = "HF_HUB_OFFLINE is set" if offline else \
        f"the hub at {constants.ENDPOINT} cannot be reached ({refusal})"
    assert why in message, message


def test_fill_says_it_in_one_line(hub, tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "tiny_task.csv", 20, 10, 2, 1, length=30)
    rc, err = run(capsys, "fill", "--suite", str(suite), "--models", f"{REPO}@{COMMIT}",
                  "--regimes", "full", "--store", str(tmp_path / "store"))
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert (f"model {REPO}: {REPO} at revision {COMMIT} is not in the Hugging Face cache {hub}"
            in err and f"`geneb-engine fetch-models {REPO}@{COMMIT}`" in err), err


def test_after_a_run_found_the_hub_unreachable_the_dashboard_says_it_does_not_run_here(
        hub, tmp_path, capsys, monkeypatch):
    """What the run found is recorded (`store.hf_cache.record_reach`): "runs here" then says no
    with the reason, where before it could not tell (?); nothing asks the network."""
    from dataclasses import asdict

    from store.catalog import ModelMeta
    from store.runnable import assess

    monkeypatch.setenv("HF_ENDPOINT", constants.ENDPOINT)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    entry = asdict(ModelMeta.one_off(REPO, hub_id=REPO, revision=COMMIT, params=1000))
    before = assess(entry, REPO, installed=lambda package: True)
    assert before.runs_here is None and before.runnable
    assert "whether the hub can be reached is not known" in before.unsure
    test_fill_says_it_in_one_line(hub, tmp_path, capsys)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")   # the run's switch for itself, not a reader's
    after = assess(entry, REPO, installed=lambda package: True)
    assert after.runs_here is False
    assert after.why.startswith(f"no cached snapshot of {REPO} at {COMMIT} and the hub is "
                                f"offline (the hub at {constants.ENDPOINT} cannot be reached (")
    assert f"`geneb-engine fetch-models {REPO}`" in after.why


# 2. cached: loads from the cache

def test_a_cached_pinned_model_loads_without_any_network_call(hub, listener, tiny_bert):
    into_cache(hub, REPO, tiny_bert, ref=None)
    got = embed(f"{REPO}@{COMMIT}")
    np.testing.assert_allclose(got, local_embeddings(tiny_bert), atol=1e-6)
    assert listener.connections == 0
    # its remote-code check read the snapshot's files, not the hub
    assert code_reference(REPO, COMMIT, hub=True) == "" and listener.connections == 0


def test_an_unpinned_model_loads_its_cached_main_when_the_hub_is_unreachable(
        hub, listener, tiny_bert):
    names = {"config.json"}            # what a remote-code check alone leaves in the cache
    snapshot = into_cache(hub, REPO, tiny_bert, names=names)
    with pytest.raises(GenebError, match=f"model {REPO}: {REPO} is not in the Hugging Face "
                                         f"cache .* the hub at {listener.url} cannot be "
                                         "reached"):
        embed(REPO)
    assert listener.connections == 1      # the run's one question, not one per file
    assert constants.HF_HUB_OFFLINE     # every later hub call of the run reads the cache
    into_cache(hub, REPO, tiny_bert)
    assert hub_module.local_checkpoint(REPO, None) == snapshot
    np.testing.assert_allclose(embed(REPO), local_embeddings(tiny_bert), atol=1e-6)
    assert listener.connections == 1


def test_a_snapshot_is_whole_with_its_weights_and_every_shard(tmp_path):
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    (snapshot / "config.json").write_text("{}")
    assert hf_cache.missing_files(snapshot) == [
        "weights (*.safetensors, *.bin, *.pt, *.pth, *.ckpt)"]
    (snapshot / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "model-1.safetensors", "b": "model-2.safetensors"}}))
    (snapshot / "model-1.safetensors").write_bytes(b"x")
    assert hf_cache.missing_files(snapshot) == ["model-2.safetensors"]
    (snapshot / "model-2.safetensors").write_bytes(b"y")
    assert hf_cache.missing_files(snapshot) == []


# 3. fetch-models and models --cached

def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `geneb-engine argv` in this process."""
    capsys.readouterr()
    rc = main(list(argv))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def fake_hub_files(monkeypatch, checkpoint: Path) -> list:
    """list_repo_files and snapshot_download serving `checkpoint` (plus a TensorFlow and a
    PyTorch-pickle copy of its weights) into the cache layout at COMMIT."""
    import huggingface_hub

    (checkpoint / "tf_model.h5").write_bytes(b"tf weights")
    (checkpoint / "pytorch_model.bin").write_bytes(b"pickled weights")
    served = sorted(p.relative_to(checkpoint).as_posix() for p in checkpoint.rglob("*")
                    if p.is_file())
    calls = []

    def download(repo_id, *, revision=None, ignore_patterns=(), **kwargs):
        calls.append((repo_id, revision, list(ignore_patterns)))
        keep = {n for n in served if not any(fnmatch.fnmatch(n, p) for p in ignore_patterns)}
        ref = None if revision == COMMIT else revision or "main"
        return str(into_cache(Path(constants.HF_HUB_CACHE), repo_id, checkpoint, ref=ref,
                              names=keep))

    monkeypatch.setattr(huggingface_hub, "list_repo_files", lambda repo_id, revision=None:
                        served)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    return calls


@pytest.fixture
def store(tmp_path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny"\nhub_id = "{REPO}"\nrevision = "{COMMIT}"\n'
        'params = 1000\n')
    return store


def served(tmp_path: Path, checkpoint: Path) -> Path:
    """A copy of the checkpoint for `fake_hub_files` to add to."""
    copy = tmp_path / "served"
    copy.mkdir()
    for file in checkpoint.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    return copy


def test_fetch_models_records_every_file_and_models_cached_lists_it(
        hub, answering_hub, store, tmp_path, tiny_bert, monkeypatch, capsys):
    calls = fake_hub_files(monkeypatch, served(tmp_path, tiny_bert))

    rc, out, _ = cli(capsys, "models", "--cached", "--json", "--store", str(store))
    assert rc == 0 and json.loads(out) == []

    rc, out, err = cli(capsys, "fetch-models", "tiny", "kmer-3", "--store", str(store))
    out = out.splitlines()
    assert rc == 0, err
    snapshot = hub / "models--org--tiny-bert" / "snapshots" / COMMIT
    manifest_file = hub / "models--org--tiny-bert" / "geneb-fetched" / f"{COMMIT}.json"
    assert [line.split(",")[0] for line in out] == [f"tiny: {REPO}@{COMMIT[:12]}",
                                                     "kmer-3: nothing to fetch (its entry names "
                                                     "no hub_id)"]
    assert str(snapshot) in out[0] and str(manifest_file) in out[0]
    assert calls == [(REPO, COMMIT, [*SKIPPED, "pytorch_model*.bin"])]
    manifest = json.loads(manifest_file.read_text())
    expected = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in tiny_bert.iterdir() if p.is_file()}
    assert {n: f["sha256"] for n, f in manifest["files"].items()} == expected
    assert (manifest["model_id"], manifest["hub_id"], manifest["commit"]) == \
        ("tiny", REPO, COMMIT)

    rc, out, _ = cli(capsys, "models", "--cached", "--json", "--store", str(store))
    assert rc == 0 and [(m["model_id"], m["checkpoint"]) for m in json.loads(out)] == \
        [("tiny", str(snapshot))]
    rc, out, _ = cli(capsys, "models", "--cached", "--store", str(store))
    assert rc == 0 and "tiny" in out and "kmer-3" not in out

    # the manifest decides: a file it lists gone, and the snapshot is no longer whole
    (snapshot / "tokenizer.json").unlink()
    rc, out, _ = cli(capsys, "models", "--cached", "--json", "--store", str(store))
    assert rc == 0 and json.loads(out) == []


def test_fetch_models_checks_names_and_the_hub_first(hub, store, tmp_path, tiny_bert,
                                                     monkeypatch, capsys):
    calls = fake_hub_files(monkeypatch, served(tmp_path, tiny_bert))
    refused(capsys, store, "fetch-models", "tiny", "kmer3", "--store", str(store),
            names=("kmer3", "did you mean kmer-3"))
    err = refused(capsys, store, "fetch-models", "tiny", "--store", str(store),
                  names=("cannot fetch tiny", "cannot be reached", str(hub)))
    assert err.startswith("geneb-engine fetch-models: ")
    assert calls == [] and not any(hub.iterdir())


def test_fetch_models_pins_the_commit_it_fetched_for_a_model_that_runs_hub_code(
        hub, answering_hub, store, tmp_path, tiny_bert, monkeypatch, capsys):
    """A remote-code entry without a revision is fetched at main and the commit fetched is
    pinned for the store (`store.pins`), so an offline fill runs exactly that code; the next
    fetch asks for the pinned commit. A model without code, or with its commit, pins nothing."""
    calls = fake_hub_files(monkeypatch, served(tmp_path, tiny_bert))
    (store / "models.toml").write_text(
        (store / "models.toml").read_text() + f'\n[[model]]\nmodel_id = "coded"\n'
        f'hub_id = "{REPO}"\nremote_code = "required"\nparams = 1000\n')
    rc, out, err = cli(capsys, "fetch-models", "tiny", "--store", str(store))
    assert rc == 0 and not (store / "pins.toml").exists(), err
    rc, out, err = cli(capsys, "fetch-models", "coded", "--json", "--store", str(store))
    assert rc == 0, err
    assert json.loads(out)[0]["pinned"] == str(store / "pins.toml")
    assert calls[-1][:2] == (REPO, None)
    assert load_models(store / "models.toml")["coded"].revision is None    # as written
    assert {k: p.commit for k, p in read_pins(resolve_store(store)).items()} == \
        {(REPO, "main"): COMMIT}
    rc, out, err = cli(capsys, "fetch-models", "coded", "--store", str(store))
    assert rc == 0 and calls[-1][:2] == (REPO, COMMIT), (err, calls)
    assert "pinned" not in out
