"""Zero-shot log-likelihood ratios of variants from a model's language-model head
(`variant-llr-v1`, `store.vocab.protocol`).

Which models have a head is decided here, once (`head_of`): a model of the generic Hugging Face
encoder (`hf`) whose checkpoint's `config.json` names a masked-LM architecture (`*ForMaskedLM`:
the masked marginal) or a causal one (`*ForCausalLM`, `*LMHeadModel`: the sequence
likelihood), loaded with that head's class (`AutoModelForMaskedLM`, `AutoModelForCausalLM`),
every weight of the head read from the checkpoint (none initialised afresh). Every other model
(the k-mer baselines, the adapters, a base model saved without its head, a random-initialisation
control) is refused in one line naming it.

- masked marginal (masked models): each variant is a substitution (ref and alt of one length);
  the positions where they differ are the variant's. Both are tokenized by the model's tokenizer
  with its special tokens, offsets asked (a fast tokenizer); the masked tokens are those of the
  reference whose characters overlap a variant position (one for a single-nucleotide tokenizer,
  the k-mer(s) or BPE piece(s) that hold it otherwise), all masked at once in the reference; the
  LLR is the sum over them of log p(alt token) - log p(ref token) at that token. Where the
  alternative's tokens do not cover the same characters as the reference's (a BPE tokenizer
  that splits the two differently), the marginal is ill-defined: the pair is refused in one line
  naming the variant, as is a variant of two lengths or one past the model's context.
- sequence likelihood (causal models): log p(seq) = sum over t >= 1 of log p(x_t | x_<t) of the
  tokenizer's ids with its special tokens, the tokenizer's BOS token put first where it has one
  the ids do not start with (so the first letter is scored too); LLR = log p(alt) - log p(ref).

The score a variant is ranked by is -LLR (`engine.probes.kinds.llr_score`): the less likely
the alternative than the reference, the more likely the variant has an effect (label 1).
Sequences are batched by equal token length, never padded, so a batch computes what one
sequence alone would. The forward
passes run at the encoder's precision (its device, weights dtype and autocast); log-softmax in
float32; the LLRs are stored in float64.

The LLRs are cached like embeddings (`store.embeddings`): the split
`engine.probes.kinds.LLR_SPLIT` of the pair's folder, one value a test variant, written in
blocks whose `done` flags a killed fill resumes from (`score_into`), verified by the same
checksums before a fill scores it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
import torch

from engine.encoders.hf import from_pretrained, quiet_transformers
from engine.encoders.hub import read_without_hub
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

BLOCK = 64
"""Variants scored between two writes (what a killed fill may compute again)."""


class Head(StrEnum):
    MASKED = "masked"
    CAUSAL = "causal"


_HEAD_SUFFIXES = ((Head.MASKED, ("ForMaskedLM",)), (Head.CAUSAL, ("ForCausalLM", "LMHeadModel")))


def head_of_architectures(architectures: Sequence[str] | None) -> Head | None:
    """The head a checkpoint's `architectures` (config.json) name; None: no LM head."""
    for head, suffixes in _HEAD_SUFFIXES:
        if any(a.endswith(suffixes) for a in architectures or ()):
            return head
    return None


def _no_head(model_id: str, why: str) -> GenebError:
    return GenebError(f"model {model_id}: variant-llr-v1 needs a language-model head (masked "
                      f"or causal) and {why}; leave variant-llr-v1 out of --protocol for it")


def head_of(model: ModelMeta, architectures: Sequence[str] | None | bool = False) -> Head | None:
    """The head `model` scores variants with (see the module), from its checkpoint's
    `architectures` (False: not read yet, only the entry is checked, and None is returned); a
    `GenebError` naming the model where it has none: the one decision, asked before a run
    writes anything (the architectures where its config.json is on this machine,
    `local_architectures`) and when its LM is loaded."""
    if model.encoder != "hf":
        raise _no_head(model.model_id, f"its encoder ({model.encoder}) has none")
    if model.random_init is not None:
        raise _no_head(model.model_id, "a random-initialisation control has no trained one")
    if architectures is False:
        return None
    head = head_of_architectures(architectures)
    if head is None:
        names = ", ".join(architectures or ()) or "none"
        raise _no_head(model.model_id, f"its checkpoint has none (architectures: {names})")
    return head


def local_architectures(model: ModelMeta) -> Sequence[str] | None | bool:
    """The `architectures` of the model's config.json where it is read without the hub (a
    local folder, a pinned cached snapshot); False where it is not (the hub decides later)."""
    folder = read_without_hub(model.path or model.hub_id, model.revision)
    try:
        config = json.loads((folder / "config.json").read_text()) if folder else None
    except (OSError, ValueError):
        return False          # the load says what is wrong with it
    return False if not isinstance(config, dict) else config.get("architectures")


@dataclass
class Scorer:
    """A model with its LM head, ready to score variants (`load_scorer`)."""

    model_id: str
    head: Head
    lm: torch.nn.Module
    tokenizer: object
    device: torch.device
    autocast: object          # the encoder's autocast context factory
    max_tokens: int | None

    def _log_probs(self, ids: list[list[int]]) -> torch.Tensor:
        """log-softmax (float32) of the model's logits of equal-length rows."""
        batch = torch.tensor(ids, dtype=torch.long, device=self.device)
        with torch.inference_mode(), self.autocast():
            logits = self.lm(input_ids=batch).logits
        return torch.log_softmax(logits.float(), dim=-1)

    def _ids(self, seqs: Sequence[str], offsets: bool = False):
        return self.tokenizer(list(seqs), add_special_tokens=True, truncation=False,
                              return_offsets_mapping=offsets)

    def llr(self, refs: Sequence[str], alts: Sequence[str], where: Sequence[str]) -> np.ndarray:
        """log p(alt) - log p(ref) of each variant (see the module); `where` names each one
        for a refusal."""
        scorer = self._masked if self.head is Head.MASKED else self._causal
        return scorer(refs, alts, where)

    # ---- masked marginal -------------------------------------------------------------

    def _masked(self, refs, alts, where) -> np.ndarray:
        if not getattr(self.tokenizer, "is_fast", False):
            raise GenebError(f"model {self.model_id}: variant-llr-v1's masked marginal needs "
                             "token offsets, which its (slow) tokenizer does not give")
        mask_id = self.tokenizer.mask_token_id
        if mask_id is None:
            raise GenebError(f"model {self.model_id}: its tokenizer has no mask token; the "
                             "masked marginal needs one")
        r, a = self._ids(refs, offsets=True), self._ids(alts, offsets=True)
        jobs = []   # (ref ids masked, masked positions, ref ids there, alt ids there)
        for i, (ref, alt) in enumerate(zip(refs, alts, strict=True)):
            if len(ref) != len(alt):
                raise GenebError(f"{where[i]}: ref and alt differ in length; variant-llr-v1's "
                                 "masked marginal scores substitutions only")
            spans = [tuple(o) for o in r["offset_mapping"][i]]
            if spans != [tuple(o) for o in a["offset_mapping"][i]]:
                raise GenebError(f"{where[i]}: model {self.model_id}'s tokenizer splits ref and "
                                 "alt into different tokens, so the masked marginal is not "
                                 "defined for it (variant-llr-v1 refuses such tokenizers)")
            changed = [p for p, (x, y) in enumerate(zip(ref, alt, strict=True)) if x != y]
            masked = [t for t, (s, e) in enumerate(spans)
                      if e > s and any(s <= p < e for p in changed)]
            covered = {p for s, e in spans for p in range(s, e)}
            if not all(p in covered for p in changed) or (
                    self.max_tokens is not None and len(spans) > self.max_tokens):
                raise GenebError(f"{where[i]}: the variant lies beyond model {self.model_id}'s "
                                 "context (or its tokens); variant-llr-v1 cannot score it")
            ids = list(r["input_ids"][i])
            ref_at = [ids[t] for t in masked]
            alt_at = [a["input_ids"][i][t] for t in masked]
            for t in masked:
                ids[t] = mask_id
            jobs.append((ids, masked, ref_at, alt_at))
        out = np.empty(len(jobs), dtype=np.float64)
        for rows in _by_length([j[0] for j in jobs]):
            logp = self._log_probs([jobs[i][0] for i in rows])
            for b, i in enumerate(rows):
                _, masked, ref_at, alt_at = jobs[i]
                at, alt_ids, ref_ids = (torch.tensor(x, device=logp.device)
                                        for x in (masked, alt_at, ref_at))
                out[i] = float((logp[b, at, alt_ids] - logp[b, at, ref_ids]).double().sum())
        return out

    # ---- sequence likelihood ---------------------------------------------------------

    def _causal(self, refs, alts, where) -> np.ndarray:
        seqs = list(refs) + list(alts)
        ids = [list(x) for x in self._ids(seqs)["input_ids"]]
        bos = self.tokenizer.bos_token_id
        if bos is not None:
            ids = [x if x[:1] == [bos] else [bos, *x] for x in ids]
        for i, x in enumerate(ids):
            if self.max_tokens is not None and len(x) > self.max_tokens:
                raise GenebError(f"{where[i % len(refs)]}: its sequence is longer than model "
                                 f"{self.model_id}'s context; variant-llr-v1 cannot score it")
        total = np.empty(len(ids), dtype=np.float64)
        for rows in _by_length(ids):
            batch = [ids[i] for i in rows]
            logp = self._log_probs(batch)
            nxt = torch.tensor(batch, device=logp.device)[:, 1:]
            per = logp[:, :-1].gather(-1, nxt.unsqueeze(-1)).squeeze(-1)
            total[rows] = per.double().sum(dim=1).cpu().numpy()
        return total[len(refs):] - total[:len(refs)]


BATCH_TOKENS = 8192
"""Tokens a batch holds at most (its log-probabilities: tokens x vocabulary floats)."""


def _by_length(ids: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Row indices in batches of equal token length, at most `BATCH_TOKENS` tokens (one row
    at least) and 32 rows each."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    out = []
    for n in np.unique(lengths):
        rows = np.flatnonzero(lengths == n)
        most = int(max(1, min(32, BATCH_TOKENS // max(int(n), 1))))
        out += [rows[a:a + most] for a in range(0, rows.size, most)]
    return out


def load_scorer(model: ModelMeta, encoder) -> Scorer:
    """The LM of `model`'s checkpoint (the encoder's files, revision and remote-code decision),
    on the encoder's device; refused in one line where `head_of` refuses it or a head weight
    would be initialised afresh."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM  # lazy: transformers

    head = head_of(model, getattr(encoder.model.config, "architectures", None))
    cls = AutoModelForMaskedLM if head is Head.MASKED else AutoModelForCausalLM
    with quiet_transformers():
        lm, info = from_pretrained(cls, encoder.model_id, encoder.source, encoder.revision,
                                   encoder._trust, dtype=torch.float32,
                                   output_loading_info=True)
    if missing := info.get("missing_keys"):
        raise _no_head(encoder.model_id, f"its checkpoint lacks weights of one "
                                         f"({', '.join(sorted(missing)[:3])})")
    return Scorer(encoder.model_id, head, encoder.placed(lm), encoder.tokenizer,
                  encoder.device, encoder.autocast, encoder.max_tokens)


def score_into(scorer: Scorer, refs: Sequence[str], alts: Sequence[str],
               writer: SplitWriter, where: Sequence[str]) -> int:
    """Write the LLR of each variant the split `writer` still lacks, `BLOCK` variants between
    two writes (a killed run keeps every block written); returns how many it computed."""
    pending = np.asarray(writer.pending(), dtype=np.int64)
    for a in range(0, pending.size, BLOCK):
        rows = pending[a:a + BLOCK]
        values = scorer.llr([refs[i] for i in rows], [alts[i] for i in rows],
                            [where[i] for i in rows])
        writer.write(rows, values[:, None])
    return int(pending.size)
