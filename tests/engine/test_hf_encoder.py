"""The generic Hugging Face encoder on tiny checkpoints built here, loaded the way users load them.

Every model goes through a `path` entry in the user's `<store>/models.toml` (or `--models <dir>`),
`load_models` / `resolve_model` and `build_encoder`, exactly as `fill` does.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from packaging.version import Version  # noqa: E402

from engine.encoders import BUILDERS, EncoderOptions, build_encoder  # noqa: E402
from engine.encoders.batching import default_batch_tokens  # noqa: E402
from engine.encoders.hf import HFEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import ENCODERS, POOLINGS, ModelMeta, load_models  # noqa: E402
from store.embeddings import EmbeddingStore  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.vocab import encoder_kinds  # noqa: E402
from store.vocab.encoder_kinds import ADAPTERS  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.tiny_models import (  # noqa: E402
    build,
    char_tokenizer,
    random_dna,
    save_remote,
)

KINDS = ("bert", "gpt2", "llama", "mamba")


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict:
    """Four tiny checkpoints and a user models.toml naming them by path."""
    root = tmp_path_factory.mktemp("zoo")
    dirs = {kind: build(kind, root / kind) for kind in KINDS}
    entries = "".join(
        f'[[model]]\nmodel_id = "tiny-{kind}"\npath = "{d}"\nparams = 1000\n\n'
        for kind, d in dirs.items())
    entries += (f'[[model]]\nmodel_id = "tiny-bert-trunc"\npath = "{dirs["bert"]}"\n'
                "max_tokens = 20\nbatch_size = 4\n\n")
    entries += (f'[[model]]\nmodel_id = "tiny-gpt2-padmean"\npath = "{dirs["gpt2"]}"\n'
                'pooling = "mean-with-padding"\n\n')
    entries += f'[[model]]\nmodel_id = "tiny-bert-cls"\npath = "{dirs["bert"]}"\npooling = "cls"\n'
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text(entries)
    return {"dirs": dirs, "catalog": load_models(store / "models.toml")}


def encoder(zoo, model_id: str, **options) -> HFEncoder:
    return build_encoder(resolve_model(model_id, zoo["catalog"]),
                         EncoderOptions(device="cpu", **options))


SEQS = random_dna(13, 20, 90, seed=7)


@pytest.mark.parametrize("kind", KINDS)
def test_alone_equals_padded_length_bucketed_batch(zoo, kind):
    enc = encoder(zoo, f"tiny-{kind}", batch_size=4)
    together = enc.encode(SEQS)
    alone = np.stack([enc.encode([s])[0] for s in SEQS])
    assert together.shape == (len(SEQS), enc.model.config.hidden_size)
    assert together.dtype == np.float32
    assert np.abs(together - alone).max() < 1e-5


def test_padding_sides_follow_the_architecture(zoo):
    sides = {kind: encoder(zoo, f"tiny-{kind}").padding_side for kind in KINDS}
    assert sides == {"bert": "right", "gpt2": "left", "llama": "left", "mamba": "none"}


def test_models_without_a_usable_mask_are_batched_by_exact_length(zoo):
    enc = encoder(zoo, "tiny-mamba", batch_size=8)
    lengths = np.array([5, 7, 5, 9, 7, 5])
    for batch in enc.plan_batches(lengths):
        assert len(set(lengths[batch])) == 1


def test_batch_order_is_restored(zoo):
    enc = encoder(zoo, "tiny-bert", batch_size=3)
    base = enc.encode(SEQS)
    perm = np.random.default_rng(0).permutation(len(SEQS))
    shuffled = enc.encode([SEQS[i] for i in perm])
    np.testing.assert_allclose(shuffled, base[perm], atol=1e-5)


def test_truncation_is_counted_and_cuts_at_the_context(zoo):
    enc = encoder(zoo, "tiny-bert-trunc")
    assert enc.max_tokens == 20 and enc.settings["max_tokens"] == 20
    seqs = ["ACGT" * 3, "ACGTTGCA" * 5, "A" * 18, "C" * 19]
    sink = ArraySink(len(seqs))
    stats = enc.encode_into(seqs, sink)
    assert stats["n_truncated"] == 2            # 40 and 19 nt + [CLS] [SEP] exceed 20 tokens
    cut = enc.encode([seqs[1][:18]])[0]         # 18 nt + [CLS] [SEP] = 20 tokens
    np.testing.assert_allclose(sink.array[1], cut, atol=1e-5)


def test_a_documented_context_beyond_the_tokenizers_limit_is_accepted(zoo, tmp_path):
    """A long-context family whose tokenizer states less than its model card (the tiny Mamba,
    HyenaDNA's and Caduceus' stand-in: its tokenizer says 128) takes sequences up to the
    catalog's documented `context` (300), and cuts only beyond it; a sequence within the old
    limit gives the same tokens and embedding as before."""
    path = zoo["dirs"]["mamba"]
    (tmp_path / "models.toml").write_text(
        f'[[model]]\nmodel_id = "tiny-mamba-300"\npath = "{path}"\ncontext = 300\n')
    long = encoder({"catalog": load_models(tmp_path / "models.toml")}, "tiny-mamba-300")
    before = encoder(zoo, "tiny-mamba")
    assert (before.max_tokens, long.max_tokens) == (128, 300)
    short, mid, over = random_dna(3, 100, 100, seed=3)[0], "ACGT" * 50, "ACGT" * 80
    ids, cut = long.tokenize([short, mid, over])
    assert [len(x) for x in ids] == [100, 200, 300] and cut.tolist() == [False, False, True]
    old_ids, old_cut = before.tokenize([short, mid])
    assert ids[0] == old_ids[0] and old_cut.tolist() == [False, True]   # 200 was cut at 128
    assert np.array_equal(long.encode([short]), before.encode([short]))
    assert long.settings["max_tokens"] == 300


def test_cls_and_mean_with_padding_recipes(zoo):
    cls = encoder(zoo, "tiny-bert-cls")
    assert cls.settings["pooling"] == "cls"
    emb = cls.encode(SEQS[:4])
    with torch.inference_mode():
        ids = cls.tokenizer(SEQS[0], return_tensors="pt")
        first = cls.model(**ids).last_hidden_state[0, 0].numpy()
    np.testing.assert_allclose(emb[0], first, atol=1e-5)
    padmean = encoder(zoo, "tiny-gpt2-padmean", batch_size=4)
    assert padmean.padding_side == "none"       # the official mean over padding, batch 1
    plain = encoder(zoo, "tiny-gpt2")
    np.testing.assert_allclose(padmean.encode(SEQS), plain.encode(SEQS), atol=1e-5)


class Counting(torch.nn.Module):
    """Wraps a model: counts forward calls and rows, fails on call `fail_at`, or raises an
    out-of-memory error for batches larger than `oom_above`."""

    def __init__(self, inner, fail_at: int | None = None, oom_above: int | None = None,
                 oom_tokens_above: int | None = None):
        super().__init__()
        self.inner, self.fail_at, self.oom_above = inner, fail_at, oom_above
        self.oom_tokens_above = oom_tokens_above
        self.calls: list[int] = []
        self.tokens: list[int] = []

    def forward(self, **kwargs):
        n, numel = kwargs["input_ids"].shape[0], kwargs["input_ids"].numel()
        if self.oom_above is not None and n > self.oom_above:
            raise torch.OutOfMemoryError(f"simulated: batch of {n}")
        if self.oom_tokens_above is not None and numel > self.oom_tokens_above:
            raise torch.OutOfMemoryError(f"simulated: {numel} tokens")
        self.calls.append(n)
        self.tokens.append(numel)
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise RuntimeError("simulated crash")
        return self.inner(**kwargs)


def test_out_of_memory_halves_the_batch_and_completes(zoo):
    enc = encoder(zoo, "tiny-gpt2", batch_size=8)
    expected = enc.encode(SEQS)
    enc.batch_size = 8
    enc.model = Counting(enc.model, oom_above=2)
    sink = ArraySink(len(SEQS))
    stats = enc.encode_into(SEQS, sink)
    assert stats["n_oom_retries"] >= 2               # 8 -> 4 -> 2 rows
    assert max(enc.model.calls) == 2 and sum(enc.model.calls) == len(SEQS)
    np.testing.assert_allclose(sink.array, expected, atol=1e-5)


def test_after_out_of_memory_short_sequences_still_share_larger_batches(zoo):
    enc = encoder(zoo, "tiny-bert", batch_size=16)
    seqs = ["ACGT" * 25] * 4 + ["ACGTA" * 4] * 12          # 102 and 22 tokens
    expected = enc.encode(seqs)
    enc.model = Counting(enc.model, oom_tokens_above=250)
    got = enc.encode(seqs)
    assert max(enc.model.tokens) <= 250
    assert enc.model.calls[:2] == [2, 2] and max(enc.model.calls) > 2
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_out_of_memory_on_one_sequence_is_a_clear_error(zoo):
    enc = encoder(zoo, "tiny-bert", batch_size=2)
    enc.model = Counting(enc.model, oom_above=0)
    with pytest.raises(GenebError, match="tiny-bert: out of memory on a single sequence"):
        enc.encode(SEQS[:3])


def test_interrupted_embedding_resumes_without_recomputing(zoo, tmp_path):
    model = resolve_model("tiny-bert", zoo["catalog"])
    enc = build_encoder(model, EncoderOptions(device="cpu", batch_size=4))
    seqs = random_dna(30, 20, 90, seed=3)
    labels = np.arange(30) % 2
    expect = {"model_id": model.model_id, "model_revision": enc.revision,
              "encoder": enc.settings, "data_hash": "h", "dtype": "float32"}
    store = EmbeddingStore(StorePaths(tmp_path))
    full = enc.encode(seqs)

    inner = enc.model
    enc.model = Counting(inner, fail_at=4)        # 3 batches finish, the 4th crashes
    with pytest.raises(RuntimeError, match="simulated crash"):
        enc.encode_into(seqs, store.writer(model.model_id, "t", "train", labels, expect))
    writer = store.writer(model.model_id, "t", "train", labels, expect)
    assert writer.pending().size == 30 - 12       # the finished batches were written

    enc.model = Counting(inner)
    stats = enc.encode_into(seqs, writer)
    assert sum(enc.model.calls) == 18 and stats["n_encoded"] == 18
    writer.finish(stats)
    emb, _ = store.load(model.model_id, "t", "train", expect)
    np.testing.assert_allclose(emb, full, atol=1e-5)


def test_one_off_directory_resolves_to_the_generic_encoder(zoo):
    meta = resolve_model(str(zoo["dirs"]["llama"]), zoo["catalog"])
    assert meta.encoder == "hf" and meta.path == str(zoo["dirs"]["llama"].resolve())
    assert meta.architecture_family == "Transformer decoder" and meta.params > 0
    enc = build_encoder(meta, EncoderOptions(device="cpu"))
    assert enc.settings["source"] == meta.path and enc.encode(SEQS[:2]).shape == (2, 32)


def test_remote_code_needs_the_flag_and_a_pinned_revision():
    meta = ModelMeta("remote-x", "X", 1, "T-enc", "Transformer encoder", "BPE", "BPE", "human",
                     hub_id="org/remote-x", remote_code="required")
    with pytest.raises(GenebError, match=r"model remote-x: .*--trust-remote-code"):
        build_encoder(meta)
    with pytest.raises(GenebError, match=r"remote-x: --trust-remote-code needs a pinned revision"):
        build_encoder(meta, EncoderOptions(trust_remote_code=True))


def test_adapters_and_external_weights_explain_what_they_need():
    catalog = load_models()
    with pytest.raises(GenebError, match=r"enformer-official-rough: .*enformer-pytorch"):
        build_encoder(catalog["enformer-official-rough"])
    with pytest.raises(GenebError, match=r"deepgene: its weights are not published"):
        build_encoder(catalog["deepgene"])
    assert set(ADAPTERS) | {"hf", "kmer", "official-extractor", "external",
                              "imported"} == set(ENCODERS)


def test_encoder_vocabularies_match_the_catalog():
    kinds = encoder_kinds.KINDS
    assert ENCODERS == tuple(kinds)
    assert set(POOLINGS) == {p for k in kinds.values() for p in k.poolings}
    assert set(BUILDERS) == {name for name, k in kinds.items() if not k.unavailable}


def test_a_missing_checkpoint_is_one_clear_error(tmp_path):
    meta = ModelMeta("gone", "gone", 0, "?", "Other", "?", "mixed/other", "?",
                     path=str(tmp_path / "nope"))
    with pytest.raises(GenebError, match="model gone: cannot load"):
        build_encoder(meta, EncoderOptions(device="cpu"))



def test_settings_are_the_identity(zoo):
    s = encoder(zoo, "tiny-bert").settings
    folder = Path(zoo["dirs"]["bert"])
    assert s == {"encoder": "hf", "source": str(folder), "revision": checkpoint_fingerprint(folder),
                 "pooling": "mean", "max_tokens": 128, "padding_side": "right",
                 "dtype": "float32", "layer": "last"}


def naive_loop(enc: HFEncoder, seqs: list[str]) -> np.ndarray:
    """The official extractors' loop: input order, batches of 8 padded to their longest, fp32,
    the mean over the attention mask."""
    out = []
    with torch.inference_mode():
        for i in range(0, len(seqs), 8):
            batch = enc.tokenizer(seqs[i:i + 8], padding=True, return_tensors="pt")
            hidden = enc.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1)
            out.append(((hidden * mask).sum(1) / mask.sum(1)).numpy())
    return np.vstack(out)


@pytest.mark.parametrize("budget", [None, 150])
def test_token_budget_batches_equal_the_official_naive_loop(zoo, budget):
    """Float32 on the CPU: batching and padding change the embeddings at rounding level only
    (1e-5 on these unit-scale rows), whatever the budget."""
    seqs = random_dna(40, 10, 120, seed=5)
    enc = encoder(zoo, "tiny-bert")
    enc.max_batch_tokens = budget or enc.max_batch_tokens
    np.testing.assert_allclose(enc.encode(seqs), naive_loop(enc, seqs), atol=1e-5, rtol=0)


def test_a_padded_batch_goes_as_a_key_mask_only_where_that_changes_nothing(zoo, tmp_path):
    """BERT running sdpa under transformers 5 gets a padded batch's mask as the keys each row
    attends to, and its embeddings equal those of the 2D mask to the bit and the official loop
    to 1e-5 (transformers 4's BERT refuses a 4D mask: the check finds that and keeps the 2D
    one); a causal model padded on the right (the key mask has no causality), one padded on
    the left, eager attention (which adds the mask to the scores) and ModernBERT (a 128-token
    sliding window the load check's short probe cannot see; the key mask would change its
    embeddings of longer sequences) keep the 2D mask."""
    from transformers import ModernBertConfig, ModernBertModel

    tok = char_tokenizer(512)
    ModernBertModel(ModernBertConfig(
        vocab_size=len(tok), hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=512, pad_token_id=0,
        global_attn_every_n_layers=3)).save_pretrained(tmp_path / "modernbert")
    tok.save_pretrained(tmp_path / "modernbert")
    modern = HFEncoder(str(tmp_path / "modernbert"), device="cpu")
    assert modern.attention == "sdpa" and not modern.key_mask
    for kind in ("gpt2", "llama"):
        for side in ("right", "left"):
            dec = HFEncoder(str(zoo["dirs"][kind]), device="cpu", padding_side=side)
            assert dec.attention == "sdpa" and not dec.key_mask, (kind, side)
    seqs = random_dna(40, 10, 120, seed=5)
    enc = encoder(zoo, "tiny-bert")
    ids = enc.tokenize(seqs[:3])[0]
    takes = Version(transformers.__version__) >= Version("5")
    assert enc.attention == "sdpa" and enc.key_mask == takes
    assert encoder(zoo, "tiny-bert").encode_into(SEQS, ArraySink(len(SEQS)))["key_mask"] == takes
    keys = enc.encode(seqs)
    np.testing.assert_allclose(keys, naive_loop(enc, seqs), atol=1e-5, rtol=0)
    assert enc.collate([ids[0], ids[0]])["mask"] == "none"        # no padding, no mask
    if takes:
        assert enc.collate(ids)["mask"] == "keys"        # on the CPU; built on the device
        enc.key_mask = False
        np.testing.assert_array_equal(keys, enc.encode(seqs))
    assert enc.collate(ids)["mask"] == "2d"
    enc.model.set_attn_implementation("eager")         # the check itself, past the guard
    assert not enc._takes_key_mask()


def test_the_batching_and_attention_that_ran_are_recorded(zoo):
    enc = encoder(zoo, "tiny-bert")
    stats = enc.encode_into(SEQS, ArraySink(len(SEQS)))
    assert stats["max_batch_tokens"] == default_batch_tokens(torch.device("cpu"))
    assert stats["batch_size"] == HFEncoder.default_batch_size
    assert stats["attention"] == enc.model.config._attn_implementation
    assert stats["compiled"] is False
    assert "max_batch_tokens" not in enc.settings     # how it ran is not the identity
    budget = encoder(zoo, "tiny-bert-trunc")          # the registry's batch_size = 4
    assert budget.encode_into(SEQS, ArraySink(len(SEQS)))["batch_size"] == 4


def test_sdpa_is_asked_for_on_cuda_and_an_architecture_without_it_falls_back(zoo):
    from transformers import AutoModel

    for kind, ran in (("bert", "sdpa"), ("mamba", "eager")):   # transformers refuses
        enc = encoder(zoo, f"tiny-{kind}")                    # sdpa for Mamba: its default
        enc.device = torch.device("cuda")             # only the loading rule; nothing runs
        model = enc._attention_first(AutoModel)
        assert model.config._attn_implementation == ran
        assert type(model).__name__ == type(enc.model).__name__


def test_fill_runs_a_checkpoint_directory_on_a_hub_layout_suite(zoo, tmp_path):
    """The user's path end to end: `geneb-engine fill --suite <dir> --models <checkpoint>`."""
    import csv

    from engine.cli import main
    from store.db import query

    for t, seed in (("task_a", 1), ("task_b", 2)):
        folder = tmp_path / "suite" / "tasks" / t
        folder.mkdir(parents=True)
        for split, n in (("train", 24), ("test", 10)):
            with open(folder / f"{split}.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["text", "label"])
                w.writerows((s, i % 2) for i, s in enumerate(random_dna(n, 20, 60, seed)))
    store = tmp_path / "store"
    argv = ["fill", "--store", str(store), "--suite", str(tmp_path / "suite"),
            "--models", str(zoo["dirs"]["bert"]), "--regimes", "full"]
    assert main(argv) == 0
    rows = query(StorePaths(store.resolve()), "SELECT model, task FROM results")
    assert sorted(set(rows["task"].to_list())) == ["task_a", "task_b"]
    assert set(rows["model"].to_list()) == {"bert"}


REMOTE_CODE = '''
import torch
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput


class TinyRemoteConfig(PretrainedConfig):
    model_type = "tiny-remote"

    def __init__(self, vocab_size=16, hidden_size=8, **kwargs):
        self.vocab_size, self.hidden_size = vocab_size, hidden_size
        super().__init__(**kwargs)


class TinyRemoteModel(PreTrainedModel):
    config_class = TinyRemoteConfig

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(config.vocab_size, config.hidden_size)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, **kwargs):
        return BaseModelOutput(last_hidden_state=self.emb(input_ids))
'''


def test_remote_code_checkpoint_runs_only_with_the_opt_in(zoo, tmp_path):
    ckpt = save_remote(tmp_path / "remote-ckpt", REMOTE_CODE, zoo["dirs"]["bert"])
    meta = resolve_model(str(ckpt), zoo["catalog"])
    assert meta.remote_code == "required"
    with pytest.raises(GenebError, match=r"model remote-ckpt: .*--trust-remote-code"):
        build_encoder(meta, EncoderOptions(device="cpu"))
    enc = build_encoder(meta, EncoderOptions(device="cpu", trust_remote_code=True))   # local code
    assert enc.encode(SEQS[:3]).shape == (3, 8)
