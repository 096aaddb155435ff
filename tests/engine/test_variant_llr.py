"""variant-llr-v1: the log-likelihood ratios of a language-model head, checked against plain
loops written out here on tiny checkpoints (a masked BERT with a single-letter and with a
2-mer tokenizer, a causal GPT-2 and Llama with a small BPE), cached in the embedding store and
resumed after a kill without computing again what was written, through `fill` into result rows
(AUROC of -LLR, as scikit-learn) and the predictions table; a model without a head is refused
in one line before anything is written."""

from __future__ import annotations

import csv
import json
import random
import re
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
from transformers import (
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    PreTrainedTokenizerFast,
)

import engine.encoders.lm_head as lm_head
from engine.encoders.lm_head import Head, Scorer, head_of, head_of_architectures, score_into
from engine.pairs import score_llr
from engine.probes.kinds import LLR_SPLIT, llr_identity, llr_score
from engine.task_kinds import read_kind_csv
from store.catalog import ModelMeta
from store.db import Snapshot
from store.embeddings import EmbeddingStore
from store.paths import resolve_store
from store.tables.predictions import read_values
from store.vocab.errors import GenebError
from store.vocab.kinds import TaskKind
from store.vocab.protocol import (
    GENEB_V1,
    RIDGE_V1,
    VARIANT_COSINE_V1,
    VARIANT_LLR_V1,
    VARIANT_PROBE_V1,
    protocols_for,
)
from tests.engine.in_process import outputs, refused
from tests.engine.tiny_models import SPECIALS, bpe_tokenizer, build


def _variants(n: int, width: int, seed: int, substitutions: int = 1) -> tuple[list, list]:
    rng = random.Random(seed)
    refs, alts = [], []
    for _ in range(n):
        ref = "".join(rng.choice("ACGT") for _ in range(width))
        alt = list(ref)
        for p in rng.sample(range(width), substitutions):
            alt[p] = rng.choice([c for c in "ACGT" if c != ref[p]])
        refs.append(ref)
        alts.append("".join(alt))
    return refs, alts


def _kmer2(folder: Path) -> Path:
    """A masked BERT whose tokenizer cuts the text into 2-mers (a last odd letter alone)."""
    letters = [a + b for a in "ACGTN" for b in "ACGTN"] + list("ACGTN")
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIALS + letters)},
                                     unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(".{1,2}"), behavior="isolated")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   model_max_length=128)
    torch.manual_seed(3)
    BertForMaskedLM(BertConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64,
                               num_hidden_layers=2, num_attention_heads=2,
                               max_position_embeddings=128, pad_token_id=0)
                    ).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("llr")
    return {"bert-mlm": build("bert-mlm", root / "bert-mlm"),
            "kmer2-mlm": _kmer2(root / "kmer2-mlm"),
            "gpt2": build("gpt2", root / "gpt2"), "llama": build("llama", root / "llama"),
            "bert": build("bert", root / "bert")}


def _scorer(folder: Path, head: Head) -> Scorer:
    cls = AutoModelForMaskedLM if head is Head.MASKED else AutoModelForCausalLM
    return Scorer(folder.name, head, cls.from_pretrained(folder).eval(),
                  AutoTokenizer.from_pretrained(folder), torch.device("cpu"),
                  nullcontext, 128)


def _masked_by_hand(folder: Path, ref: str, alt: str) -> float:
    """Mask every token of ref whose letters hold a changed position; sum log p(alt token) -
    log p(ref token) there, one sequence at a time."""
    model, tok = AutoModelForMaskedLM.from_pretrained(folder).eval(), \
        AutoTokenizer.from_pretrained(folder)
    r = tok(ref, return_offsets_mapping=True)
    a = tok(alt)
    changed = [p for p in range(len(ref)) if ref[p] != alt[p]]
    masked = [t for t, (s, e) in enumerate(r["offset_mapping"])
              if any(s <= p < e for p in changed)]
    ids = list(r["input_ids"])
    for t in masked:
        ids[t] = tok.mask_token_id
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], dim=-1)
    return sum(float(logp[t, a["input_ids"][t]] - logp[t, r["input_ids"][t]]) for t in masked)


def _causal_by_hand(folder: Path, ref: str, alt: str) -> float:
    """log p(alt) - log p(ref): each token's log-probability given the tokens before it, from
    a forward pass of that prefix alone."""
    model, tok = AutoModelForCausalLM.from_pretrained(folder).eval(), \
        AutoTokenizer.from_pretrained(folder)

    def loglik(seq: str) -> float:
        ids = tok(seq)["input_ids"]
        if ids[0] != tok.bos_token_id:
            ids = [tok.bos_token_id, *ids]
        total = 0.0
        for t in range(1, len(ids)):
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids[:t]])).logits[0, -1]
            total += float(torch.log_softmax(logits, dim=-1)[ids[t]])
        return total

    return loglik(alt) - loglik(ref)


@pytest.mark.parametrize(("name", "head", "substitutions"), [
    ("bert-mlm", Head.MASKED, 1), ("bert-mlm", Head.MASKED, 2), ("kmer2-mlm", Head.MASKED, 1),
    ("gpt2", Head.CAUSAL, 1), ("llama", Head.CAUSAL, 2)])
def test_the_llrs_are_those_of_a_plain_loop(checkpoints, name, head, substitutions):
    refs, alts = _variants(6, 21, seed=len(name) + substitutions, substitutions=substitutions)
    refs.append(refs[0][:15])       # another length: batches of equal token length
    alts.append(alts[0][:14] + ("A" if refs[0][14] != "A" else "C"))
    by_hand = _masked_by_hand if head is Head.MASKED else _causal_by_hand
    expected = [by_hand(checkpoints[name], r, a) for r, a in zip(refs, alts, strict=True)]
    got = _scorer(checkpoints[name], head).llr(refs, alts, [f"v{i}" for i in range(len(refs))])
    assert np.allclose(got, expected, atol=1e-4), (got, expected)
    assert np.ptp(got) > 0.01        # not all equal: the check can fail


def test_a_tokenizer_that_splits_ref_and_alt_differently_is_refused_naming_the_variant():
    tok = bpe_tokenizer(128)
    tok.add_special_tokens({"mask_token": "<unk>"})
    scorer = Scorer("bpe", Head.MASKED, None, tok, torch.device("cpu"), None, 128)
    refs, alts = _variants(200, 40, seed=5)
    spans = [tok(s, return_offsets_mapping=True)["offset_mapping"] for s in refs + alts]
    first = next(i for i in range(200) if spans[i] != spans[200 + i])   # the BPE moved
    with pytest.raises(GenebError, match=rf"^v{first}: model bpe's tokenizer splits ref and "
                                         "alt into different tokens"):
        scorer.llr(refs, alts, [f"v{i}" for i in range(200)])
    with pytest.raises(GenebError, match="^v0: ref and alt differ in length"):
        scorer.llr(["ACGT"], ["ACG"], ["v0"])


def test_which_models_have_a_head_is_decided_by_the_entry_and_the_architectures():
    assert head_of_architectures(["BertForMaskedLM"]) is Head.MASKED
    assert head_of_architectures(["GPT2LMHeadModel"]) is Head.CAUSAL
    assert head_of_architectures(["LlamaForCausalLM"]) is Head.CAUSAL
    assert head_of_architectures(["BertModel"]) is head_of_architectures(None) is None
    hf = ModelMeta.one_off("m", hub_id="org/m")
    assert head_of(hf) is None and head_of(hf, ["EsmForMaskedLM"]) is Head.MASKED
    for model, architectures, why in (
            (hf, ["BertModel"], "its checkpoint has none (architectures: BertModel)"),
            (ModelMeta.one_off("kmer-3", encoder="kmer"), False, "its encoder (kmer) has none"),
            (hf.randomised(1), ["BertForMaskedLM"], "a random-initialisation control")):
        with pytest.raises(GenebError, match=rf"^model {model.model_id}: variant-llr-v1 needs "
                                             rf"a language-model head .*{re.escape(why)}"):
            head_of(model, architectures)


def test_variant_llr_v1_runs_on_variant_tasks_where_a_run_names_it():
    assert VARIANT_LLR_V1.hash not in {GENEB_V1.hash, VARIANT_COSINE_V1.hash,
                                       VARIANT_PROBE_V1.hash, RIDGE_V1.hash}
    assert GENEB_V1.hash == "7ca1440b4506" and VARIANT_LLR_V1.zero_shot
    both = [GENEB_V1, VARIANT_LLR_V1]
    assert protocols_for("variant", both) == (VARIANT_COSINE_V1, VARIANT_PROBE_V1,
                                              VARIANT_LLR_V1)
    assert protocols_for("variant", [GENEB_V1]) == (VARIANT_COSINE_V1, VARIANT_PROBE_V1)
    assert protocols_for("classification", both) == (GENEB_V1,)
    assert protocols_for("regression", both) == (RIDGE_V1,)


class _Killed(Exception):
    pass


def test_a_killed_scoring_resumes_without_computing_what_was_written(checkpoints, tmp_path,
                                                                      monkeypatch):
    """The LLRs of 10 variants in blocks of 4: killed after the first block, the next writer
    (what the next fill gets) keeps its 4 rows and scores the other 6; the split then loads
    (verified) and equals an uninterrupted run's."""
    monkeypatch.setattr(lm_head, "BLOCK", 4)
    scorer = _scorer(checkpoints["bert-mlm"], Head.MASKED)
    refs, alts = _variants(10, 21, seed=9)
    where = [f"v{i}" for i in range(10)]
    store = EmbeddingStore(resolve_store(tmp_path / "store"))
    identity = llr_identity({"model_id": "m", "model_revision": "r", "encoder": {"source": "s"},
                             "data_hash": "d", "dtype": "float32"})
    labels = np.arange(10) % 2
    writer = store.writer("m", "t", LLR_SPLIT, labels, identity)
    write = writer.write

    def killed(rows, block):
        write(rows, block)
        raise _Killed

    writer.write = killed
    with pytest.raises(_Killed):
        score_into(scorer, refs, alts, writer, where)
    assert store.load("m", "t", LLR_SPLIT, identity) is None         # not visible yet
    scored = []
    original = scorer.llr
    monkeypatch.setattr(scorer, "llr", lambda r, a, w: scored.extend(w) or original(r, a, w))
    again = store.writer("m", "t", LLR_SPLIT, labels, identity)
    assert score_into(scorer, refs, alts, again, where) == 6
    assert scored == where[4:]
    again.finish({})
    values, stored_labels = store.load("m", "t", LLR_SPLIT, identity)
    assert values.dtype == np.float64 and np.array_equal(stored_labels, labels)
    assert np.allclose(values[:, 0], original(refs, alts, where), atol=1e-12)


def _suite(root: Path) -> tuple[Path, list[str], list[str], np.ndarray]:
    """A one-task variant suite; returns it, its test refs and alts and labels."""
    root.mkdir()
    (root / "manifest.csv").write_text("task_id,category,label,kind\n"
                                       "var_a,Variant,A variant task,variant\n")
    tr, ta = _variants(12, 30, seed=1)
    refs, alts = _variants(10, 30, seed=2)
    labels = np.arange(10) % 2
    with open(root / "var_a.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ref", "alt", "label", "split"])
        w.writerows((r, a, i % 2, "train") for i, (r, a) in enumerate(zip(tr, ta, strict=True)))
        w.writerows((r, a, y, "test") for r, a, y in zip(refs, alts, labels, strict=True))
    return root, refs, alts, labels


def test_fill_scores_minus_the_llr_into_results_and_predictions(checkpoints, tmp_path, capsys):
    suite, refs, alts, labels = _suite(tmp_path / "suite")
    model = checkpoints["bert-mlm"]
    at = ("--store", str(tmp_path / "store"), "--suite", str(suite))
    argv = ("fill", *at, "--models", str(model), "--protocol", "geneb-v1", "variant-llr-v1",
            "--regimes", "full", "--device", "cpu")
    rc, _, err = outputs(capsys, *argv)
    assert rc == 0, err
    llr = np.array([_masked_by_hand(model, r, a) for r, a in zip(refs, alts, strict=True)])
    paths = resolve_store(tmp_path / "store")
    rows = Snapshot(paths).query(
        f"SELECT * FROM results_all WHERE protocol_hash = '{VARIANT_LLR_V1.hash}'").to_dicts()
    assert len(rows) == 5 and {r["regime"] for r in rows} == {"zeroshot"}
    assert rows[0]["auroc"] == pytest.approx(roc_auc_score(labels, -llr), abs=1e-12)
    assert rows[0]["auprc"] == pytest.approx(average_precision_score(labels, -llr), abs=1e-12)
    values = read_values(paths, protocol_hash=VARIANT_LLR_V1.hash)
    assert values.height == 5
    assert np.allclose(values["value"][0].to_list(), llr_score(llr), atol=1e-4)
    assert values["target"][0].to_list() == labels.tolist()
    rc, out, _ = outputs(capsys, *argv)
    assert rc == 0 and "3 cells; 3 in the store, 0 to compute" in out
    # the cache is used only when it verifies: a flipped byte is scored again, in full
    emb, name = EmbeddingStore(paths), model.name
    expect = json.loads((emb.split_path(name, "var_a", "test") / "zarr.json").read_text())
    data = read_kind_csv(suite / "var_a.csv", "var_a", TaskKind.VARIANT)
    meta = ModelMeta.one_off(name, path=str(model))

    def rescored() -> int:
        return score_llr(emb, meta, lambda: _scorer(model, Head.MASKED), data,
                         expect["attributes"])

    assert rescored() == 0
    chunk = emb.split_path(name, "var_a", LLR_SPLIT) / "embeddings" / "c" / "0" / "0"
    raw = bytearray(chunk.read_bytes())
    raw[0] ^= 1
    chunk.write_bytes(bytes(raw))
    assert emb.load(name, "var_a", LLR_SPLIT, llr_identity(expect["attributes"])) is None
    assert rescored() == 10
    again = emb.load(name, "var_a", LLR_SPLIT, llr_identity(expect["attributes"]))[0][:, 0]
    assert np.allclose(again, llr, atol=1e-4)


def test_a_model_without_a_head_or_a_run_without_a_classification_protocol_is_refused(
        checkpoints, tmp_path, capsys):
    suite, *_ = _suite(tmp_path / "suite")
    store = tmp_path / "store"
    store.mkdir()
    for model, why in ((str(checkpoints["bert"]), "architectures: BertModel"),
                       ("kmer-3", "its encoder (kmer) has none")):
        refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite),
                "--models", model, "--protocol", "geneb-v1", "variant-llr-v1",
                names=("variant-llr-v1 needs a language-model head", why))
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite), "--models",
            "kmer-3", "--protocol", "geneb-v1", "variant-llr-v1", "--dry-run",
            names=("model kmer-3: variant-llr-v1 needs a language-model head",))
    rc, out, err = outputs(capsys, "fill", "--store", str(store), "--suite", str(suite),
                           "--models", str(checkpoints["bert-mlm"]), "--protocol", "geneb-v1",
                           "variant-llr-v1", "--dry-run", "--regimes", "full")
    assert rc == 0, err
    assert ("variant-llr-v1: nothing fitted (zero-shot); its language model's forward passes "
            "(one per test variant, masked; two, causal) are not estimated") in out
    refused(capsys, store, "fill", "--store", str(store), "--suite", "geneb-mini", "--tasks",
            "mini_promoter_tata", "--models", "kmer-3", "--protocol", "variant-llr-v1",
            names=("--protocol variant-llr-v1: scores variant tasks only", "mini_promoter_tata",
                   "--protocol geneb-v1 variant-llr-v1"))
