"""The LucaOne adapter on a tiny randomly initialised LucaOne, loaded the way users load it.

The checkpoint is built from the `lucaone` package's own classes and saved with
`save_pretrained`, named by a `path` entry with `encoder = "lucaone"` in the user's models.toml,
and goes through `load_models` / `resolve_model` / `build_encoder` as `fill` does. The
reference is a plain call of the package's tokenizer and model, one sequence at a time, as the
official extractor makes it.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

pytest.importorskip("lucaone")

from engine.encoders import EncoderOptions, build_encoder, preflight  # noqa: E402
from engine.encoders.lucaone import LucaOneEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.adapter_runs import fill_one_task  # noqa: E402
from tests.engine.tiny_models import random_dna  # noqa: E402

HIDDEN, CONTEXT = 16, 64
CLS, SEP = 2, 3             # the package tokenizer's [CLS] and [SEP] ids


def save_tiny_lucaone(folder: Path, **config) -> Path:
    from lucaone import LucaGPLMConfig, LucaGPLMModel

    torch.manual_seed(0)
    model = LucaGPLMModel(LucaGPLMConfig(
        num_hidden_layers=2, hidden_size=HIDDEN, num_attention_heads=2, ffn_dim=4 * HIDDEN,
        max_position_embeddings=CONTEXT, **config))
    # Larger random weights than the package's initialisation (layer norms included), so that
    # attention, token types and every position shape the embedding.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("lucaone")
    ckpt = save_tiny_lucaone(root / "tiny-lucaone")
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny-lucaone"\npath = "{ckpt}"\nencoder = "lucaone"\n'
        'batch_size = 4\n\n'
        f'[[model]]\nmodel_id = "tiny-lucaone-cut"\npath = "{ckpt}"\nencoder = "lucaone"\n'
        'max_tokens = 12\n\n'
        f'[[model]]\nmodel_id = "tiny-lucaone-cls"\npath = "{ckpt}"\nencoder = "lucaone"\n'
        'pooling = "cls"\n')
    return {"dir": ckpt, "store": store, "catalog": load_models(store / "models.toml")}


def encoder(zoo, model_id: str, **options) -> LucaOneEncoder:
    return build_encoder(resolve_model(model_id, zoo["catalog"]),
                         EncoderOptions(device="cpu", **options))


def package_embedding(folder: Path, sequence: str, max_length: int = CONTEXT) -> np.ndarray:
    """The official extractor's call, one sequence: the package's tokenizer (nucleotide mode,
    special tokens, cut at max_length) and model, the last layer averaged over the mask."""
    from lucaone import LucaGPLMModel, LucaGPLMTokenizer

    tok = LucaGPLMTokenizer()
    model = LucaGPLMModel.from_pretrained(str(folder)).eval()
    enc = tok.encode_plus(text=sequence, seq_type="gene", add_special_tokens=True,
                          truncation=True, max_length=max_length, return_attention_mask=True)
    ids = torch.tensor([enc["input_ids"]])
    mask = torch.tensor([enc["attention_mask"]])
    with torch.no_grad():
        hidden = model(input_ids=ids, attention_mask=mask, return_dict=True).last_hidden_state
    keep = mask.unsqueeze(-1).float()
    return ((hidden * keep).sum(dim=1) / keep.sum(dim=1))[0].numpy()


# Lengths that repeat and differ (padded batches), case, U, N, IUPAC codes, an empty sequence.
SEQS = random_dna(9, 5, 50, seed=3) + ["acgtuACGU", "ACGTNNRYKM", ""]


def test_embeddings_equal_the_package_model_one_sequence_at_a_time(zoo):
    enc = encoder(zoo, "tiny-lucaone")
    assert isinstance(enc, LucaOneEncoder) and enc.batch_size == 4
    sink = ArraySink(len(SEQS))
    stats = enc.encode_into(SEQS, sink)
    assert stats["n_padded_tokens"] > stats["n_tokens"]        # batches really were padded
    want = np.stack([package_embedding(zoo["dir"], s) for s in SEQS])
    assert sink.array.shape == (len(SEQS), HIDDEN) and sink.array.dtype == np.float32
    # Padded batches change a few float32 roundings (the reference runs each sequence alone).
    np.testing.assert_allclose(sink.array, want, atol=1e-6, rtol=1e-6)
    assert np.unique(sink.array.round(4), axis=0).shape[0] == len(SEQS)
    assert enc.settings == {
        "encoder": "lucaone", "source": str(zoo["dir"]),
        "revision": checkpoint_fingerprint(Path(zoo["dir"])), "pooling": "mean",
        "max_tokens": CONTEXT, "seq_type": "gene", "special_tokens": True, "layer": "last",
        "dtype": "float32"}


def test_the_tokenizer_reads_case_and_u_as_the_official_extractor_did(zoo):
    enc = encoder(zoo, "tiny-lucaone")
    got = enc.encode(["acgtu", "ACGTT", "ACGTN", "ACGTR"])
    np.testing.assert_allclose(got[0], got[1], atol=1e-6)      # lower case = upper, U = T
    np.testing.assert_allclose(got[2], got[3], atol=1e-6)      # an IUPAC code = N
    assert np.abs(got[1] - got[2]).max() > 1e-3


def test_long_sequences_end_with_sep_and_are_counted(zoo):
    enc = encoder(zoo, "tiny-lucaone-cut")
    seqs = ["ACGTA" * 6, "ACGTAACGTA"]                        # 32 and 12 tokens
    ids, truncated = enc.tokenize(seqs)
    assert truncated.tolist() == [True, False]
    assert len(ids[0]) == 12 and ids[0][0] == CLS and ids[0][-1] == SEP
    assert ids[0][1:-1] == ids[1][1:11]                        # the first ten bases kept
    sink = ArraySink(len(seqs))
    assert enc.encode_into(seqs, sink)["n_truncated"] == 1
    np.testing.assert_allclose(sink.array[0], package_embedding(zoo["dir"], seqs[0], 12),
                               atol=1e-6, rtol=0)


def test_registry_checks_need_no_weights(zoo, monkeypatch):
    official = load_models()["LucaOne-default-step36M"]
    assert (official.encoder, official.requires, official.remote_code) == \
        ("lucaone", "lucaone", "package")
    preflight(official)                                        # no weights, no hub
    with pytest.raises(GenebError, match="tiny-lucaone-cls: the LucaOne adapter's pooling is "
                                         "one of mean, not 'cls'"):
        preflight(zoo["catalog"]["tiny-lucaone-cls"])
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "lucaone" else real(name, *a))
    with pytest.raises(GenebError, match=r"tiny-lucaone: the LucaOne adapter needs the lucaone "
                                         r"package, which is not installed; pip install lucaone"):
        preflight(zoo["catalog"]["tiny-lucaone"])


def test_a_broken_checkpoint_is_one_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GenebError, match="cannot load the LucaOne checkpoint .* local directory"):
        LucaOneEncoder(str(empty), device="cpu")
    from safetensors.torch import load_file, save_file

    half = save_tiny_lucaone(tmp_path / "half")
    state = load_file(str(half / "model.safetensors"))
    del state["encoder.last_layer_norm.weight"]
    save_file(state, str(half / "model.safetensors"))
    with pytest.raises(GenebError, match=r"lacks weights .*encoder\.last_layer_norm\.weight"):
        LucaOneEncoder(str(half), device="cpu")
    other = save_tiny_lucaone(tmp_path / "other", vocab_size=40)
    with pytest.raises(GenebError, match="vocabulary has 40 tokens, the lucaone tokenizer's 39"):
        LucaOneEncoder(str(other), device="cpu")


def test_fill_runs_the_adapter_end_to_end(zoo, tmp_path):
    texts, stored, attrs = fill_one_task(tmp_path, zoo["store"] / "models.toml", "tiny-lucaone")
    assert attrs["encoder"]["encoder"] == "lucaone"
    np.testing.assert_allclose(stored, encoder(zoo, "tiny-lucaone").encode(texts["test"]),
                               atol=1e-6, rtol=1e-6)
