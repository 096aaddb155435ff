"""Each catalog recipe held against its official extractor, family by family.

For every architecture of the leaderboard's families that ships in transformers (GPT-2, BERT,
Llama, Mistral, OLMo, ESM; Mamba stands in for HyenaDNA and Caduceus, whose code is their own;
a BERT that reads one-hot rows, its code in the checkpoint, for MutBERT), a tiny random
checkpoint (tests/engine/tiny_models.py) is embedded by `geneb-engine fill` under an entry that
points at it with the recipe fields of the catalog entry, and compared with the official
extractor's recipe written out plainly below, as `store/catalogs/recipes.toml` describes it:
its own loop over each split in file order, its batch (main.py's default, 4), its tokenizer
call, its padding and its pooling. Equal to 1e-5 in float32 on the CPU, under transformers 4 and
5 (the Makefile's TF4_TESTS).

Where the official embedding depends on the rows that share its batch (METAGENE-1's mean over
padding; HyenaDNA and Caduceus, whose forward reads no mask), the table states the deliberate
choice of the batch-1 value: those loops run with a batch of 1, and a test shows what a batch
of 4 changes. The families in packages (LucaOne, Evo-1, Enformer) have their adapters' tests.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402
import re  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import (  # noqa: E402
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoTokenizer,
)

from store.catalog import RECIPE_DEFAULTS, RECIPE_FIELDS, load_models  # noqa: E402
from tests.engine.tiny_models import build, hub_layout_task, save_remote  # noqa: E402

BATCH = 4                   # main.py's --batch_size default, which the pipeline passes on
SPLICE_POSITIONS = 34       # a tiny SpliceBERT: windows of 32 letters, every 16

# A BERT fed one-hot rows over its vocabulary, as MutBERT's code is.
ONE_HOT_BERT = '''
from transformers import BertConfig, BertModel, PreTrainedModel


class TinyRemoteConfig(BertConfig):
    model_type = "tiny-one-hot-bert"


class TinyRemoteModel(PreTrainedModel):
    config_class = TinyRemoteConfig

    def __init__(self, config):
        super().__init__(config)
        self.encoder = BertModel(config)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, **kwargs):
        rows = input_ids @ self.encoder.embeddings.word_embeddings.weight
        return self.encoder(inputs_embeds=rows, attention_mask=attention_mask)
'''


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    keep = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)


def loop(sequences: Sequence[str], batch: int,
         embed: Callable[[list[str]], torch.Tensor]) -> np.ndarray:
    """The official extractors' loop: consecutive batches in file order."""
    with torch.no_grad():
        return np.vstack([embed(list(sequences[i:i + batch])).float().numpy()
                          for i in range(0, len(sequences), batch)])


def causal_lm(folder: Path, sequences, batch: int, *, tok_args: dict, pool: str = "masked",
              pad_eos: bool = False, text: Callable[[str, str], str] | None = None,
              padding_side: str | None = None, loader=AutoModelForCausalLM,
              ids_and_mask: bool = False) -> np.ndarray:
    """metagene.py, genomeocean.py, generator.py, omnidna.py, omnina.py, dnahlm.py: the model
    gets the tokenizer's output (or its ids and mask only); the last of hidden_states, pooled
    over the mask (`masked`) or over every position (`all`)."""
    tok = AutoTokenizer.from_pretrained(folder)
    if padding_side:
        tok.padding_side = padding_side
    if pad_eos:
        tok.pad_token = tok.eos_token
    model = loader.from_pretrained(folder, output_hidden_states=True).eval()

    def embed(chunk):
        chunk = [text(s, tok.bos_token) for s in chunk] if text else chunk
        enc = tok(chunk, return_tensors="pt", padding=True, truncation=True, **tok_args)
        inputs = {k: enc[k] for k in ("input_ids", "attention_mask")} if ids_and_mask else enc
        hidden = model(**inputs).hidden_states[-1]
        return hidden.mean(dim=1) if pool == "all" else masked_mean(hidden, enc.attention_mask)

    return loop(sequences, batch, embed)


def metagene(folder, sequences, batch=1):
    return causal_lm(folder, sequences, batch, tok_args={}, pool="all")


def genomeocean(max_length):
    def official(folder, sequences, batch=BATCH):
        return causal_lm(folder, sequences, batch, tok_args={"max_length": max_length},
                         padding_side="left", ids_and_mask=True)
    return official


def generator(folder, sequences, batch=BATCH):
    def text(s, bos):                        # whole 6-mers, after the BOS token
        cut = s[:len(s) // 6 * 6]
        return bos + cut if cut else bos

    config = AutoModelForCausalLM.from_pretrained(folder).config
    return causal_lm(folder, sequences, batch, padding_side="right", text=text,
                     tok_args={"add_special_tokens": True,
                               "max_length": config.max_position_embeddings})


def omnidna(folder, sequences, batch=BATCH):
    return causal_lm(folder, sequences, batch, tok_args={"max_length": 250})


def omnina(folder, sequences, batch=BATCH):
    return causal_lm(folder, sequences, batch, tok_args={}, pad_eos=True, loader=AutoModel)


def dnahlm(folder, sequences, batch=BATCH):
    config = AutoModelForCausalLM.from_pretrained(folder).config
    return causal_lm(folder, sequences, batch, ids_and_mask=True, tok_args={
        "max_length": config.n_positions, "add_special_tokens": False})


def encoder(folder, sequences, batch, *, tok_args: dict, run: Callable, pool: str = "masked",
            loader=AutoModel) -> np.ndarray:
    """nt.py, grover.py, dnabert-s.py, dnabert2.py, genalm.py, mutbert.py: `run(model, enc)`
    gives the last hidden layer, pooled over the mask (`masked`) or its first token (`cls`)."""
    tok = AutoTokenizer.from_pretrained(folder)
    model = loader.from_pretrained(folder, trust_remote_code=True).eval()

    def embed(chunk):
        enc = tok(chunk, return_tensors="pt", truncation=True, **tok_args)
        hidden = run(model, enc, tok)
        return hidden[:, 0] if pool == "cls" else masked_mean(hidden, enc["attention_mask"])

    return loop(sequences, batch, embed)


def hidden_states(model, enc, tok):
    return model(**enc, output_hidden_states=True).hidden_states[-1]


def nt(folder, sequences, batch=BATCH):
    tok = AutoTokenizer.from_pretrained(folder)
    return encoder(folder, sequences, batch, loader=AutoModelForMaskedLM, run=hidden_states,
                   tok_args={"padding": "max_length", "max_length": tok.model_max_length})


def grover(folder, sequences, batch=BATCH):
    tok = AutoTokenizer.from_pretrained(folder)
    return encoder(folder, sequences, batch, loader=AutoModelForMaskedLM, run=hidden_states,
                   tok_args={"padding": True, "max_length": tok.model_max_length})


def dnabert_s(folder, sequences, batch=BATCH):
    config = AutoModel.from_pretrained(folder).config
    return encoder(folder, sequences, batch, pool="cls",
                   run=lambda model, enc, tok: model(**enc).last_hidden_state,
                   tok_args={"padding": True, "max_length": config.max_position_embeddings})


def dnabert2(folder, sequences, batch=BATCH):
    return encoder(folder, sequences, batch, run=lambda model, enc, tok: model(**enc)[0],
                   tok_args={"padding": True, "max_length": 512})


def genalm(folder, sequences, batch=BATCH):
    def run(model, enc, tok):
        return model.bert(input_ids=enc["input_ids"],
                          attention_mask=enc["attention_mask"]).last_hidden_state

    return encoder(folder, sequences, batch, loader=AutoModelForMaskedLM, run=run,
                   tok_args={"padding": True, "max_length": 512})


def mutbert(folder, sequences, batch=BATCH):
    def run(model, enc, tok):
        rows = F.one_hot(enc["input_ids"], num_classes=len(tok)).to(torch.float32)
        rows = rows * enc["attention_mask"].unsqueeze(-1).to(rows.dtype)
        return model(rows, attention_mask=enc["attention_mask"],
                     return_dict=True).last_hidden_state

    return encoder(folder, sequences, batch, run=run,
                   tok_args={"padding": True, "add_special_tokens": True})


def no_mask_model(folder, sequences, batch=1, *, pass_mask: bool):
    """hyenadna.py (the ids only) and caduceus.py (the ids and the mask): no special tokens,
    the masked mean of the last of hidden_states."""
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, output_hidden_states=True).eval()

    def embed(chunk):
        enc = tok(chunk, add_special_tokens=False, padding=True, truncation=True,
                  max_length=tok.model_max_length, return_tensors="pt")
        inputs = dict(enc) if pass_mask else {"input_ids": enc["input_ids"]}
        return masked_mean(model(**inputs).hidden_states[-1], enc["attention_mask"])

    return loop(sequences, batch, embed)


def hyenadna(folder, sequences, batch=1):
    return no_mask_model(folder, sequences, batch, pass_mask=False)


def caduceus(folder, sequences, batch=1):
    return no_mask_model(folder, sequences, batch, pass_mask=True)


def splicebert(folder, sequences, batch=8):
    """harness/extractors/splicebert.py: windows of `max_position_embeddings - 2` letters every
    half window (1,024 and 512 for the real model), fixed ids, masked mean per window, the
    windows averaged."""
    model = AutoModelForMaskedLM.from_pretrained(folder).bert.eval()
    window = model.config.max_position_embeddings - 2
    ids = {"N": 5, "A": 6, "C": 7, "G": 8, "T": 9}
    windows, owners = [], []
    for n, s in enumerate(sequences):
        s = "".join("T" if b == "U" else b if b in ids else "N" for b in s.upper())
        starts = [0] if len(s) <= window else list(range(0, len(s) - window + 1, window // 2))
        if starts[-1] != max(0, len(s) - window):
            starts.append(len(s) - window)
        windows += [s[a:a + window] for a in starts]
        owners += [n] * len(starts)
    sums = np.zeros((len(sequences), model.config.hidden_size))
    counts = np.zeros(len(sequences))
    with torch.no_grad():
        for a in range(0, len(windows), batch):
            chunk = windows[a:a + batch]
            input_ids = torch.zeros((len(chunk), max(map(len, chunk)) + 2), dtype=torch.long)
            mask = torch.zeros_like(input_ids)
            for r, w in enumerate(chunk):
                input_ids[r, :len(w) + 2] = torch.tensor([2, *(ids[b] for b in w), 3])
                mask[r, :len(w) + 2] = 1
            pooled = masked_mean(model(input_ids=input_ids, attention_mask=mask)
                                 .last_hidden_state, mask).numpy()
            for owner, row in zip(owners[a:a + batch], pooled, strict=True):
                sums[owner] += row
                counts[owner] += 1
    return (sums / counts[:, None]).astype(np.float32)


# Catalog entry: (tiny architecture, its official recipe). The tiny decoders' tokenizers pad
# on the left where the real ones may, so that position ids are put to the test.
FAMILIES: dict[str, tuple[str, Callable]] = {
    "METAGENE-1": ("llama", metagene),
    "GenomeOcean-4B": ("mistral-left", genomeocean(10240)),
    "GenomeOcean-500M": ("mistral-left", genomeocean(1024)),
    "GENERator-eukaryote-3b-base": ("llama", generator),
    "Omni-DNA-1B": ("olmo-left", omnidna),
    "OmniNA-220m": ("llama-left", omnina),
    "gpt2_gene_v1": ("gpt2", dnahlm),
    "nucleotide-transformer-2.5b-multi-species": ("esm", nt),
    "nucleotide-transformer-v2-250m-multi-species": ("esm-rotary", nt),
    "agro-nucleotide-transformer-1b": ("esm", nt),
    "GROVER": ("bert-mlm", grover),
    "DNABERT-S": ("bert", dnabert_s),
    "dnabert2-no-flashattention": ("bert", dnabert2),
    "gena-lm-bert-base": ("bert-mlm", genalm),
    "MutBERT": ("one-hot-bert", mutbert),
    "hyenadna-medium-160k-seqlen-hf": ("mamba", hyenadna),
    "caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3": ("mamba", caduceus),
    "splicebert-1024nt": ("splice", splicebert),
}


def parity_id(model_id: str) -> str:
    return "parity-" + re.sub(r"[^A-Za-z0-9-]", "-", model_id)


def tiny_checkpoints(root: Path) -> dict[str, Path]:
    from tests.engine.tiny_models import mamba_left_padded

    dirs = {kind: build(kind, root / kind) for kind in ("llama", "gpt2", "esm", "esm-rotary",
                                                        "bert", "bert-mlm")}
    for kind in ("mistral", "olmo", "llama"):
        dirs[f"{kind}-left"] = build(kind, root / f"{kind}-left", padding_side="left")
    dirs["splice"] = build("bert-mlm", root / "splice", max_len=SPLICE_POSITIONS)
    # Caduceus' and HyenaDNA's tokenizers add [SEP] (the recipe leaves it out) and pad on the
    # left, ahead of the real tokens
    dirs["mamba"] = mamba_left_padded(root / "mamba")
    dirs["one-hot-bert"] = save_remote(
        root / "one-hot-bert", ONE_HOT_BERT, dirs["bert"], vocab_size=10, hidden_size=32,
        intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, pad_token_id=0)
    return dirs


def entry(model_id: str, folder: Path, as_id: str | None = None) -> str:
    """A user entry for the tiny `folder` with the catalog entry's recipe fields, named
    `as_id` (default: `parity_id`; the model's own id: it wins over the built-in entry)."""
    recipe = {f: getattr(load_models()[model_id], f) for f in RECIPE_FIELDS}
    lines = [f"model_id = {json.dumps(as_id or parity_id(model_id))}",
             f"path = {json.dumps(str(folder))}"]
    lines += [f"{f} = {json.dumps(v)}" for f, v in recipe.items() if v != RECIPE_DEFAULTS[f]]
    return "[[model]]\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def parity(tmp_path_factory) -> dict:
    """Every family's tiny checkpoint embedded by `fill` (float32 on the CPU) on one task; the
    stored embeddings of both splits, the splits' sequences and the checkpoints."""
    import zarr

    from engine.cli import main
    from store.embeddings import EmbeddingStore
    from store.paths import StorePaths

    root = tmp_path_factory.mktemp("parity")
    dirs = tiny_checkpoints(root / "ckpt")
    texts = hub_layout_task(root / "suite")
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text("\n".join(
        entry(m, dirs[arch]) for m, (arch, _) in FAMILIES.items()))
    assert main(["fill", "--store", str(store), "--suite", str(root / "suite"),
                 "--models", *map(parity_id, FAMILIES), "--regimes", "full",
                 "--device", "cpu", "--trust-remote-code"]) == 0
    embeddings = EmbeddingStore(StorePaths(store.resolve()))
    stored = {m: {split: zarr.open_group(str(embeddings.split_path(parity_id(m), "task_a",
                                                                   split)), mode="r")
                  for split in texts} for m in FAMILIES}
    return {"dirs": dirs, "texts": texts, "stored": stored}


@pytest.mark.parametrize("model_id", list(FAMILIES))
def test_the_catalog_recipe_reproduces_the_official_extractor(parity, model_id):
    arch, official = FAMILIES[model_id]
    for split, sequences in parity["texts"].items():
        ours = parity["stored"][model_id][split]["embeddings"][:]
        want = official(parity["dirs"][arch], sequences)
        assert ours.shape == want.shape and ours.dtype == np.float32
        np.testing.assert_allclose(ours, want, atol=1e-5, rtol=0, err_msg=f"{model_id} {split}")
    settings = parity["stored"][model_id]["test"].attrs["encoder"]
    assert settings["dtype"] == "float32"


def test_the_recipe_fields_reach_the_embeddings_settings(parity):
    """What makes these recipes new is recorded with their embeddings, so embeddings made
    under the earlier recipes are not reused."""
    settings = {m: parity["stored"][m]["test"].attrs["encoder"] for m in FAMILIES}
    assert settings["MutBERT"]["one_hot"] is True
    assert settings["GENERator-eukaryote-3b-base"].items() >= {
        ("bos_text", True), ("cut_to_multiple", 6)}
    assert settings["caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3"][
        "special_tokens"] is False
    assert settings["DNABERT-S"]["pooling"] == "cls" and settings["DNABERT-S"]["max_tokens"] == 512
    assert settings["splicebert-1024nt"].items() >= {
        ("encoder", "splicebert"), ("window", 32), ("stride", 16)}
    # a recipe without the new fields records what it always did
    assert not {"special_tokens", "bos_text", "cut_to_multiple", "one_hot"} & set(
        settings["GROVER"])


@pytest.mark.parametrize("model_id", ["METAGENE-1", "hyenadna-medium-160k-seqlen-hf"])
def test_a_batch_dependent_official_recipe_is_taken_at_batch_one(parity, model_id):
    """The deliberate difference of the table: at main.py's batch of 4 the official embedding
    of a sequence depends on the padding its neighbours bring; ours is the batch-1 value."""
    arch, official = FAMILIES[model_id]
    sequences = parity["texts"]["test"]
    ours = parity["stored"][model_id]["test"]["embeddings"][:]
    at_four = official(parity["dirs"][arch], sequences, batch=BATCH)
    np.testing.assert_allclose(ours, official(parity["dirs"][arch], sequences), atol=1e-5)
    assert np.abs(ours - at_four).max() > 1e-3
