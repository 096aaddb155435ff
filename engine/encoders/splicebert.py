"""The SpliceBERT adapter: a BERT checkpoint fed single-nucleotide ids, the mean over windows.

Recipe (the self-reported SpliceBERT 1024nt submission's, `harness/extractors/splicebert.py` of
the official GENEB repository; see the recipe table, `store/catalogs/recipes.toml`):

- each sequence is read upper case with U as T (`store.vocab.encoder_kinds`' rule of this kind)
  and becomes one id per letter from the checkpoint's vocabulary: A, C, G, T their own, every
  other letter N (the official extractor maps the IUPAC codes to N and refuses other letters);
  the checkpoint's tokenizer is read for its vocabulary only: it needs spaces between letters;
- a sequence of at most `window` letters (the config's `max_position_embeddings`, or the
  entry's `max_tokens` when smaller, less [CLS] and [SEP]: 1,024 for SpliceBERT.1024nt) is one
  window; a longer one is cut into windows of
  `window` letters every `window // 2` letters, the last window ending at the sequence's end;
- every window is `[CLS] ids [SEP]`, right-padded and masked in a batch; its embedding is the
  masked mean of the last hidden layer, [CLS] and [SEP] included, and a sequence's embedding
  the mean of its windows', each weighing the same;
- nothing is cut, so nothing is counted as truncated; a batch holds at most `batch_size`
  sequences and `max_batch_tokens` padded letters (their windows overlap, so a long sequence
  costs up to twice its length). Loading, the device, sdpa attention on CUDA and streaming are
  the generic encoder's (`engine.encoders.hf.HFEncoder`); on CUDA the forward runs bfloat16
  autocast where the card supports it, else float32, as the official extractor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from engine.encoders.context import window_starts
from engine.encoders.hf import HFEncoder, build_hf
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

LETTERS = "ACGT"             # their own ids; every other letter is N's
SPECIALS = 2                 # [CLS] and [SEP] around every window


def build(model: ModelMeta, options: EncoderOptions) -> SpliceBERTEncoder:
    """The encoder of a catalog entry that passed `preflight`."""
    return build_hf(SpliceBERTEncoder, model, options)


class SpliceBERTEncoder(HFEncoder):
    """Embeds sequences with a SpliceBERT checkpoint (a local folder, or a hub id)."""

    kind = "splicebert"
    default_batch_size = 64

    def __init__(self, source: str, *, max_tokens: int | None = None, **common):
        super().__init__(source, **{**common, "padding_side": "right"})
        if self.autocast_dtype == torch.float16:      # no bfloat16 on this card: float32
            self.autocast_dtype = None
        vocab = self.tokenizer.get_vocab()
        missing = [t for t in ("N", *LETTERS) if t not in vocab]
        if missing or self.tokenizer.cls_token_id is None or self.tokenizer.sep_token_id is None:
            raise GenebError(f"model {self.model_id}: {source} is not a SpliceBERT checkpoint: "
                             "its vocabulary lacks "
                             f"{', '.join(missing) or '[CLS] or [SEP]'}")
        self.ids = np.full(128, vocab["N"], dtype=np.int64)       # by ASCII code
        for letter in LETTERS:
            self.ids[ord(letter)] = vocab[letter]
        self.cls_id, self.sep_id = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        positions = int(self.model.config.max_position_embeddings)
        self.window = min(max_tokens or positions, positions) - SPECIALS
        if self.window < 2:
            raise GenebError(f"model {self.model_id}: max_tokens = {max_tokens} leaves no room "
                             "for a window between [CLS] and [SEP]")

    def _takes_key_mask(self) -> bool:
        return False          # windows are collated here, with their own 2D mask

    # ---- identity ------------------------------------------------------------------------

    def recipe(self) -> dict:
        return {"window": self.window, "stride": self.window // 2, "letters": "ACGT, else N",
                "dtype": self.precision, "layer": "last"}

    # ---- encoding ------------------------------------------------------------------------

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """One id per letter (a letter beyond ASCII is N's); nothing is cut."""
        ids = [self.ids[np.minimum(np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32), 127)]
               for s in sequences]
        return ids, np.zeros(len(ids), dtype=bool)

    def collate(self, items: list[np.ndarray]) -> dict[str, torch.Tensor]:
        """Every item's windows, `[CLS] ids [SEP]` right-padded and masked, the item each
        belongs to, and the number of items."""
        windows, owner = [], []
        for row, ids in enumerate(items):
            for start in window_starts(len(ids), self.window, self.window // 2):
                windows.append(ids[start:start + self.window])
                owner.append(row)
        width = max(map(len, windows)) + SPECIALS
        input_ids = torch.full((len(windows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(windows), width), dtype=torch.long)
        for r, ids in enumerate(windows):
            n = len(ids) + SPECIALS
            input_ids[r, :n] = torch.as_tensor([self.cls_id, *ids.tolist(), self.sep_id])
            mask[r, :n] = 1
        return {"input_ids": input_ids, "attention_mask": mask,
                "owner": torch.as_tensor(owner, dtype=torch.long), "rows": len(items)}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled float32 embeddings (n × d) of one collated batch: the windows' masked means,
        averaged per sequence."""
        mask = batch["attention_mask"].to(self.device, non_blocking=True)
        owner = batch["owner"].to(self.device, non_blocking=True)
        with self.autocast():
            out = self.model(input_ids=batch["input_ids"].to(self.device, non_blocking=True),
                             attention_mask=mask)
        hidden = out.last_hidden_state.float()
        keep = mask.unsqueeze(-1).float()
        windows = (hidden * keep).sum(dim=1) / keep.sum(dim=1)
        n = batch["rows"]          # from the host: no read of the device
        sums = torch.zeros((n, windows.shape[1]), device=windows.device).index_add_(
            0, owner, windows)
        counts = torch.zeros(n, device=windows.device).index_add_(
            0, owner, torch.ones_like(owner, dtype=torch.float))
        return sums / counts.unsqueeze(1)
