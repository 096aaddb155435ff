"""The Recommend view (`w`): its answer is `store.analyses.recommend.recommend`'s for the same
question and the command line's (`recommend --json`); the form starts from the main view's
selection, and a regime or a constraint changed by keyboard gives the core's answer to the new
question; a constraint no model satisfies says so; the CSV export holds the answer's rows with
their status and reason; the view opens on every kind of store without a traceback."""

from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stdout

import pytest
from capture import screen_text
from conftest import settle

from engine.cli import main
from geneb_tui.app import GenebApp
from geneb_tui.components.recommend_screen import RecommendScreen
from geneb_tui.core import recommend as core
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot, suite_task_metas
from store.analyses.recommend import Constraints, Question, recommend
from store.domains import IN

SIZE = (120, 40)


async def answered(pilot, rounds: int = 80):
    """The view's answer once its worker has delivered it."""
    for _ in range(rounds):
        screen = pilot.app.screen
        if isinstance(screen, RecommendScreen) and screen.shown is not None and \
                not any(w.group == "recommend" and w.is_running for w in screen.workers):
            return screen.shown
        await settle(pilot, rounds=1)
    raise AssertionError("the Recommend view never answered")


async def opened(pilot):
    await settle(pilot)
    for _ in range(50):
        if pilot.app.snapshot is not None and pilot.app.view is not None:
            break
        await settle(pilot, rounds=1)
    await pilot.press("w")
    return await answered(pilot)


def direct(paths, **ask):
    """`recommend` called directly on the geneb-v1 tasks of a category."""
    category = ask.pop("category")
    snap = StoreSnapshot.load(paths)
    tasks = tuple(t for t in suite_task_metas(snap, Filters()) if t.category == category)
    return recommend(paths, Question(tasks, whole_suite=False, scope=f"category {category}",
                                     **ask))


def cli(*argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["recommend", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


async def test_the_answer_is_recommends_and_the_command_lines(official_store):
    app = GenebApp(official_store, filters=Filters(category="Splice Sites", regime="10shot"))
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        screen = app.screen
        assert screen.query_one("#rec-category").value == "Splice Sites"
        assert screen.query_one("#rec-regime").value == "10shot"
        text = screen_text(app)
    want = direct(official_store, category="Splice Sites", regime="10shot")
    line = cli("--store", str(official_store.root), "--category", "Splice Sites",
               "--regime", "10shot")
    assert [p.model for p in shown.picks] == [p.model for p in want.picks] == \
        [p["model"] for p in line["picks"]]
    assert len(shown.picks) > 1                     # a tie group, not only a leader
    assert shown.picks[0].score == want.picks[0].score == line["picks"][0]["score"]
    assert [x.model for x in shown.excluded] == [x["model"] for x in line["excluded"]]
    assert want.message in text and want.picks[0].model in text
    assert "B is tied with the leader unless the sign-flip test" in text
    assert want.small and want.small.startswith("7 tasks: too few to separate")


async def test_a_regime_and_a_constraint_changed_by_keyboard(official_store):
    app = GenebApp(official_store, filters=Filters(category="Splice Sites"))
    async with app.run_test(size=SIZE) as pilot:
        full = await opened(pilot)
        screen = app.screen
        screen.query_one("#rec-regime").focus()
        await pilot.press("enter", "down", "enter")     # full -> 10shot
        ten = await answered(pilot)
        screen.query_one("#rec-max_params").focus()
        await pilot.press(*"100M", "enter")
        small = await answered(pilot)
        table = screen.query_one("#recommend-picks")
        first = str(table.get_row_at(0)[0])
    assert full.question.regime == "full" and ten.question.regime == "10shot"
    want_ten = direct(official_store, category="Splice Sites", regime="10shot")
    want_small = direct(official_store, category="Splice Sites", regime="10shot",
                        constraints=Constraints(max_params=100_000_000))
    assert [p.model for p in ten.picks] == [p.model for p in want_ten.picks]
    assert [p.model for p in full.picks] != [p.model for p in ten.picks]
    assert [p.model for p in small.picks] == [p.model for p in want_small.picks]
    assert small.picks[0].model != ten.picks[0].model == want_ten.picks[0].model
    assert first == small.picks[0].model
    assert all(x.kind == "worse" or x.kind == "no results" or
               any("parameters" in r or "unknown" in r for r in x.reasons)
               for x in small.excluded)


async def test_a_constraint_no_model_satisfies_says_so(official_store):
    app = GenebApp(official_store, filters=Filters(category="Splice Sites"))
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        app.screen.query_one("#rec-max_params").focus()
        await pilot.press("1", "enter")
        shown = await answered(pilot)
        text = screen_text(app)
    assert not shown.picks
    assert "no model satisfies at most 1 parameters with results on every task" in text


async def test_the_csv_export_is_the_answer(official_store, tmp_path):
    out = tmp_path / "answer.csv"
    app = GenebApp(official_store, filters=Filters(category="Promoters", regime="10shot"))
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        await pilot.press("e")
        await settle(pilot)
        app.screen.query_one("#export-path").value = str(out)
        await pilot.press("enter")
        for _ in range(40):
            if out.exists():
                break
            await settle(pilot, rounds=1)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == (["leader"] + ["tied"] * (len(shown.picks) - 1)
                                           + ["excluded"] * len(shown.excluded))
    assert [r["model"] for r in rows] == [p.model for p in shown.picks] + \
        [x.model for x in shown.excluded]
    assert float(rows[0]["score"]) == shown.picks[0].score          # full precision
    tied = rows[1]
    assert tied["reason"].startswith("not separable at 95 %: sign-flip p = ")
    assert float(tied["p_value"]) == shown.picks[1].p_value > 0.05 / 39
    worse = next(r for r in rows if r["exclusion"] == "worse")
    x = next(x for x in shown.excluded if x.model == worse["model"])
    assert worse["reason"] == "; ".join(x.reasons) and worse["reason"].startswith(
        "differs at 95 %: sign-flip p = ")
    assert float(worse["p_value"]) == x.p_value <= 0.05 / 39
    assert float(worse["p_leader_beats"]) == x.p_leader_beats       # descriptive, kept
    assert {r["regime"] for r in rows} == {"10shot"}
    assert {r["scope"] for r in rows} == {"category Promoters"}


@pytest.mark.parametrize("kind", ["empty", "mini", "official", "one_task"])
async def test_it_opens_on_every_kind_of_store(kind, store_of_kind):
    app = GenebApp(store_of_kind(kind))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(50):
            if app.snapshot is not None:
                break
            await settle(pilot, rounds=1)
        await pilot.press("w")
        if kind != "empty":
            shown = await answered(pilot)
            assert shown.message in screen_text(app).replace("\n", " ") or \
                shown.message[:40] in screen_text(app)
        else:
            await settle(pilot)
            assert not isinstance(app.screen, RecommendScreen)
        await pilot.press("e", "escape", "escape")
        await settle(pilot)
        assert app._exception is None and not app.internal_errors


# -- the form (UI-free) --------------------------------------------------------------------------
def test_the_form_starts_from_the_selection_and_follows_its_changes():
    f = Filters(category="Promoters", regime="1shot", architecture_family="transformer",
                pretraining_data="multi-species", scale_band="custom", params_max=300_000_000,
                domain=IN)
    form = core.seeded(f)
    assert (form.category, form.regime, form.architecture, form.pretraining, form.max_params,
            form.in_domain) == ("Promoters", "1shot", "transformer", "multi-species",
                                300_000_000, True)
    mine = core.Form(**{**form.__dict__, "regime": "full", "memory_gb": 24.0,
                        "max_params": 50_000_000})
    # the regime filter changed: the regime follows; the max params the user set stays
    after = core.followed(mine, f, f.with_(regime="10shot"))
    assert (after.regime, after.max_params, after.memory_gb) == ("10shot", 50_000_000, 24.0)
    # another suite: every seeded field anew (no category), the user's memory kept
    other = core.followed(mine, f, Filters(suite="geneb-mini"))
    assert (other.category, other.regime, other.max_params, other.in_domain,
            other.memory_gb) == (None, "full", None, False, 24.0)


def test_a_label_budget_asks_the_nearest_regime_with_its_warning(official_store):
    snap = StoreSnapshot.load(official_store)
    q = core.question(snap, Filters(), core.Form(category="Splice Sites", labels=5))
    assert q.regime == "10shot" and not q.whole_suite
    assert q.notes == ("5 labels per class lie between 1shot (1 per class) and 10shot (10 per "
                       "class): answering for the nearest, 10shot",)
    assert {t.category for t in q.tasks} == {"Splice Sites"}


@pytest.mark.parametrize(("name", "text", "value"), [
    ("labels", "10", 10), ("max_params", "1.5B", 1_500_000_000), ("memory_gb", "24", 24.0),
    ("memory_gb", "", None)])
def test_the_text_fields(name, text, value):
    assert core.parse_field(name, text) == value


@pytest.mark.parametrize(("name", "text"), [("labels", "0"), ("labels", "ten"),
                                            ("max_params", "lots"), ("memory_gb", "-1"),
                                            ("memory_gb", "nan")])
def test_a_text_field_that_is_not_a_value_is_one_line(name, text):
    with pytest.raises(ValueError, match=repr(text)):
        core.parse_field(name, text)


def test_a_category_the_suite_lacks_is_refused_not_a_bug(official_store):
    from geneb_tui.core.view_cache import recommend_view

    snap = StoreSnapshot.load(official_store)
    got = recommend_view(snap, Filters(), core.Form(category="Nope"))
    assert isinstance(got, core.Refused) and "--category" in got.message


def test_the_lines_after_the_answer_say_why_a_pick_does_not_run_here(official_store):
    a = direct(official_store, category="Chromatin Acc.", regime="1shot", resamples=200)
    assert (a.picks[0].model, a.picks[0].runs_here) == ("JanusDNA_72_w", False)
    lines = core.after_lines(a)
    assert [line for line in lines if "not run here" in line or "cannot be told" in line] \
        == a.not_here                     # the command's lines (tests/engine/test_recommend)


def _cells_below(text: str, header: str, row_start: str) -> str:
    """The text of the column `header` (the last header line holding it) in the table row that
    starts with `row_start`, its wrapped lines joined (the row's next lines are blank before
    the column), without the scrollbar at the right edge."""
    lines = text.splitlines()
    top = max(i for i, line in enumerate(lines) if f" {header}" in line and "Source" in line)
    col = lines[top].index(f" {header}") + 1
    start = next(i for i in range(top + 1, len(lines)) if lines[i].startswith(row_start))
    parts = [lines[start][col:SIZE[0] - 2]]
    for line in lines[start + 1:]:
        if line[:col].strip() or not line[col:].strip():
            break
        parts.append(line[col:SIZE[0] - 2])
    return " ".join(" ".join(parts).split())


async def test_at_120_columns_each_reason_of_the_excluded_is_read_whole(official_store):
    """The Why column is wrapped in the width the other columns leave (it was cut at the
    screen's edge: "worse: P(leader > it) 0.995, le"): Promoters at 10-shot, where the rule
    separates models from the leader, each with its long reason."""
    app = GenebApp(official_store, filters=Filters(category="Promoters", regime="10shot"))
    async with app.run_test(size=SIZE) as pilot:
        shown = await opened(pilot)
        text = screen_text(app)
    first = shown.excluded[0]
    assert first.kind == "worse"
    assert _cells_below(text, "Why", f" {first.model} ") == "; ".join(first.reasons)
    assert len("; ".join(first.reasons)) > 40        # longer than the room it was cut to
