"""Tiny randomly initialised Hugging Face checkpoints, saved with `save_pretrained`.

Built in the tests (no network): a BERT-like encoder with a single-nucleotide tokenizer, GPT-2
and Llama decoders with a small BPE tokenizer trained on random DNA, and a Mamba model.
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


def char_tokenizer(max_len: int, cls_sep: bool = True) -> PreTrainedTokenizerFast:
    vocab = {t: i for i, t in enumerate(SPECIALS + list("ACGTN"))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    if cls_sep:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_len)


def bpe_tokenizer(max_len: int) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(".{1,32}"), behavior="isolated")
    tok.decoder = decoders.BPEDecoder()
    trainer = trainers.BpeTrainer(vocab_size=64, special_tokens=["<pad>", "<unk>", "<s>", "</s>"],
                                  initial_alphabet=list("ACGTN"), show_progress=False)
    tok.train_from_iterator(random_dna(200, 50, 200, seed=1), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   bos_token="<s>", eos_token="</s>", model_max_length=max_len)


def build(kind: str, folder: Path, max_len: int = 128, seed: int = 0) -> Path:
    """Save a tiny `kind` (bert | gpt2 | llama | mamba) model and its tokenizer in `folder`, its
    weights drawn from torch's generator seeded with `seed`."""
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        MambaConfig,
        MambaForCausalLM,
    )

    torch.manual_seed(seed)
    if kind == "bert":
        tok = char_tokenizer(max_len)
        model = BertModel(BertConfig(
            vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=max_len, pad_token_id=0))
    elif kind == "gpt2":
        tok = bpe_tokenizer(max_len)
        model = GPT2LMHeadModel(GPT2Config(
            vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=max_len,
            bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id))
    elif kind == "llama":
        tok = bpe_tokenizer(max_len)
        model = LlamaForCausalLM(LlamaConfig(
            vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=max_len,
            pad_token_id=tok.pad_token_id))
    elif kind == "mamba":
        tok = char_tokenizer(max_len, cls_sep=False)
        model = MambaForCausalLM(MambaConfig(
            vocab_size=len(tok), hidden_size=32, state_size=4, num_hidden_layers=2, expand=2,
            pad_token_id=0))
    else:
        raise ValueError(kind)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
