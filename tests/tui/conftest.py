"""Fixtures and helpers of the dashboard tests: stores built with the real import, a settled
pilot, filters set through the filter dialog."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixture_store import SUBMISSIONS, build_official_store  # noqa: E402
from waiting import opened, settle  # noqa: E402, F401  (the tests import them from here)

import geneb_tui.app as app_module  # noqa: E402
from geneb_tui.app import GenebApp  # noqa: E402
from geneb_tui.components.filter_screen import FilterScreen  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.tables.results import append_rows  # noqa: E402
from store.vocab.protocol import REGIMES, SEEDS  # noqa: E402
from tests.store.local_rows import local_rows  # noqa: E402


@pytest.fixture(autouse=True)
def first_view_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty first-view cache folder (`geneb_tui.core.first_view`):
    no test reads or writes the user's cache, and each starts from a miss."""
    folder = tmp_path_factory.mktemp("first-view-cache")
    monkeypatch.setenv("GENEB_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_pause_work(request, monkeypatch):
    """The work the dashboard does in a pause on the table (IDLE_S after the last input: the
    tables one key away and the views' content precomputed, the kept screens prepared off
    screen, a garbage collection) waits an hour in every test but those marked `idle`: a
    test that waits for the workers would otherwise wait for all of it, whatever it tests
    (about a tenth of the dashboard tests' CPU: 440 -> 399 s for tests/tui under -n 2). The
    tests of that work (`test_view_cache`, `test_table_updates`, `test_idle_gc`) set IDLE_S
    themselves; the monkey's random keys meet it as users do (`idle`), and a snapshot is taken
    of the screen without it."""
    if request.node.get_closest_marker("idle") is None:
        monkeypatch.setattr(app_module, "IDLE_S", 3600.0)


@pytest.fixture(scope="session")
def official_store(tmp_path_factory):
    """The 40 official submissions, imported once (tests only read it)."""
    return build_official_store(tmp_path_factory.mktemp("official"))


@pytest.fixture
def small_store(tmp_path):
    """Two official models: a non-empty store that tests may write to."""
    files = [SUBMISSIONS / "GROVER.json", SUBMISSIONS / "MutBERT.json"]
    return build_official_store(tmp_path / "store", files)


def two_seeds(regime: str, task: str) -> tuple[int, ...]:
    """`local_rows(seeds_of=...)` of a partial run: seeds 13 and 17 only (a done cell has five)."""
    return SEEDS[:2]


@pytest.fixture
def mixed_store(tmp_path):
    """Two official models and a partial local run of kmer-3 (three geneb-v1 tasks)."""
    files = [SUBMISSIONS / "GROVER.json", SUBMISSIONS / "MutBERT.json"]
    paths = build_official_store(tmp_path / "store", files)
    from store.catalog import geneb_v1_tasks

    tasks = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"][:3]
    append_rows(paths, local_rows("kmer-3", tasks, ("full",), value=0.5, seeds_of=two_seeds))
    return paths


def painted(table, stock: bool, *, raw: bool = False) -> list[list[tuple[str, str, dict | None]]]:
    """Every line of a `PaintedTable` as (character, style, mouse metadata) cells (a wide
    character's second cell: ""), painted from empty caches, by the table or (stock) by
    Textual's DataTable's own rendering, with the column cut at the window's left edge shown
    without its text as the table shows it (`cut_at_left`; `raw`: as DataTable shows it)."""
    from rich.cells import cell_len
    from textual.widgets import DataTable

    def lines():
        table._clear_caches()
        table._window = None
        out = []
        for y in range(table.size.height):
            line = []
            for seg in table.render_line(y):
                style, meta = str(seg.style), seg.style.meta if seg.style else None
                for ch in seg.text:
                    line += [(ch, style, meta)] + [("", style, meta)] * (cell_len(ch) - 1)
            out.append(line)
        return out

    if not stock:
        return lines()
    table._render_line = lambda *a: DataTable._render_line(table, *a)
    table._render_cell = lambda *a, **k: DataTable._render_cell(table, *a, **k)
    try:
        out = lines()
    finally:
        del table._render_line, table._render_cell
        table._clear_caches()
        table._window = None
    if raw:
        return out
    cut = cut_at_left(table)
    return [[(" ", style, meta) if x in cut else (ch, style, meta)
             for x, (ch, style, meta) in enumerate(line)] for line in out]


def cut_at_left(table) -> range:
    """The cells of a painted line that the scrollable column cut at the window's left edge
    covers (the table scrolled right by part of it); empty when no column is cut."""
    widths = [c.get_render_width(table) for c in table.ordered_columns]
    fixed, left = sum(widths[:table.fixed_columns]), table.scroll_offset.x
    start = 0
    for i, width in enumerate(widths):
        if i >= table.fixed_columns and start < left + fixed < start + width:
            return range(fixed, min(start + width - left, table.size.width))
        start += width
    return range(0)


async def apply_filters(pilot, **values) -> None:
    """Open the filter dialog (f), set its widgets by id, apply (Ctrl+S)."""
    await pilot.press("f")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, FilterScreen)
    for id_, value in values.items():
        screen.query_one(f"#{id_}").value = value
    await pilot.pause()
    await pilot.press("ctrl+s")
    await settle(pilot)


@pytest.fixture
def make_app():
    def make(paths, **kwargs) -> GenebApp:
        return GenebApp(paths, **kwargs)

    return make


# -- every kind of store the dashboard must work on (built once per session) -------------------
STORE_KINDS: tuple[str, ...] = ("empty", "mini", "official", "mixed", "one_model", "one_task",
                                 "task_kinds")


def _mini_tasks():
    from engine import mini  # tests may import the engine; the dashboard never does

    return list(mini.TASKS)


def _with_mini_rows(paths: StorePaths) -> StorePaths:
    """geneb-mini's tasks and the 3-, 4- and 6-mer spectra's rows on them (full, two seeds,
    0.3 / 0.4 / 0.5) written into the store."""
    from store.tables.catalogs import register_tasks

    tasks = _mini_tasks()
    register_tasks(paths, tasks)
    for i, m in enumerate(("kmer-3", "kmer-4", "kmer-6")):
        append_rows(paths, local_rows(m, [t.task_id for t in tasks], ("full",),
                                      value=0.3 + i / 10, seeds_of=two_seeds))
    return paths


def build_store_kind(kind: str, root: Path, official: StorePaths | None = None) -> StorePaths:
    """One store of each kind: empty; geneb-mini local results only; the 40 official
    submissions; official + local (geneb-v1 partial and geneb-mini); one official model only;
    one task only (a local model with one geneb-v1 task in every regime); task kinds
    (geneb-kinds' regression and variant results, filled, beside geneb-mini's)."""
    from store.catalog import geneb_v1_tasks
    from store.paths import resolve_store
    from store.tables.catalogs import register_tasks

    if kind == "official":
        return official or build_official_store(root / "official")
    if kind == "empty":
        (root / "empty").mkdir(parents=True, exist_ok=True)
        return resolve_store(root / "empty")
    if kind == "one_model":
        return build_official_store(root / "one_model", [SUBMISSIONS / "GROVER.json"])
    if kind == "mini":
        return _with_mini_rows(resolve_store(root / "mini"))
    if kind == "task_kinds":    # the `k` key's kinds: geneb-kinds filled, geneb-mini beside it
        from engine.cli import main

        paths = resolve_store(root / "task_kinds")
        assert main(["fill", "--store", str(paths.root), "--suite", "geneb-kinds", "--models",
                     "kmer-3", "kmer-6", "--regimes", "full"]) == 0
        return _with_mini_rows(paths)
    if kind == "mixed":
        paths = build_official_store(root / "mixed",
                                     [SUBMISSIONS / "GROVER.json", SUBMISSIONS / "MutBERT.json"])
        promoters = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"][:3]
        append_rows(paths, local_rows("kmer-3", promoters, ("full",), value=0.5,
                                      seeds_of=two_seeds))
        tasks = _mini_tasks()
        register_tasks(paths, tasks)
        append_rows(paths, local_rows("kmer-4", [t.task_id for t in tasks], ("full",),
                                      value=0.5, seeds_of=two_seeds))
        return paths
    if kind == "one_task":
        paths = resolve_store(root / "one_task")
        task = geneb_v1_tasks()[0].task_id
        for regime in REGIMES:
            append_rows(paths, local_rows("kmer-4", [task], (regime,), value=0.5,
                                          seeds_of=two_seeds))
        return paths
    raise ValueError(kind)


@pytest.fixture(scope="session")
def store_of_kind(tmp_path_factory, official_store):
    """`store_of_kind(kind)`: the store of that kind, built on first use (tests only read)."""
    built: dict[str, StorePaths] = {}
    root = tmp_path_factory.mktemp("kinds")

    def get(kind: str) -> StorePaths:
        if kind not in built:
            built[kind] = build_store_kind(kind, root, official_store)
        return built[kind]

    return get


@pytest.fixture(scope="session")
def kinds_stores(tmp_path_factory):
    """{"kinds": geneb-kinds alone, "both": the same with geneb-mini's classification rows
    beside it} (one fill, about 10 s; tests only read them)."""
    from engine.cli import main
    from store.paths import resolve_store

    root = tmp_path_factory.mktemp("tui-kinds")
    assert main(["fill", "--store", str(root / "kinds"), "--suite", "geneb-kinds",
                 "--models", "kmer-3", "kmer-6"]) == 0
    shutil.copytree(root / "kinds", root / "mini")
    build_store_kind("mini", root)   # geneb-mini's tasks and rows into the copy
    return {"kinds": resolve_store(root / "kinds"), "both": resolve_store(root / "mini")}


@pytest.fixture(scope="session")
def context_store(tmp_path_factory):
    """A context sweep (issue 45): kmer-3 and kmer-4 at their own limit and cropped to 10 and
    20 nucleotides (`fill --context-lengths 10 20`) on three short tasks, two Promoters and a
    Splice Sites one (full regime only; the store of tests/engine/test_context_figures.py with a
    second category). Tests only read it."""
    from engine.cli import main
    from store.paths import resolve_store
    from tests.engine.conftest import write_task

    root = tmp_path_factory.mktemp("tui-context")
    suite = root / "context-suite"
    suite.mkdir()
    categories = ("Promoters", "Promoters", "Splice Sites")
    for i in range(len(categories)):
        write_task(suite / f"task_{i}.csv", 30, 12, 2, i, length=40)
    (suite / "manifest.csv").write_text("task_id,category\n" + "".join(
        f"task_{i},{c}\n" for i, c in enumerate(categories)))
    fill = ["fill", "--store", str(root / "store"), "--suite", str(suite), "--models",
            "kmer-3", "kmer-4", "--regimes", "full", "--json"]
    assert main(fill) == 0
    assert main([*fill, "--context-lengths", "10", "20"]) == 0
    return resolve_store(root / "store")
