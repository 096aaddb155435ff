"""A checkpoint folder's revision is the sha256 of the files that define the model
(`store.fingerprint`): weights, config, tokenizer and code count; a README, a log, an image, a
training record or a hidden file does not; a file is hashed again only when it changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from store.fingerprint import (
    MODEL_FILES,
    checkpoint_fingerprint,
    defines_model,
    folder_sha256,
)
from store.vocab.errors import GenebError


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lines(files: dict[str, bytes]) -> str:
    """The fingerprint's hash of `files` (relative path -> bytes), in path order."""
    return sha("".join(f"{name}\0{sha(data)}\n" for name, data in sorted(files.items()))
               .encode())


MODEL = {"config.json": b"{}", "model.safetensors": b"\x00\x01", "tokenizer.json": b"{\"v\": 1}",
         "tokenizer_config.json": b"{}", "special_tokens_map.json": b"{}",
         "generation_config.json": b"{}", "vocab.txt": b"A\nC\n", "modeling_x.py": b"pass\n",
         "sub/pytorch_model.bin": b"\x02"}
OTHERS = {"README.md": b"# my model\n", "logs/train.log": b"step 1\n", "plot.png": b"\x89PNG",
          "trainer_state.json": b"{}", "eval_results.json": b"{}", "LICENSE": b"MIT\n"}


def folder_of(tmp_path: Path, files: dict[str, bytes]) -> Path:
    folder = tmp_path / "ckpt"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def test_the_revision_is_the_hash_of_the_files_that_define_the_model(tmp_path):
    folder = folder_of(tmp_path, {**MODEL, **OTHERS, ".git/HEAD": b"ref", ".hidden": b"x"})
    assert checkpoint_fingerprint(folder) == f"checkpoint-sha256-{lines(MODEL)}"
    # the rule before: every non-hidden file, under its own prefix (what older rows carry)
    assert folder_sha256(folder) == f"folder-sha256-{lines({**MODEL, **OTHERS})}"


@pytest.mark.parametrize("name", ["README.md", "logs/train.log", "docs/notes.txt", "image.png",
                                  "events.out.tfevents.1", "all_results.json", "card.yaml.bak"])
def test_adding_or_editing_a_document_or_a_log_changes_nothing(tmp_path, name):
    folder = folder_of(tmp_path, MODEL)
    before = checkpoint_fingerprint(folder)
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"anything")
    assert checkpoint_fingerprint(folder) == before
    (folder / name).write_bytes(b"anything else, longer")
    assert checkpoint_fingerprint(folder) == before


@pytest.mark.parametrize("name", sorted(MODEL))
def test_changing_any_file_that_defines_the_model_changes_the_revision(tmp_path, name):
    folder = folder_of(tmp_path, MODEL)
    before = checkpoint_fingerprint(folder)
    (folder / name).write_bytes(MODEL[name] + b" ")
    assert checkpoint_fingerprint(folder) not in (before, f"checkpoint-sha256-{lines(MODEL)}")


def test_the_rule_names_weights_config_tokenizer_and_code():
    assert all(defines_model(n) for n in (
        "model-00001-of-00002.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
        "model.PT", "weights.ckpt", "model.gguf", "tf_model.h5", "flax_model.msgpack",
        "model.onnx", "config.json", "adapter_config.json", "preprocessor_config.json",
        "evo.yml", "tokenizer.model", "spiece.model", "merges.txt", "vocab.json",
        "added_tokens.json", "tokenization_x.py"))
    assert not any(defines_model(n) for n in (
        "README.md", "readme.txt", "train.log", "notes.md", "LICENSE", "plot.png",
        "trainer_state.json", "all_results.json", "requirements.txt"))
    assert "*.py" in MODEL_FILES


def test_a_file_is_read_again_only_when_it_changed_whatever_the_process(tmp_path,
                                                                        monkeypatch):
    """The files' digests are remembered in the user cache: a later call (a later `status`,
    a report, the run's load after its plan) reads none of the unchanged weights, and reads a
    changed file again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = folder_of(tmp_path, {"config.json": b"{}", "w.bin": b"\x00\x01"})
    first = checkpoint_fingerprint(folder)
    reads: list[str] = []
    plain = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest",
                        lambda f, name: reads.append(Path(f.name).name) or plain(f, name))
    assert checkpoint_fingerprint(folder) == first and reads == []
    (folder / "w.bin").write_bytes(b"\x00\x02\x03")
    second = checkpoint_fingerprint(folder)
    assert reads == ["w.bin"]
    assert second == f"checkpoint-sha256-{lines({'config.json': b'{}', 'w.bin': bytes([0, 2, 3])})}"
    (tmp_path / "cache" / "geneb" / "file-sha256.json").write_text("not json")
    assert checkpoint_fingerprint(folder) == second     # a broken cache is only recomputed


def test_a_file_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    folder = folder_of(tmp_path, MODEL)
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(tmp_path / "gone.safetensors")
    with pytest.raises(GenebError, match=r"ckpt: cannot read .*gone.safetensors"):
        checkpoint_fingerprint(folder)
