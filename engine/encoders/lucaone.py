"""The LucaOne adapter: the `lucaone` package's model and tokenizer, mean of the last layer.

Recipe (the official GENEB extractor, `embedding_pipeline/extractors/lucaone.py`):

- each sequence is tokenized alone (the package's tokenizer takes no list) as a nucleotide
  sequence (`seq_type = "gene"`: A, C, G, T/U in either case become their tokens, every other
  letter the N token), with [CLS] before and [SEP] after it, the text as the task file holds it;
- it is cut to `max_tokens` tokens, special tokens counted (the config's
  `max_position_embeddings` unless the registry entry says otherwise; the tokenizer keeps
  [CLS] and the first bases and ends the cut sequence with [SEP]; cuts are counted);
- the model runs on the token ids and the attention mask only (no token type ids: the model's
  default, 0, is the nucleotide type), and the last hidden layer (after the final layer norm)
  is averaged over every token the mask keeps, [CLS] and [SEP] included (`pooling = "mean"`);
- batches of length-sorted sequences are padded on the right with [PAD] and masked (the model
  masks padded keys, so a sequence embeds the same alone and inside a batch); the device,
  autocast, out-of-memory back-off (halving the tokens a batch may hold) and streaming into
  the split writer are `StreamingEncoder`'s (engine/encoders/streaming.py).

The official extractor loaded the hub checkpoint with its own code (`trust_remote_code`); here
the package's classes load it (`LucaGPLMModel.from_pretrained`, from a local directory, a cached
snapshot or the hub: `engine.encoders.hub.checkpoint`), so no code from the checkpoint runs,
and the tokenizer is the package's, with its built-in nucleotide-and-protein vocabulary (what
its own `from_pretrained` builds for any checkpoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from lucaone import LucaGPLMModel, LucaGPLMTokenizer

from engine.encoders.hub import checkpoint
from engine.encoders.streaming import StreamingEncoder
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

SEQ_TYPE = "gene"           # the tokenizer's nucleotide mode (the official extractor's)
VOCABULARY = "gene_prot"    # the tokenizer's built-in vocabulary (what its from_pretrained builds)


def build(model: ModelMeta, options: EncoderOptions) -> LucaOneEncoder:
    """The encoder of a catalog entry that passed `preflight`."""
    return LucaOneEncoder.for_model(model, options, max_tokens=model.max_tokens)


class LucaOneEncoder(StreamingEncoder):
    """Embeds sequences with a LucaOne checkpoint (a hub id or a local directory)."""

    kind = "lucaone"
    default_batch_size = 8
    exact_length = False        # padded and masked: alone or in a batch, the same embedding

    def __init__(self, source: str, *, max_tokens: int | None = None, **common):
        super().__init__(source, **common)
        self.tokenizer = LucaGPLMTokenizer(vocab_type=VOCABULARY)
        model = self._load()
        config = model.config
        if int(config.vocab_size) != self.tokenizer.vocab_size:
            raise GenebError(
                f"model {self.model_id}: the checkpoint's vocabulary has {config.vocab_size} "
                f"tokens, the lucaone tokenizer's {self.tokenizer.vocab_size}; it is not a "
                "LucaOne nucleotide-and-protein checkpoint")
        self.model = self.placed(model.float())
        self.max_tokens = int(max_tokens or config.max_position_embeddings)
        self.pad_id = int(self.tokenizer.pad_token_id)

    # ---- loading -------------------------------------------------------------------------

    def _load(self) -> LucaGPLMModel:
        """The package's model from a local folder (a directory, a cached snapshot: see
        `engine.encoders.hub.checkpoint`) or the hub; never the checkpoint's own code."""
        folder = checkpoint(self.model_id, self.source, self.revision)     # None: the hub
        at = {"revision": self.revision} if folder is None else {}
        try:
            model, info = LucaGPLMModel.from_pretrained(
                str(folder or self.source), output_loading_info=True, **at)
        except (OSError, ValueError) as exc:
            where = ("the Hugging Face hub" if folder is None else "the local directory"
                     if Path(self.source).expanduser() == folder
                     else f"the Hugging Face cache ({folder})")
            raise GenebError(f"model {self.model_id}: cannot load the LucaOne checkpoint "
                             f"{self.source} from {where}: "
                             f"{(str(exc).splitlines() or [type(exc).__name__])[0]}") from None
        if info["missing_keys"]:
            raise GenebError(f"model {self.model_id}: the checkpoint lacks weights the model "
                             f"needs ({', '.join(sorted(info['missing_keys'])[:5])})")
        return model

    # ---- identity ------------------------------------------------------------------------

    def recipe(self) -> dict:
        return {"max_tokens": self.max_tokens, "seq_type": SEQ_TYPE, "special_tokens": True,
                "layer": "last", "dtype": self.precision}

    # ---- encoding ------------------------------------------------------------------------

    def _ids(self, sequence: str, cut: bool) -> list[int]:
        return self.tokenizer.encode(sequence, seq_type=SEQ_TYPE, add_special_tokens=True,
                                     truncation=cut, max_length=self.max_tokens if cut else None)

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids per sequence (cut to `max_tokens`) and a truncated flag per sequence."""
        ids = [self._ids(s, cut=False) for s in sequences]
        truncated = np.array([len(x) > self.max_tokens for x in ids], dtype=bool)
        for i in np.flatnonzero(truncated):
            ids[i] = self._ids(sequences[i], cut=True)
        return ids, truncated

    def collate(self, ids: list[list[int]]) -> dict[str, torch.Tensor]:
        """Right-padded token ids and their attention mask."""
        width = max(len(x) for x in ids)
        input_ids = torch.full((len(ids), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for r, x in enumerate(ids):
            input_ids[r, :len(x)] = torch.as_tensor(x)
            mask[r, :len(x)] = 1
        return {"input_ids": input_ids, "attention_mask": mask}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled float32 embeddings (n × d): the masked mean of the last hidden layer."""
        mask = batch["attention_mask"].to(self.device, non_blocking=True)
        with self.autocast():
            out = self.model(input_ids=batch["input_ids"].to(self.device, non_blocking=True),
                             attention_mask=mask, return_dict=True)
        hidden = out.last_hidden_state.float()
        keep = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
