"""The Evo-1 adapter on a tiny randomly initialised Hyena-only StripedHyena, saved as the hub
checkpoint is (safetensors shards with an index, keys under `backbone.`, the tied unembedding
stored once) beside its YAML config, named by `path` entries with `encoder = "evo"` and loaded
through `load_models` / `resolve_model` / `build_encoder` as `fill` loads it. The reference is
the package's model itself, called on one sequence at a time with the package's tokenizer, its
final-norm output averaged over the tokens (the official extractor's recipe).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

pytest.importorskip("stripedhyena")
pytest.importorskip("evo")

from evo.tokenizer import CharLevelTokenizer  # noqa: E402
from stripedhyena.model import StripedHyena  # noqa: E402
from stripedhyena.utils import dotdict  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder, preflight  # noqa: E402
from engine.encoders.evo import EvoEncoder, config_of  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.adapter_runs import fill_one_task  # noqa: E402
from tests.engine.in_process import refused  # noqa: E402
from tests.engine.tiny_models import random_dna  # noqa: E402

HIDDEN = 16
# A Hyena-only StripedHyena in the format of the evo-model package's configs/*.yml.
TINY = {
    "vocab_size": 512, "hidden_size": HIDDEN, "num_filters": HIDDEN, "num_layers": 3,
    "attn_layer_idxs": [], "hyena_layer_idxs": [0, 1, 2], "short_filter_length": 3,
    "num_attention_heads": 2, "short_filter_bias": True, "eps": 1.0e-6, "state_size": 4,
    "inner_size_multiple_of": 16, "make_vocab_size_divisible_by": 8, "proj_groups": 1,
    "hyena_filter_groups": 1, "split_k0": True, "model_parallel_size": 1,
    "tie_embeddings": True, "final_norm": True, "use_flash_attn": True,
    "use_flash_rmsnorm": False, "use_flash_depthwise": False, "use_flashfft": False,
    "column_split": True, "inference_mode": True, "prefill_style": "fft",
    "mlp_activation": "gelu", "tokenizer_type": "CharLevelTokenizer",
}


def tiny_model(seed: int = 0) -> StripedHyena:
    """The package's model from TINY, float32, with weights larger than its initialisation
    (D starts at zero) so that every block shapes the embedding."""
    torch.manual_seed(seed)
    model = StripedHyena(dotdict(TINY)).float().eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "poles" not in name:
                p.add_(0.3 * torch.randn_like(p))
    return model


def save_checkpoint(model: StripedHyena, folder: Path, config: dict | None = TINY) -> Path:
    """The hub checkpoint's layout: two safetensors shards and their index, `backbone.` keys,
    no `unembed.weight` (tied to the embedding); the config as YAML beside them."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    state = {f"backbone.{k}": v.detach().clone().contiguous()
             for k, v in model.state_dict().items() if k != "unembed.weight"}
    names = sorted(state)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    for shard, keys in shards.items():
        save_file({k: state[k] for k in keys}, str(folder / shard))
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {k: shard for shard, keys in shards.items() for k in keys}}))
    if config is not None:
        (folder / "tiny_inference.yml").write_text(yaml.safe_dump(config))
    return folder


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("evo")
    model = tiny_model()
    ckpt = save_checkpoint(model, root / "tiny-evo")
    attn = root / "tiny-evo-attn"         # attention layers, and no weights at all
    attn.mkdir()
    (attn / "attn_inference.yml").write_text(yaml.safe_dump(
        {**TINY, "attn_layer_idxs": [1], "hyena_layer_idxs": [0, 2]}))
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny-evo"\npath = "{ckpt}"\nencoder = "evo"\n'
        'batch_size = 4\n\n'
        f'[[model]]\nmodel_id = "tiny-evo-cut"\npath = "{ckpt}"\nencoder = "evo"\n'
        'max_tokens = 12\n\n'
        f'[[model]]\nmodel_id = "tiny-evo-context"\npath = "{ckpt}"\nencoder = "evo"\n'
        'context = 12\n\n'
        f'[[model]]\nmodel_id = "tiny-evo-attn"\npath = "{attn}"\nencoder = "evo"\n')
    return {"dir": ckpt, "model": model, "store": store,
            "catalog": load_models(store / "models.toml")}


def encoder(zoo, model_id: str) -> EvoEncoder:
    return build_encoder(resolve_model(model_id, zoo["catalog"]), EncoderOptions(device="cpu"))


def package_embedding(model: StripedHyena, sequence: str) -> np.ndarray:
    """The official extractor's call on one sequence: the package's tokenizer, the package's
    forward, the final norm's output (what it returned last) averaged over the tokens."""
    seen = []
    hook = model.norm.register_forward_hook(lambda _m, _i, out: seen.append(out))
    ids = torch.tensor(CharLevelTokenizer(512).tokenize(sequence), dtype=torch.int).unsqueeze(0)
    try:
        with torch.no_grad():
            logits, _ = model(ids)
    finally:
        hook.remove()
    assert logits.shape == (1, len(sequence), TINY["vocab_size"])
    return seen[0].mean(dim=1).float()[0].numpy()


# Lengths that repeat (batches of one length) and differ; case, U, N and IUPAC codes as given.
SEQS = random_dna(9, 5, 40, seed=3) + ["ACGTACGTAC", "acgtuACGTN", "ACGTRYKMSW", "ACGTACGTAC"]


def test_embeddings_equal_the_package_model_one_sequence_at_a_time(zoo):
    enc = encoder(zoo, "tiny-evo")
    assert isinstance(enc, EvoEncoder) and enc.batch_size == 4
    sink = ArraySink(len(SEQS))
    stats = enc.encode_into(SEQS, sink)
    assert stats["n_tokens"] == stats["n_padded_tokens"] == sum(map(len, SEQS))   # no padding
    assert stats["n_batches"] < len(SEQS) and stats["n_truncated"] == 0      # lengths shared
    want = np.stack([package_embedding(zoo["model"], s) for s in SEQS])
    assert sink.array.shape == (len(SEQS), HIDDEN) and sink.array.dtype == np.float32
    np.testing.assert_allclose(sink.array, want, atol=1e-6, rtol=1e-6)
    # Every sequence its own embedding but the repeated one; the text is read as given.
    assert np.unique(sink.array.round(4), axis=0).shape[0] == len(SEQS) - 1
    lower = enc.encode(["acgtacgtac", "ACGTACGTAC"])
    assert np.abs(lower[0] - lower[1]).max() > 1e-3
    digest = config_of("tiny-evo", str(zoo["dir"]), None).sha256
    assert enc.settings == {
        "encoder": "evo", "source": str(zoo["dir"]),
        "revision": checkpoint_fingerprint(Path(zoo["dir"])), "pooling": "mean",
        "config": "tiny_inference.yml", "config_sha256": digest, "max_tokens": None,
        "tokens": "bytes", "special_tokens": False, "layer": "final-norm", "dtype": "float32"}


@pytest.mark.parametrize("model_id", ["tiny-evo-cut", "tiny-evo-context"])
def test_max_tokens_cuts_and_counts(zoo, model_id):
    """The entry's `max_tokens` cuts, and without it its documented `context` (evo-1-131k's
    131,072): a sequence beyond the model card's length is never given to the model whole."""
    enc = encoder(zoo, model_id)
    seqs = ["ACGTTGCA" * 4, "ACGTTGCAAC"]                  # 32 and 10 tokens
    ids, truncated = enc.tokenize(seqs)
    assert truncated.tolist() == [True, False] and [len(x) for x in ids] == [12, 10]
    assert ids[0].tolist() == list(b"ACGTTGCAACGT")
    sink = ArraySink(len(seqs))
    assert enc.encode_into(seqs, sink)["n_truncated"] == 1
    np.testing.assert_allclose(sink.array[0], package_embedding(zoo["model"], seqs[0][:12]),
                               atol=1e-6, rtol=1e-6)
    assert enc.settings["max_tokens"] == 12


def test_attention_layers_are_refused_on_the_cpu_before_any_weight(zoo, monkeypatch):
    model = zoo["catalog"]["tiny-evo-attn"]        # its folder holds no weights at all
    attn = r"its StripedHyena config attn_inference\.yml has attention layers \(1\), which " \
           r"need CUDA and the flash-attn package"
    with pytest.raises(GenebError, match=rf"^model tiny-evo-attn: {attn}; this machine has no "
                                         r"CUDA$"):
        preflight(model, EncoderOptions())
    with pytest.raises(GenebError, match=attn):                 # the builder checks it too
        build_encoder(model, EncoderOptions(device="cpu"))
    official = load_models()["evo-1-131k-base"]
    assert (official.encoder, official.remote_code, official.revision, official.batch_size) == \
        ("evo", "package", "1.1_fix", 1)
    with pytest.raises(GenebError, match=r"config evo/configs/evo-1-131k-base_inference\.yml "
                                         r"has attention layers \(8, 16, 24\)"):
        preflight(official)                                      # no weights, no hub
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "flash_attn" else real(name, *a))
    with pytest.raises(GenebError, match=r"\(8, 16, 24\), .*; flash-attn is not installed"):
        preflight(official)
    with pytest.raises(GenebError, match=r"; this run embeds on cpu \(--device\)$"):
        preflight(official, EncoderOptions(device="cpu"))
    preflight(zoo["catalog"]["tiny-evo"], EncoderOptions(device="cpu"))     # Hyena only: runs


def test_fill_refuses_attention_layers_on_the_cpu_and_writes_nothing(zoo, tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    from tests.engine.conftest import write_task

    write_task(suite / "t.csv", 20, 10, 2, 1, length=30)
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text((zoo["store"] / "models.toml").read_text())
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite),
            "--models", "tiny-evo-attn", "--regimes", "full",
            names=("model tiny-evo-attn", "attention layers (1)", "CUDA", "flash-attn"))


def test_a_missing_package_says_what_to_install(zoo, monkeypatch):
    install = "pip install --no-deps evo-model==0.5 stripedhyena==0.2.2"
    real = importlib.util.find_spec
    with monkeypatch.context() as m:
        m.setattr(importlib.util, "find_spec",
                  lambda name, *a: None if name == "evo" else real(name, *a))
        with pytest.raises(GenebError, match=r"^model tiny-evo: the Evo-1 adapter needs the "
                                             r"evo-model and stripedhyena package, which is not "
                                             rf"installed; {install}"):
            preflight(zoo["catalog"]["tiny-evo"])
    # evo-model without stripedhyena (two --no-deps installs, one left out): one line too.
    monkeypatch.delitem(sys.modules, "engine.encoders.evo")
    monkeypatch.setitem(sys.modules, "stripedhyena.model", None)
    with pytest.raises(GenebError, match=rf"the Evo-1 adapter needs evo-model and stripedhyena "
                                         rf"\(.*stripedhyena\.model.*\); {install}"):
        preflight(zoo["catalog"]["tiny-evo"])


def test_configs_and_checkpoints_that_cannot_load_are_one_line(zoo, tmp_path):
    from safetensors.torch import load_file, save_file

    bare = save_checkpoint(zoo["model"], tmp_path / "bare", config=None)
    with pytest.raises(GenebError, match=r"no StripedHyena config for .*bare: put its YAML "
                                         r"config .* togethercomputer/evo-1-131k-base"):
        EvoEncoder(str(bare), device="cpu")
    # A local copy of a hub snapshot takes the package's config of its hub id.
    assert config_of("x", str(bare), "togethercomputer/evo-1-8k-base").name == \
        "evo/configs/evo-1-8k-base_inference.yml"
    (bare / "a.yml").write_text("x: 1\n")
    (bare / "b.yaml").write_text("x: 1\n")
    with pytest.raises(GenebError, match=r"holds several YAML files \(a\.yml, b\.yaml\)"):
        EvoEncoder(str(bare), device="cpu")
    (bare / "b.yaml").unlink()
    (bare / "a.yml").write_text("[1, 2")
    with pytest.raises(GenebError, match=r"cannot read the StripedHyena config .*a\.yml"):
        EvoEncoder(str(bare), device="cpu")
    (bare / "a.yml").write_text(yaml.safe_dump({**TINY, "hidden_size": 8, "num_filters": 8}))
    with pytest.raises(GenebError, match=r"checkpoint does not match its config a\.yml: .*size "
                                         r"mismatch"):
        EvoEncoder(str(bare), device="cpu")
    (bare / "a.yml").write_text(yaml.safe_dump({"vocab_size": 512}))
    with pytest.raises(GenebError, match=r"StripedHyena cannot be built from its config a\.yml"):
        EvoEncoder(str(bare), device="cpu")
    half = save_checkpoint(zoo["model"], tmp_path / "half")
    shard = half / "model-00002-of-00002.safetensors"
    state = load_file(str(shard))
    lost = sorted(state)[0]
    save_file({k: v for k, v in state.items() if k != lost}, str(shard))
    with pytest.raises(GenebError, match=rf"lacks weights the model needs \("
                                         rf"{lost.removeprefix('backbone.')}"):
        EvoEncoder(str(half), device="cpu")
    shard.unlink()
    with pytest.raises(GenebError, match=r"cannot read the Evo checkpoint in .*half"):
        EvoEncoder(str(half), device="cpu")
    (half / "model.safetensors.index.json").unlink()
    with pytest.raises(GenebError, match=r"it needs model\.safetensors, or "
                                         r"model\.safetensors\.index\.json and its shards"):
        EvoEncoder(str(half), device="cpu")


def test_fill_runs_the_adapter_end_to_end(zoo, tmp_path):
    texts, stored, attrs = fill_one_task(tmp_path, zoo["store"] / "models.toml", "tiny-evo",
                                         "--device", "cpu")
    assert attrs["encoder"]["encoder"] == "evo"
    want = np.stack([package_embedding(zoo["model"], s) for s in texts["test"]])
    np.testing.assert_allclose(stored, want, atol=1e-6, rtol=1e-6)
