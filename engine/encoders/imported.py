"""The encoder of a model whose embeddings were imported (`geneb-engine import-embeddings`):
it embeds nothing. Its revision is the import's (`store.embedding_imports.revision_of`, the
entry's `revision` in the store's model catalog), so `fill` reuses the splits that import
stored and probes them; `engine.embedding_import.check_imported` refuses, before the store
changes, a run that needs a split the import did not store, and `not_stored` a run that meets
one that no longer verifies (`engine.pairs.embed_pair`), before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from store.catalog import ModelMeta
    from store.embeddings import SplitCheck

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


def not_stored(model_id: str, path: Path, check: SplitCheck) -> GenebError:
    """The refusal of a run that needs the imported split at `path`, which no longer verifies
    (`check`: what `store.embeddings.EmbeddingStore.inspect` found): it cannot be computed
    here."""
    why = (check.reason if check.state != "complete" else
           "it holds other embeddings than the import the run planned with")
    return GenebError(f"model {model_id}: its embeddings are imported and "
                      f"{path.parent.name}/{path.name} does not verify in the store ({why}); "
                      f"import them again (`geneb-engine import-embeddings {model_id} DIR`)")
