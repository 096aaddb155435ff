"""The dashboard's task views show each task's kingdom and each model's domain on it (the
in-domain rule of `store.domains`, as `export --csv` writes it)."""

from __future__ import annotations

from geneb_tui.core import compare
from geneb_tui.core.compare import CompareOptions
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot

H3 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"


def test_the_task_views_show_kingdom_and_domain(official_store):
    snap = StoreSnapshot.load(official_store)
    filters = Filters()
    tasks = compare.tasks(snap, filters, CompareOptions.for_filters(filters))
    assert tasks.header[-1] == "Kingdom"
    kingdoms = dict(zip(tasks.row_keys, (r[-1] for r in tasks.rows), strict=True))
    assert kingdoms[H3] == "fungi"
    assert kingdoms["InstaDeepAI_plant-genomic-benchmark_lncrna.z_mays"] == "plants"
    one = compare.task_values(snap, filters, H3)
    assert one.header[-1] == "Domain"
    display = {snap.model_meta(m).get("display") or m: m for m in snap.catalog}
    domains = {display[r[0]]: r[-1] for r in one.rows}
    assert domains["hyenadna-large-1m-seqlen-hf"] == "out"              # human-only, yeast
    assert domains["nucleotide-transformer-v2-50m-multi-species"] == "in"
    assert domains["dnabert2-no-flashattention"] == "unknown"
    assert "Saccharomyces cerevisiae, fungi" in one.note
