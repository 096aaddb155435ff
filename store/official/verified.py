"""The Verified tier of the official leaderboard ("recomputed from submitted embeddings"): when
a model's results may be published with provenance `verified`.

They may when they are local results recomputed by this engine from the embeddings
`geneb-engine import-embeddings` imported for the model with the submission they came with
(`import-embeddings --submission FILE`, `store.embedding_imports`), every result row of the
model computed from that import (its revision), and the recomputed cells reproduce the
submission (`store.compare_cells.Comparison.reproduced`, at the default tolerance). An imported
verified submission (source `verified`) is given back as it is.
"""

from __future__ import annotations

from store.compare_cells import compare_cells, store_cells, submission_cells
from store.db import Snapshot
from store.embedding_imports import read_import, submission_copy, submission_problem
from store.official.formats import Submission, read_official_file
from store.vocab.protocol import GENEB_V1
from store.vocab.sources import LOCAL

VERIFIED = "verified"


def verified_problem(snap: Snapshot, model_id: str, source: str) -> str | None:
    """Why `model_id`'s `source` results in `snap` may not be published as verified (one
    line); None when they may (see the module)."""
    if source == VERIFIED:
        return None
    how = (f"`geneb-engine import-embeddings {model_id} DIR --submission FILE`, then "
           f"`geneb-engine fill --models {model_id}`")
    if source != LOCAL:
        return (f"its {source} results are imported, not recomputed here from submitted "
                f"embeddings ({how})")
    paths = snap.paths
    record = read_import(paths, model_id)
    if record is None:
        return (f"{model_id} has no imported embeddings; verified results are recomputed from "
                f"submitted embeddings ({how})")
    if record.submission is None:
        return (f"the embeddings of {model_id} were imported without the submission they came "
                f"with; import them again with --submission FILE")
    if problem := submission_problem(paths, record):
        return f"{problem}; import the embeddings again with --submission FILE"
    revisions = snap.query(
        "SELECT model_revision, count(*) AS n FROM results WHERE model = ? AND source = ? "
        "AND protocol_hash = ? GROUP BY ALL", [model_id, LOCAL, GENEB_V1.hash])
    other = revisions.filter(revisions["model_revision"].ne_missing(record.revision))
    if other.height:
        return (f"{other['n'].sum()} result rows of {model_id} were computed from other "
                f"embeddings than its import of {record.imported_at} (revision "
                f"{record.revision[:12]}); recompute them (`geneb-engine fill --models "
                f"{model_id}`)")
    doc, problems = read_official_file(submission_copy(paths, model_id))
    if not isinstance(doc, Submission):
        why = problems[0] if problems else "not a submission"
        return (f"the submission kept with its embeddings cannot be read ({why}); import them "
                "again with --submission FILE")
    cells = store_cells(snap, GENEB_V1.hash, LOCAL)
    result = compare_cells(cells.filter(cells["model"] == model_id), submission_cells([doc]))
    why = result.reproduced("b").get(model_id, "none of its cells recomputed")
    if why:
        return (f"the local results of {model_id} do not reproduce the submission "
                f"{record.submission.file} it came with: {why}; `geneb-engine compare local "
                f"{submission_copy(paths, model_id)}` lists the cells")
    return None
