"""Encoders turn sequences into fixed-size embeddings, one row per sequence.

Every encoder has `settings` (JSON-able, recorded with the embeddings and part of their
identity), `revision` (the model revision, or None) and `encode_into(sequences, writer)`, which
writes the rows `writer.pending()` names and returns statistics (e.g. `n_truncated`).
`build_encoder` picks the encoder a catalog entry asks for; heavy imports happen only there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from store.catalog import ModelMeta
from store.embeddings import SplitWriter
from store.errors import GenebError


class Encoder(Protocol):
    settings: dict
    revision: str | None

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict: ...


def build_encoder(model: ModelMeta, **options) -> Encoder:
    if model.encoder == "kmer":
        from engine.encoders.kmer import KmerEncoder

        if model.encoder_k is None:
            raise GenebError(f"model {model.model_id}: a k-mer baseline needs 'encoder_k'")
        return KmerEncoder(model.encoder_k)
    if model.encoder == "external":
        raise GenebError(
            f"model {model.model_id}: its weights are not published on the Hugging Face hub "
            f"({model.notes or 'see the GENEB README'}); add a registry entry with 'path' "
            "pointing at a local checkpoint to run it")
    raise GenebError(f"model {model.model_id}: unknown encoder {model.encoder!r}")
