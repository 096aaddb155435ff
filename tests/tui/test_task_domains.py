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
    at = tasks.header.index("Kingdom")
    kingdoms = dict(zip(tasks.row_keys, (r[at] for r in tasks.rows), strict=True))
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


# GROVER and MutBERT (small_store) are human-only (store/catalogs/models.toml); of geneb-v1's
# eight Enhancers tasks (store/catalogs/task_domains.csv) six are human, one Drosophila and
# one mouse: for both models 6 in, 2 out.
ENHANCERS_OUT = {"katarinagresova_Genomic_Benchmarks_drosophila_enhancers_stark",
                 "katarinagresova_Genomic_Benchmarks_dummy_mouse_enhancers_ensembl"}


def _task_cells(view) -> dict[tuple[str, str], float | None]:
    return {(r.model, c.key.removeprefix("task:")): r.values[c.key]
            for r in view.rows for c in view.score_columns if c.key.startswith("task:")}


def test_the_domain_filter_blanks_the_cells_of_other_pairs(small_store):
    from geneb_tui.core.query import build_view

    snap = StoreSnapshot.load(small_store)
    every = build_view(snap, Filters(category="Enhancers"))
    cells = _task_cells(every)
    assert len(cells) == 16 and None not in cells.values()
    assert {t for _, t in cells} >= ENHANCERS_OUT
    inside = build_view(snap, Filters(category="Enhancers", domain="in"))
    kept = {k for k, v in _task_cells(inside).items() if v is not None}
    assert kept == {k for k in cells if k[1] not in ENHANCERS_OUT}          # 2 x 6
    assert [r.values["cat:Enhancers"] for r in inside.rows] == [None, None]  # a task missing
    outside = build_view(snap, Filters(category="Enhancers", domain="out"))
    assert {k for k, v in _task_cells(outside).items() if v is not None} == {
        k for k in cells if k[1] in ENHANCERS_OUT}                          # 2 x 2
    assert "in-domain cells only (other cells blank)" in inside.filters.describe()


def test_each_task_cell_carries_its_pairs_domain(small_store):
    from geneb_tui.core.query import build_view

    view = build_view(StoreSnapshot.load(small_store), Filters(category="Enhancers"))
    row = view.rows[0]
    for col in view.score_columns:
        text = view.cell_text(row, col)
        if not col.key.startswith("task:"):
            assert not text.endswith(("in", "out", "?"))                # an aggregate: none
        elif col.key.removeprefix("task:") in ENHANCERS_OUT:
            assert text.endswith(" out") and row.domains[col.key] == "out"
        else:
            assert text.endswith(" in") and row.domains[col.key] == "in"


async def test_the_filter_dialog_sets_the_domain(small_store, make_app):
    from conftest import apply_filters, settle

    app = make_app(small_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await apply_filters(pilot, category="Enhancers", domain="out")
        assert app.view.filters.domain == "out"
        bar = str(app.query_one("#filter-bar").render())
        assert "out-of-domain cells only (other cells blank)" in bar
        assert {k for k, v in _task_cells(app.view).items() if v is not None} == {
            (m, t) for m in ("GROVER", "MutBERT") for t in ENHANCERS_OUT}


def test_the_task_views_show_the_recorded_profile(small_store):
    from store.catalog import TaskProfile, geneb_v1_tasks
    from store.tables.catalogs import register_tasks

    [h3] = [t for t in geneb_v1_tasks() if t.task_id == H3]
    register_tasks(small_store, [h3], profiles={H3: TaskProfile(
        n_train=1000, n_test=250, n_classes=2, min_class_share=0.375, length_min=480,
        length_median=500.0, length_max=512)})
    snap = StoreSnapshot.load(small_store)
    filters = Filters()
    tasks = compare.tasks(snap, filters, CompareOptions.for_filters(filters))
    assert tasks.header[-4:] == ["Train/test", "Classes", "Min class", "Length"]
    rows = dict(zip(tasks.row_keys, tasks.rows, strict=True))
    assert rows[H3][-4:] == ["1000/250", "2", "38%", "480-500-512"]   # as `tasks` shows it
    other = next(k for k in rows if k != H3)
    assert rows[other][-4:] == ["?", "?", "?", "?"]                    # never recorded
    note = compare.task_values(snap, filters, H3).note
    assert ("train/test 1000/250, classes 2, min class 38%, length 480-500-512" in note)
