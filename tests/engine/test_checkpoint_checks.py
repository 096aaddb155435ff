"""A checkpoint folder that cannot give real embeddings is refused in one line before anything
is written (`engine.encoders.checkpoint_checks`, run by `preflight`): no tokenizer files of its
own, a tokenizer that maps most of the suite's nucleotides to its unknown token, weights
transformers cannot load (truncated, pickled objects). A load that fails past those checks is
one line too, and the store it leaves is consistent (both catalogs). Tiny checkpoints built with
save_pretrained, loaded through the same code path users take."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from engine.cli import main  # noqa: E402
from engine.encoders.checkpoint_checks import (  # noqa: E402
    UNKNOWN_LIMIT,
    unknown_problem,
    unknown_share,
    weights_problem,
)
from store.doctor import check_catalogs  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.tables.catalogs import read_catalog  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.in_process import refused, run  # noqa: E402
from tests.engine.tiny_models import build, char_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """A tiny BERT checkpoint, a one-task suite folder and a store where `fill` ran it."""
    root = tmp_path_factory.mktemp("checkpoint-checks")
    good = build("bert", root / "good", max_len=64)
    suite = root / "dna-tasks"
    suite.mkdir()
    write_task(suite / "one_task.csv", 24, 12, 2, 1, length=30)
    store = root / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", str(good),
                 "--regimes", "full"]) == 0
    return {"good": good, "suite": suite, "store": store}


def variant(ran, folder: Path, change) -> Path:
    """A copy of the good checkpoint in `folder`, changed by `change(folder)`."""
    shutil.copytree(ran["good"], folder)
    change(folder)
    return folder


def without_tokenizer(folder: Path) -> None:
    for f in folder.iterdir():
        if "token" in f.name:
            f.unlink()


def fill(ran, store: Path, model: Path, *more: str) -> tuple[str, ...]:
    return ("fill", "--store", str(store), "--suite", str(ran["suite"]), "--models", str(model),
            "--regimes", "full", *more)


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_folder_without_tokenizer_files_is_refused(ran, tmp_path, capsys, dry_run):
    """transformers would build a 5-token tokenizer: every sequence [CLS] [UNK] [SEP]."""
    model = variant(ran, tmp_path / "no-tokenizer", without_tokenizer)
    assert sorted(p.name for p in model.iterdir()) == ["config.json", "model.safetensors"]
    refused(capsys, ran["store"], *fill(ran, ran["store"], model, *["--dry-run"] * dry_run),
            names=("model no-tokenizer:", str(model), "holds no tokenizer files",
                   "tokenizer.json, tokenizer_config.json, vocab.txt"))


def test_a_tokenizer_that_maps_dna_to_its_unknown_token_is_refused_with_the_share(
        ran, tmp_path, capsys):
    def other_alphabet(folder: Path) -> None:
        without_tokenizer(folder)
        char_tokenizer(64, letters="XYZ").save_pretrained(folder)

    model = variant(ran, tmp_path / "xyz-tokenizer", other_alphabet)
    refused(capsys, ran["store"], *fill(ran, ran["store"], model),
            names=("model xyz-tokenizer: its tokenizer maps 100% of the nucleotides of 36 "
                   "sequences sampled from suite dna-tasks to its unknown token [UNK]",
                   "refused above 50%"))


def test_the_unknown_share_counts_letters_no_known_token_covers():
    """Hand-counted: a tokenizer that knows A and C only."""
    tokenizer = char_tokenizer(64, letters="AC")
    assert unknown_share(tokenizer, ["ACGT", "AAAC", "GGGG"]) == (6 / 12, "nucleotides")
    assert unknown_problem(0.5, "nucleotides", "[UNK]", 3, "suite s") is None    # at the limit
    assert unknown_share(tokenizer, ["ACGTT"]) == (3 / 5, "nucleotides")
    assert UNKNOWN_LIMIT == 0.5
    assert "maps 60% of the nucleotides of 1 sequences sampled from suite s to its unknown " \
           "token [UNK]" in unknown_problem(0.6, "nucleotides", "[UNK]", 1, "suite s")


def test_a_tokenizer_without_offsets_is_measured_by_its_tokens():
    class Slow:             # a Python tokenizer: one token per letter, ids 0-3 for ACGT, 9 unknown
        is_fast, unk_token_id = False, 9

        def __call__(self, texts, add_special_tokens):
            assert not add_special_tokens
            return {"input_ids": [["ACGT".find(c) if c in "ACGT" else 9 for c in t]
                                  for t in texts]}

    assert unknown_share(Slow(), ["ACXX", "XXXX"]) == (6 / 8, "tokens")
    assert "gives its unknown token <unk> for 75% of the tokens" in \
        unknown_problem(0.75, "tokens", "<unk>", 2, "suite s")


def truncate(folder: Path) -> None:
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:len(data) // 2])


def test_truncated_weights_are_refused_before_a_store_is_created(ran, tmp_path, capsys):
    """geneb-mini is generated into the store only once every check passed."""
    model = variant(ran, tmp_path / "truncated", truncate)
    fresh = tmp_path / "new-store"
    refused(capsys, fresh, "fill", "--store", str(fresh), "--suite", "geneb-mini", "--tasks",
            "mini_promoter_tata", "--models", str(model), "--regimes", "full",
            names=(f"model truncated: {model / 'model.safetensors'}: truncated:",
                   "bytes its header names"))
    assert not fresh.exists()


def touch(path: str) -> None:
    """What the pickle below would run, were it unpickled without weights_only."""
    Path(path).write_text("ran")


class Payload:
    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return touch, (self.path,)


def test_pickled_weights_are_refused_and_never_run(ran, tmp_path, capsys):
    marker = tmp_path / "the-pickle-ran"

    def pickled(folder: Path) -> None:
        (folder / "model.safetensors").unlink()
        torch.save({"embeddings.word_embeddings.weight": torch.zeros(10, 32),
                    "config": Payload(marker)}, folder / "pytorch_model.bin")

    model = variant(ran, tmp_path / "pickled", pickled)
    fresh = tmp_path / "new-store"
    refused(capsys, ran["store"], *fill(ran, ran["store"], model),
            names=(f"model pickled: {model / 'pytorch_model.bin'}:", "weights_only=True",
                   "pickled Python objects", "Unsupported global", "nothing of it was run"))
    refused(capsys, fresh, *fill(ran, fresh, model), names=("pickled Python objects",))
    assert not marker.exists() and not fresh.exists()


def test_weights_transformers_loads_pass_and_those_it_cannot_are_named(ran, tmp_path):
    from transformers import AutoModel

    good = ran["good"]
    assert weights_problem(good) is None

    def as_bin(folder: Path, **save) -> Path:
        state = AutoModel.from_pretrained(str(good)).state_dict()
        (folder / "model.safetensors").unlink()
        torch.save(state, folder / "pytorch_model.bin", **save)
        return folder

    for name, save in (("zip-bin", {}), ("legacy-bin", {"_use_new_zipfile_serialization": False})):
        folder = variant(ran, tmp_path / name, lambda f, save=save: as_bin(f, **save))
        assert weights_problem(folder) is None, name
        AutoModel.from_pretrained(str(folder))          # the check agrees with transformers

    none = variant(ran, tmp_path / "none", lambda f: (f / "model.safetensors").unlink())
    assert "holds no weights (looked for model.safetensors, model.safetensors.index.json, " \
           "pytorch_model.bin, pytorch_model.bin.index.json)" in weights_problem(none)

    def longer(folder: Path) -> None:
        with open(folder / "model.safetensors", "ab") as f:
            f.write(b"\0" * 7)

    assert "7 bytes beyond the" in weights_problem(variant(ran, tmp_path / "longer", longer))

    def sharded(folder: Path) -> None:
        (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
        (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))

    folder = variant(ran, tmp_path / "sharded", sharded)
    assert weights_problem(folder) == (f"{folder / 'model.safetensors.index.json'} names the "
                                       f"shard model-00002-of-00002.safetensors, which {folder} "
                                       "lacks")
    (folder / "model-00002-of-00002.safetensors").write_bytes(b"")
    assert "not a safetensors file" in weights_problem(folder)


def test_a_load_that_fails_past_the_checks_is_one_line_and_the_store_stays_whole(
        ran, tmp_path, capsys):
    """An edited config.json (hidden size 64, weights of 32): transformers raises at load,
    after the store was opened; both catalogs are there (the model in neither: it never
    loaded) and doctor finds nothing. An existing store is left as it was."""
    def wider(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        config.update(hidden_size=64, intermediate_size=128)
        (folder / "config.json").write_text(json.dumps(config))

    model = variant(ran, tmp_path / "wider", wider)
    fresh = tmp_path / "new-store"
    rc, err = run(capsys, *fill(ran, fresh, model))
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"geneb-engine fill: model wider: cannot load {model}: RuntimeError"), err
    paths = StorePaths(fresh)
    assert paths.catalog_table("models").exists() and paths.catalog_table("tasks").exists()
    assert check_catalogs(paths) == []
    assert read_catalog(paths, "models").is_empty()
    refused(capsys, ran["store"], *fill(ran, ran["store"], model),
            names=(f"model wider: cannot load {model}: RuntimeError",))
