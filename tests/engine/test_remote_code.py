"""Remote code never runs without the user's opt-in, whatever the registry entry says.

A checkpoint whose config.json or tokenizer_config.json has `auto_map` names Python code that
transformers would import. Here that code (`evil.py`) writes a marker file when it is imported;
`geneb-engine fill` must refuse it (exit 2, one line naming the model and --trust-remote-code)
before anything is loaded or written, even with "y" piped to transformers' interactive prompt.
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.encoders import check_remote_code, code_reference
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task
from tests.engine.tiny_models import build

ROOT = Path(__file__).resolve().parents[2]
AUTO_MAP = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}
TOKENIZER_AUTO_MAP = {"AutoTokenizer": ["evil.EvilTokenizer", None]}


def evil_checkpoint(folder: Path, where: str) -> tuple[Path, Path]:
    """A tiny BERT checkpoint whose `where` file (config / tokenizer) names code in evil.py."""
    build("bert", folder, max_len=64)
    marker = folder.parent / f"{folder.name}-ran"
    (folder / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('remote code ran')\n")
    if where == "config":
        config = json.loads((folder / "config.json").read_text())
        # A model type transformers does not know: no local class to fall back on, so an
        # unset trust_remote_code would reach transformers' interactive prompt.
        config.update(model_type="evil", auto_map=AUTO_MAP)
        (folder / "config.json").write_text(json.dumps(config))
    else:
        tok = json.loads((folder / "tokenizer_config.json").read_text())
        tok.update(tokenizer_class="EvilTokenizer", auto_map=TOKENIZER_AUTO_MAP)
        (folder / "tokenizer_config.json").write_text(json.dumps(tok))
    return folder, marker


def fill(tmp_path: Path, store: Path, model: str, *extra: str) -> subprocess.CompletedProcess:
    suite = tmp_path / "suite"
    if not suite.exists():
        suite.mkdir()
        write_task(suite / "tiny_task.csv", 20, 10, 2, 1, length=30)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home"),
           "TRANSFORMERS_VERBOSITY": "error"}
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", "fill", "--suite", str(suite), "--models", model,
         "--regimes", "full", "--store", str(store), *extra],
        cwd=ROOT, env=env, input="y\ny\ny\n", capture_output=True, text=True, timeout=120)


def assert_refused(proc: subprocess.CompletedProcess, model_id: str, marker: Path,
                   store: Path) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert f"model {model_id}:" in lines[0] and "--trust-remote-code" in lines[0], lines[0]
    assert not marker.exists(), "the checkpoint's code ran"
    results = store / "results"
    assert not results.exists() or not any(p.is_file() for p in results.rglob("*")), \
        sorted(results.rglob("*"))
    embeddings = store / "embeddings"
    assert not embeddings.exists() or not any(embeddings.iterdir())


@pytest.mark.parametrize("where", ["config", "tokenizer"])
def test_fill_refuses_code_references_without_the_opt_in(tmp_path, where):
    ckpt, marker = evil_checkpoint(tmp_path / "evil-ckpt", where)

    # (a) the one-off local path
    store = tmp_path / "store-a"
    assert_refused(fill(tmp_path, store, str(ckpt)), "evil-ckpt", marker, store)

    # (b) a registry entry that does not say remote_code = "required"
    store = tmp_path / "store-b"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "innocent"\npath = "{ckpt}"\nparams = 1000\n')
    assert_refused(fill(tmp_path, store, "innocent"), "innocent", marker, store)


def test_code_reference_reads_both_files(tmp_path):
    ckpt, _ = evil_checkpoint(tmp_path / "tok-ckpt", "tokenizer")
    assert code_reference(str(ckpt)) == "tokenizer_config.json"
    tok = json.loads((ckpt / "tokenizer_config.json").read_text())
    del tok["auto_map"]
    (ckpt / "tokenizer_config.json").write_text(json.dumps(tok))
    assert code_reference(str(ckpt)) == ""
    (ckpt / "tokenizer_config.json").unlink()                # absent: nothing to run
    assert code_reference(str(ckpt)) == ""
    (ckpt / "config.json").write_text(json.dumps({"model_type": "bert", "auto_map": AUTO_MAP}))
    assert code_reference(str(ckpt)) == "config.json"
    # A local directory that names code: refused without the opt-in, allowed with it.
    with pytest.raises(GenebError, match=r"model m: .*auto_map.*--trust-remote-code"):
        check_remote_code("m", str(ckpt), None, "no", False)
    assert check_remote_code("m", str(ckpt), None, "no", True) is True
    assert check_remote_code("m", str(tmp_path), None, "no", True) is False   # no code: no trust


def fake_hub(monkeypatch, tmp_path: Path, files: dict[str, dict | Exception]) -> list:
    """hf_hub_download serving `files` (a dict is written as JSON, an exception is raised)."""
    import huggingface_hub

    calls = []

    def download(repo_id, filename, *, revision=None, **kwargs):
        calls.append((repo_id, filename, revision))
        value = files[filename]
        if isinstance(value, Exception):
            raise value
        path = tmp_path / "hub" / filename
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(value))
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    return calls


def test_hub_ids_are_checked_at_the_pinned_revision(monkeypatch, tmp_path):
    from huggingface_hub.errors import EntryNotFoundError

    pin = "a" * 40
    calls = fake_hub(monkeypatch, tmp_path, {
        "config.json": {"model_type": "bert", "auto_map": AUTO_MAP},
        "tokenizer_config.json": EntryNotFoundError("no tokenizer_config.json")})
    with pytest.raises(GenebError, match=r"model org/evil: .*--trust-remote-code.*@<commit>"):
        check_remote_code("org/evil", "org/evil", pin, "no", False, hub=True)
    assert ("org/evil", "config.json", pin) in calls
    with pytest.raises(GenebError, match=r"org/evil: --trust-remote-code needs a pinned revision"):
        check_remote_code("org/evil", "org/evil", "main", "no", True, hub=True)
    assert check_remote_code("org/evil", "org/evil", pin, "no", True, hub=True) is True
    # preflight (hub=False) never goes to the hub: the encoder checks when it is built.
    calls.clear()
    assert check_remote_code("org/evil", "org/evil", pin, "no", False) is False
    assert calls == []

    fake_hub(monkeypatch, tmp_path, {"config.json": {"model_type": "bert"},
                                     "tokenizer_config.json": EntryNotFoundError("absent")})
    assert code_reference("org/plain", pin, hub=True) == ""
    assert check_remote_code("org/plain", "org/plain", None, "no", True, hub=True) is False


def test_an_unreachable_hub_cannot_check_and_trust_stays_false(monkeypatch, tmp_path):
    from huggingface_hub.errors import LocalEntryNotFoundError

    offline = LocalEntryNotFoundError("offline and not in the cache")
    fake_hub(monkeypatch, tmp_path, {"config.json": offline, "tokenizer_config.json": offline})
    assert code_reference("org/x", None, hub=True) is None
    assert check_remote_code("org/x", "org/x", None, "no", False, hub=True) is False
    assert check_remote_code("org/x", "org/x", None, "no", True, hub=True) is False


def test_every_load_passes_trust_remote_code_explicitly(tmp_path):
    from engine.encoders.hf import HFEncoder

    seen = []

    class Recorder:
        @staticmethod
        def from_pretrained(source, **kwargs):
            seen.append(kwargs)
            return object()

    enc = object.__new__(HFEncoder)
    enc.source, enc.revision, enc.model_id = str(tmp_path), None, "m"
    for trust in (False, True):
        enc._trust = trust
        enc._from_pretrained(Recorder)
        enc._from_pretrained(Recorder, dtype="x")
    assert [k["trust_remote_code"] for k in seen] == [False, False, True, True]


def test_transformers_raises_instead_of_prompting(monkeypatch, tmp_path):
    """With trust_remote_code=False the installed transformers never calls input(): a tokenizer
    whose tokenizer_config.json names code is refused (transformers 4) or built from its
    built-in class (transformers 5), its code never run."""
    import transformers
    from packaging.version import Version
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    def no_prompt(*args, **kwargs):
        raise AssertionError("transformers prompted")

    monkeypatch.setattr(builtins, "input", no_prompt)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    ckpt, marker = evil_checkpoint(tmp_path / "cfg", "config")
    for cls in (AutoConfig, AutoModel):
        with pytest.raises(ValueError, match="trust_remote_code"):
            cls.from_pretrained(str(ckpt), trust_remote_code=False)
    AutoTokenizer.from_pretrained(str(ckpt), trust_remote_code=False)   # falls back, no code
    tok_ckpt, tok_marker = evil_checkpoint(tmp_path / "tok", "tokenizer")
    if Version(transformers.__version__) < Version("5"):
        with pytest.raises(ValueError, match="trust_remote_code"):
            AutoTokenizer.from_pretrained(str(tok_ckpt), trust_remote_code=False)
    else:
        AutoTokenizer.from_pretrained(str(tok_ckpt), trust_remote_code=False)   # built-in
    assert not marker.exists() and not tok_marker.exists()
