"""Tiny randomly initialised Hugging Face checkpoints, saved with `save_pretrained`.

Built in the tests (no network): BERT and ESM encoders with a single-nucleotide tokenizer (and
a BERT masked LM with SpliceBERT's vocabulary order), GPT-2, Llama, Mistral and OLMo decoders
with a small BPE tokenizer trained on random DNA, a Mamba model, and models whose code lives in
the checkpoint (`save_remote`).
"""

from __future__ import annotations

import random
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def random_dna(n: int, lo: int, hi: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("ACGT") for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def hub_layout_task(suite: Path, task: str = "task_a",
                    sizes: tuple[tuple[str, int], ...] = (("train", 24), ("test", 10))
                    ) -> dict[str, list[str]]:
    """One task in the hub layout (`<suite>/tasks/<task>/{train,test}.csv`, columns text,label,
    labels alternating 0, 1) of random DNA; returns its sequences per split."""
    import csv

    folder = suite / "tasks" / task
    folder.mkdir(parents=True)
    texts = {}
    for split, n in sizes:
        texts[split] = random_dna(n, 20, 60, seed=len(split))
        with open(folder / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["text", "label"])
            w.writerows((s, i % 2) for i, s in enumerate(texts[split]))
    return texts


def char_tokenizer(max_len: int, cls_sep: bool = True, letters: str = "ACGTN",
                   padding_side: str = "right") -> PreTrainedTokenizerFast:
    vocab = {t: i for i, t in enumerate(SPECIALS + list(letters))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    if cls_sep:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_len,
        padding_side=padding_side)


def bpe_tokenizer(max_len: int, padding_side: str = "right") -> PreTrainedTokenizerFast:
    """A decoder's tokenizer: BOS before the text, no token type ids (as GPT-2's and Llama's)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(".{1,32}"), behavior="isolated")
    tok.decoder = decoders.BPEDecoder()
    trainer = trainers.BpeTrainer(vocab_size=64, special_tokens=["<pad>", "<unk>", "<s>", "</s>"],
                                  initial_alphabet=list("ACGTN"), show_progress=False)
    tok.train_from_iterator(random_dna(200, 50, 200, seed=1), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   bos_token="<s>", eos_token="</s>", model_max_length=max_len,
                                   padding_side=padding_side,
                                   model_input_names=["input_ids", "attention_mask"])


def build(kind: str, folder: Path, max_len: int = 128, seed: int = 0,
          padding_side: str = "right") -> Path:
    """Save a tiny `kind` (bert | bert-mlm | esm | esm-rotary | gpt2 | llama | mistral | olmo |
    mamba) model and its tokenizer (padding on `padding_side`) in `folder`, its weights drawn
    from torch's generator seeded with `seed`; `bert-mlm` is a BERT masked LM whose vocabulary
    is in SpliceBERT's order (N A C G T after the specials)."""
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertModel,
        EsmConfig,
        EsmForMaskedLM,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        MambaConfig,
        MambaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        OlmoConfig,
        OlmoForCausalLM,
    )

    torch.manual_seed(seed)
    layers = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 2, "max_position_embeddings": max_len}
    if kind == "bert":
        tok = char_tokenizer(max_len, padding_side=padding_side)
        model = BertModel(BertConfig(vocab_size=len(tok), **layers, pad_token_id=0))
    elif kind == "bert-mlm":
        tok = char_tokenizer(max_len, letters="NACGT", padding_side=padding_side)
        model = BertForMaskedLM(BertConfig(vocab_size=len(tok), **layers, pad_token_id=0))
    elif kind in ("esm", "esm-rotary"):
        tok = char_tokenizer(max_len, padding_side=padding_side)
        model = EsmForMaskedLM(EsmConfig(
            vocab_size=len(tok), **{**layers, "max_position_embeddings": max_len + 2},
            pad_token_id=0, mask_token_id=tok.mask_token_id, token_dropout=False,
            position_embedding_type="rotary" if kind == "esm-rotary" else "absolute"))
    elif kind == "gpt2":
        tok = bpe_tokenizer(max_len, padding_side=padding_side)
        model = GPT2LMHeadModel(GPT2Config(
            vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=max_len,
            bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id))
    elif kind == "llama":
        tok = bpe_tokenizer(max_len, padding_side=padding_side)
        model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), **layers,
                                             num_key_value_heads=2,
                                             pad_token_id=tok.pad_token_id))
    elif kind == "mistral":
        tok = bpe_tokenizer(max_len, padding_side=padding_side)
        model = MistralForCausalLM(MistralConfig(vocab_size=len(tok), **layers,
                                                 num_key_value_heads=1, sliding_window=None,
                                                 pad_token_id=tok.pad_token_id))
    elif kind == "olmo":
        tok = bpe_tokenizer(max_len, padding_side=padding_side)
        model = OlmoForCausalLM(OlmoConfig(vocab_size=len(tok), **layers,
                                           pad_token_id=tok.pad_token_id,
                                           bos_token_id=tok.bos_token_id,
                                           eos_token_id=tok.eos_token_id))
    elif kind == "mamba":
        tok = char_tokenizer(max_len, cls_sep=False, padding_side=padding_side)
        model = MambaForCausalLM(MambaConfig(
            vocab_size=len(tok), hidden_size=32, state_size=4, num_hidden_layers=2, expand=2,
            pad_token_id=0))
    else:
        raise ValueError(kind)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def one_task_fill(tmp_path: Path, model: Path) -> tuple[str, ...]:
    """`fill --json` of `model` (a checkpoint folder) on a suite of one small task in
    `tmp_path`, into `tmp_path/store`, full regime, on the CPU: the argv (more options go
    after it)."""
    from tests.engine.conftest import write_task

    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "one_task.csv", 20, 10, 2, 1, length=40)
    return ("fill", "--store", str(tmp_path / "store"), "--suite", str(suite), "--models",
            str(model), "--regimes", "full", "--device", "cpu", "--json")


def catalogued_bert(root: Path, max_len: int) -> dict:
    """A tiny BERT (`build`) in `root/tiny-bert` and a user catalog naming it `tiny-bert`
    (params 1000): {"folder": its folder, "catalog": the loaded catalog}."""
    from store.catalog import load_models

    folder = build("bert", root / "tiny-bert", max_len=max_len)
    (root / "models.toml").write_text(f'[[model]]\nmodel_id = "tiny-bert"\npath = "{folder}"\n'
                                      "params = 1000\n")
    return {"folder": folder, "catalog": load_models(root / "models.toml")}


def mamba_left_padded(folder: Path) -> Path:
    """A tiny Mamba whose tokenizer pads on the left, ahead of the real tokens (as HyenaDNA's
    and Caduceus'), every weight random, the pad token's row included (the tiny model starts
    it at zero, and a zero row would leave the real tokens as they were)."""
    from transformers import AutoModelForCausalLM

    build("mamba", folder)
    char_tokenizer(128, cls_sep=True, padding_side="left").save_pretrained(folder)
    mamba = AutoModelForCausalLM.from_pretrained(folder)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in mamba.parameters():
            p.add_(0.1 * torch.randn_like(p))
    mamba.save_pretrained(folder)
    return folder


def save_remote(folder: Path, code: str, tokenizer_from: Path, **config) -> Path:
    """Save, in `folder`, the model of `code` (a module defining `TinyRemoteConfig` and
    `TinyRemoteModel`, registered for AutoConfig and AutoModel, so the checkpoint names its
    code in `auto_map` and holds a copy of it) built from `config`, with the tokenizer files of
    the checkpoint `tokenizer_from`."""
    import importlib.util
    import shutil
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as src:
        (Path(src) / "tiny_remote.py").write_text(code)
        spec = importlib.util.spec_from_file_location("tiny_remote", Path(src) / "tiny_remote.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["tiny_remote"] = module
        try:
            spec.loader.exec_module(module)
            module.TinyRemoteConfig.register_for_auto_class()
            module.TinyRemoteModel.register_for_auto_class("AutoModel")
            torch.manual_seed(0)
            module.TinyRemoteModel(module.TinyRemoteConfig(**config)).save_pretrained(folder)
        finally:
            del sys.modules["tiny_remote"]
    for f in tokenizer_from.iterdir():
        if "token" in f.name or f.name == "special_tokens_map.json":
            shutil.copy(f, folder / f.name)
    return folder
