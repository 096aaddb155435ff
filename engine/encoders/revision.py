"""The revision a model computes with, told before anything is loaded: what `fill` plans with
and `status` compares with (`store.cells`: local results of another revision are stale). Each
is the revision the model's encoder records once built:

- an official extractor: the sha256 of its file and arguments
  (`engine.encoders.official_extractor.extractor_revision`);
- a checkpoint folder given by path: the sha256 of its files that define the model
  (`store.current.folder_revision`, the fingerprint of `store.fingerprint`: what every reader
  compares with too);
- a hub model: `engine.encoders.hub.checkpoint_revision`, the revision the entry or
  `--models ID@REV` names (None: none);
- imported embeddings: the import's (`store.embedding_imports`, the entry's `revision`);
- a kind without weights (a k-mer baseline): None;
- a random-initialisation control: the sha256 of the weights it draws, known only once they
  are drawn (`engine.encoders.hf`), so not told here.
"""

from __future__ import annotations

from engine.encoders.hub import checkpoint_revision
from engine.encoders.official_extractor import extractor_revision
from store.catalog import ModelMeta
from store.current import folder_of, folder_revision
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError


def told_revisions(models: list[ModelMeta]) -> dict[str, str | None]:
    """Model id -> the revision a run of it computes with, for the models whose revision is
    told before loading (see the module). Left out: a random-initialisation control, and a
    model whose files are not there or cannot be read (its run says why when it loads
    them)."""
    told = {}
    for m in models:
        if m.random_init is not None:
            continue
        kind = KINDS[m.encoder]
        try:
            if kind.imported:
                told[m.model_id] = m.revision
            elif kind.user_code:
                told[m.model_id] = extractor_revision(m)
            elif (folder := folder_of(m.path, m.encoder, m.random_init)) is not None:
                if (now := folder_revision(folder).revision) is not None:
                    told[m.model_id] = now          # else gone or unreadable: not told
            elif kind.source and m.hub_id:
                told[m.model_id] = checkpoint_revision(m.hub_id, m.revision)
            else:
                told[m.model_id] = None
        except (OSError, GenebError):
            continue
    return told
