"""The encoder of a model whose embeddings were imported (`geneb-engine import-embeddings`):
it embeds nothing. Its revision is the import's (`store.embedding_imports.revision_of`, the
entry's `revision` in the store's model catalog), so `fill` reuses the splits that import
stored and probes them; `engine.embedding_import.check_imported` refuses, before the store
changes, a run that needs a split the import did not store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

KIND = "imported"
SETTINGS = {"encoder": KIND}


def build(model: ModelMeta, options=None) -> ImportedEncoder:
    return ImportedEncoder(model.model_id, model.revision)


@dataclass(frozen=True)
class ImportedEncoder:
    model_id: str
    revision: str | None
    precision = None            # made elsewhere: no compute precision here (`store.vocab.variant`)

    @property
    def settings(self) -> dict:
        return dict(SETTINGS)

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        """Reached only when an imported split went missing or was damaged after `fill`
        checked it: the split cannot be computed here."""
        raise GenebError(f"model {self.model_id}: its embeddings are imported and "
                         f"{writer.final.parent.name}/{writer.final.name} no longer verifies "
                         f"in the store; import them again (`geneb-engine import-embeddings "
                         f"{self.model_id} DIR`)")
