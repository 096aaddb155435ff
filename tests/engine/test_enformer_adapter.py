"""The Enformer adapter on a tiny randomly initialised Enformer, loaded the way users load it.

The checkpoint is written as the hub's is (config.json + pytorch_model.bin, every aliased name
saved), named by a `path` entry with `encoder = "enformer"` in the user's models.toml, and goes
through `load_models` / `resolve_model` / `build_encoder` as `fill` does.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

pytest.importorskip("enformer_pytorch")

from engine.encoders import EncoderOptions, build_encoder, preflight  # noqa: E402
from engine.encoders.enformer import EnformerEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.adapter_runs import fill_one_task  # noqa: E402
from tests.engine.tiny_models import random_dna  # noqa: E402

DIM, TRACKS, DOWNSAMPLES = 24, 8, 3      # bins of 2**3 = 8 bp
WIDTH, BINS = 64, 4                       # the entries' input: 8 bins, cropped to the central 4


def save_tiny_enformer(folder: Path, safetensors: bool = False, target_length: int = BINS
                       ) -> Path:
    from enformer_pytorch import Enformer

    torch.manual_seed(0)
    model = Enformer.from_hparams(
        dim=DIM, depth=1, heads=1, output_heads=dict(human=TRACKS, mouse=3),
        target_length=target_length, attn_dim_key=4, dim_divisible_by=4,
        num_downsamples=DOWNSAMPLES)
    # Random attention outputs (the package zero-initialises them) and batch-norm statistics,
    # so that every part of the model shapes the embedding.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    folder.mkdir(parents=True)
    model.config.save_pretrained(folder)
    if safetensors:
        from safetensors.torch import save_file

        keep = {k: v.contiguous() for k, v in model.state_dict().items()
                if not k.startswith("_trunk.")}
        save_file(keep, str(folder / "model.safetensors"))
    else:
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return folder


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("enformer")
    ckpt = save_tiny_enformer(root / "tiny-enformer")
    st = save_tiny_enformer(root / "tiny-enformer-st", safetensors=True)
    every_bin = save_tiny_enformer(root / "tiny-enformer-all", target_length=-1)
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny-enformer"\npath = "{ckpt}"\nencoder = "enformer"\n'
        f'batch_size = 4\nmax_tokens = {WIDTH}\n\n'
        f'[[model]]\nmodel_id = "tiny-enformer-trunk"\npath = "{ckpt}"\nencoder = "enformer"\n'
        f'pooling = "trunk"\nmax_tokens = {WIDTH}\n\n'
        f'[[model]]\nmodel_id = "tiny-enformer-st"\npath = "{st}"\nencoder = "enformer"\n'
        f'pooling = "tracks"\nmax_tokens = {WIDTH}\n\n'
        f'[[model]]\nmodel_id = "tiny-enformer-all"\npath = "{every_bin}"\n'
        f'encoder = "enformer"\nmax_tokens = {WIDTH}\n\n'
        f'[[model]]\nmodel_id = "tiny-enformer-cut"\npath = "{ckpt}"\nencoder = "enformer"\n'
        'max_tokens = 32\n\n'
        f'[[model]]\nmodel_id = "tiny-enformer-odd"\npath = "{ckpt}"\nencoder = "enformer"\n'
        'max_tokens = 36\n\n'
        f'[[model]]\nmodel_id = "tiny-hf-tracks"\npath = "{ckpt}"\npooling = "tracks"\n')
    return {"dir": ckpt, "store": store, "catalog": load_models(store / "models.toml")}


def encoder(zoo, model_id: str, **options) -> EnformerEncoder:
    return build_encoder(resolve_model(model_id, zoo["catalog"]),
                         EncoderOptions(device="cpu", **options))


# Lengths that repeat, that are and are not multiples of the 8-bp bin, all within WIDTH.
SEQS = random_dna(10, 5, 40, seed=5) + ["ACGTACGT" * 3, "TTGACCAA" * 3, "ACGTNNNNACGTacgt"]


def test_a_sequence_embeds_the_same_alone_and_in_a_batch(zoo):
    enc = encoder(zoo, "tiny-enformer")
    assert isinstance(enc, EnformerEncoder) and enc.batch_size == 4
    together = enc.encode(SEQS)
    alone = np.stack([enc.encode([s])[0] for s in SEQS])
    assert together.shape == (len(SEQS), TRACKS) and together.dtype == np.float32
    assert np.abs(together - alone).max() < 1e-5
    assert np.unique(together.round(5), axis=0).shape[0] == len(SEQS)


def test_batches_hold_one_length_and_order_is_restored(zoo):
    enc = encoder(zoo, "tiny-enformer")
    lengths = np.array([24, 7, 24, 9, 7, 24, 24, 24, 24])
    for batch in enc.plan_batches(lengths):
        assert len(set(lengths[batch])) == 1 and batch.size <= 4
    base = enc.encode(SEQS)
    perm = np.random.default_rng(0).permutation(len(SEQS))
    np.testing.assert_allclose(enc.encode([SEQS[i] for i in perm]), base[perm], atol=1e-5)


def test_poolings_follow_the_recipe(zoo):
    """The official recipe: the sequence centred in WIDTH bases of N (one-hot, N all zero),
    the model's output cropped to its central target_length bins, their mean."""
    from enformer_pytorch import str_to_one_hot

    tracks, trunk = encoder(zoo, "tiny-enformer"), encoder(zoo, "tiny-enformer-trunk")
    every_bin = encoder(zoo, "tiny-enformer-all").model       # the same weights, no crop
    seq = SEQS[0]
    left = (WIDTH - len(seq)) // 2
    centred = "N" * left + seq + "N" * (WIDTH - len(seq) - left)
    with torch.inference_mode():
        x = str_to_one_hot([centred])
        want_tracks = every_bin(x, head="human")[:, 2:6].mean(dim=1)[0].numpy()
        want_trunk = every_bin(x, return_only_embeddings=True)[:, 2:6].mean(dim=1)[0].numpy()
        assert every_bin(x, head="human").shape[1] == 8
    assert trunk.encode([seq]).shape == (1, 2 * DIM)
    np.testing.assert_allclose(tracks.encode([seq])[0], want_tracks, atol=1e-5)
    np.testing.assert_allclose(trunk.encode([seq])[0], want_trunk, atol=1e-5)
    assert (want_tracks > 0).all()                  # softplus tracks
    assert tracks.settings == {
        "encoder": "enformer", "source": str(zoo["dir"]),
        "revision": checkpoint_fingerprint(Path(zoo["dir"])),
        "pooling": "tracks", "head": "human", "max_bp": WIDTH, "pad": "N-centred",
        "bins": BINS, "positional_gamma": "torch", "dtype": "float32"}
    assert trunk.settings["pooling"] == "trunk" and trunk.settings["head"] is None


def test_n_and_odd_characters_are_all_zero_rows(zoo):
    enc = encoder(zoo, "tiny-enformer")
    # the model's input: A, C, G, T one-hot in either case; N, IUPAC codes, other letters and
    # a non-ASCII one all-zero rows; the N padding around a sequence and an empty one too
    items, cut = enc.tokenize(["ACGTNNNN", "acgtRYKM", "ACGTXZéb", "ACGT", ""])
    assert not cut.any() and {len(x) for x in items} == {WIDTH}
    x = enc.collate(items).numpy()
    assert x.shape == (5, WIDTH, 4)
    for rows in x[:3]:                              # 28 N, the 8 letters, 28 N
        np.testing.assert_array_equal(rows[28:32], np.eye(4))
        np.testing.assert_array_equal(np.delete(rows, range(28, 32), axis=0), 0)
    np.testing.assert_array_equal(x[3, 30:34], np.eye(4))     # 30 N, ACGT, 30 N
    np.testing.assert_array_equal(np.delete(x[3], range(30, 34), axis=0), 0)
    np.testing.assert_array_equal(x[4], 0)
    # so the embeddings of sequences that differ only there are the same
    got = enc.encode(["ACGTNNNN", "acgtRYKM", "NNACGTNNNNNN", "", "NNNNNNNN"])
    np.testing.assert_allclose(got[0], got[1], atol=1e-6)    # lower case = upper; IUPAC = N
    np.testing.assert_allclose(got[0], got[2], atol=1e-6)    # N = padding, centred
    np.testing.assert_allclose(got[3], got[4], atol=1e-6)    # empty = all N
    assert np.isfinite(got).all()


def test_safetensors_without_aliases_loads_the_same_weights(zoo):
    a = encoder(zoo, "tiny-enformer").encode(SEQS[:4])
    b = encoder(zoo, "tiny-enformer-st").encode(SEQS[:4])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_long_sequences_keep_their_middle_and_are_counted(zoo):
    enc = encoder(zoo, "tiny-enformer-cut")            # 32 bp
    seqs = ["ACGT" * 9 + "A", "ACGTA" * 4]              # 37 bp: 2 cut on the left, 3 right
    sink = ArraySink(len(seqs))
    assert enc.encode_into(seqs, sink)["n_truncated"] == 1
    assert enc.tokenize(seqs)[0][0] == seqs[0][2:34]
    np.testing.assert_allclose(sink.array[0], enc.encode([seqs[0][2:34]])[0], atol=1e-6)
    assert not np.allclose(sink.array[0], enc.encode([seqs[0][:32]])[0], atol=1e-3)


def test_an_input_the_bins_do_not_divide_is_refused(zoo):
    with pytest.raises(GenebError, match="max_tokens = 36 bp must be a multiple of the "
                                         "model's 8-bp bins holding at least its target_length "
                                         "of 4 bins"):
        encoder(zoo, "tiny-enformer-odd")


def test_out_of_memory_halves_the_batch(zoo):
    enc = encoder(zoo, "tiny-enformer", batch_size=8)
    seqs = ["ACGTACGTAC", "ACGTACG"] * 3 + ["ACG"]
    expected = enc.encode(seqs)
    inner, calls = enc.forward, []

    def forward(x):
        if x.shape[0] > 2:
            raise torch.OutOfMemoryError("simulated")
        calls.append(x.shape[0])
        return inner(x)

    enc.forward = forward
    sink = ArraySink(len(seqs))
    assert enc.encode_into(seqs, sink)["n_oom_retries"] >= 2
    assert max(calls) == 2 and sum(calls) == 7
    np.testing.assert_allclose(sink.array, expected, atol=1e-6)


def test_registry_checks_need_no_weights(zoo, monkeypatch):
    catalog = zoo["catalog"]
    assert load_models()["enformer-official-rough"].pooling == "tracks"
    with pytest.raises(GenebError, match="tiny-hf-tracks: pooling 'tracks' needs encoder"):
        preflight(catalog["tiny-hf-tracks"])
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "enformer_pytorch" else real(name, *a))
    with pytest.raises(GenebError, match=r"tiny-enformer: .*pip install enformer-pytorch"):
        preflight(catalog["tiny-enformer"])


def test_a_broken_checkpoint_is_one_clear_error(tmp_path):
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(GenebError, match="needs config.json and one of"):
        EnformerEncoder(str(folder), device="cpu")


def test_fill_runs_the_adapter_end_to_end(zoo, tmp_path):
    _, _, attrs = fill_one_task(tmp_path, zoo["store"] / "models.toml", "tiny-enformer")
    assert attrs["encoder"]["encoder"] == "enformer"
