"""`geneb-engine report`'s text: one function per section, each printing its table or line from
the frames of the analysis layer (`store.analyses.compute.compute`, what `report --json`
prints), in the order of `SECTIONS`; `--domain`'s report (`render_domain`) and the task-health
section (`render_health`). Nothing is computed here but what a cell shows.

Left-justified columns are names (one line, never cut); right-justified ones are numbers. A
table wider than the console is split into blocks of columns (`engine.commands.layout`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from engine.commands.common import DOMAIN_WORDS
from engine.commands.layout import Col, FitTable
from store.analyses.aggregates import category_columns
from store.analyses.claims import MIN_IN_DOMAIN
from store.analyses.compute import DOMAIN_SKIPPED
from store.analyses.differ import claim_text, threshold_text, too_few
from store.analyses.difficulty import EASY, HARD, HIGH_VAR
from store.analyses.presets import LEVEL, MIN_TASKS, TOO_FEW_TASKS
from store.analyses.uncertainty import interval_text
from store.tables.predictions import NO_PREDICTIONS
from store.vocab.bootstrap import ONE_TASK_NOTE
from store.vocab.protocol import FEW_SHOT_REGIMES, GENEB_V1, REGIMES, VARIANT_COSINE_V1
from store.vocab.pvalues import p_text


def _f(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _n(value: int | None) -> str:
    """A count or a rank; "—" only for none (a Borda count of 0 is 0)."""
    return "—" if value is None else str(value)


def _signed(value: int | None) -> str:
    if value is None:
        return "—"
    return f"[green]+{value}[/]" if value > 0 else f"[red]{value}[/]" if value < 0 else "0"


def _key(row: dict) -> tuple[str, str | None]:
    return row["model"], row.get("source")


def _table(title: str, columns: list[tuple[str, str]], *, keys: int = 1,
           empty: str = "no entry has these values",
           groups: list[str | None] | None = None) -> FitTable:
    """Left-justified columns are names (one line, never cut); right-justified ones are
    numbers, their headers broken into one word per line. The first `keys` columns identify a
    row: a table wider than the console is split into blocks of columns, each repeating them
    (`engine.commands.layout`; columns of one of `groups` stay in one block). `empty`: why
    the table can have no row."""
    groups = groups or [None] * len(columns)
    return FitTable(title, [Col(name if justify == "left" else name.replace(" ", "\n"),
                                justify=justify, key=n < keys, group=group)
                            for n, ((name, justify), group) in enumerate(zip(columns, groups,
                                                                             strict=True))],
                    compact=True, split=True, empty=empty, title_justify="left")


def _defined(frame: pl.DataFrame) -> list[dict]:
    """The rows of a frame of Spearman rho, none when rho is undefined in every row."""
    return frame.to_dicts() if frame["rho"].drop_nulls().len() else []


def _too_few(frame: pl.DataFrame, what: str) -> str:
    most = frame["n"].max() if frame.height else 0
    return f"rho needs at least 3 entries {what}, not all equal (here at most {most or 0})"


def _rule_cells(row: dict | None) -> list[str]:
    """The p and differs cells of a pair's row (the one rule's columns); dashes without one."""
    if row is None or row.get("p_value") is None:
        return ["—", "—"]
    return [p_text(row["p_value"]), "yes" if row["differs"] else "no"]


def _pct(level: float) -> str:
    return f"{level * 100:g} %"


def _folded(console: Console, text: str, **style) -> None:
    """A line wrapped at the console's width (its prints are not)."""
    console.print(Text(text, no_wrap=False, overflow="fold", **style), soft_wrap=False)


class Names:
    """Entry labels for the tables: the catalog's display name, plus the source when the
    report mixes sources."""

    def __init__(self, models: pl.DataFrame, mixed: bool):
        self.display = dict(zip(models["model_id"], models["display"], strict=True))
        self.mixed = mixed

    def __call__(self, row: dict, key: str = "model") -> str:
        name = self.display.get(row[key]) or row[key]
        return escape(f"{name} ({row['source']})" if self.mixed and "source" in row else name)


@dataclass
class Sheet:
    """What every section reads: the frames, the entry labels, the regime, metric and level,
    and what several sections share (the aggregates' categories, the intervals by entry)."""

    console: Console
    frames: dict[str, pl.DataFrame]
    names: Names
    regime: str
    metric: str
    level: float = LEVEL
    shown: list[FitTable] = field(default_factory=list)

    def __post_init__(self) -> None:
        frames = self.frames
        self.where = f"{self.regime}, {self.metric}"
        self.agg = frames["aggregates"]
        self.cats = category_columns(self.agg)
        self.pct = _pct(self.level)
        self.boot = frames.get("bootstrap")
        self.n_boot = (self.boot["resamples"][0] if self.boot is not None and self.boot.height
                       else None)
        self.ranks = {_key(r): r for r in frames["rankings"].iter_rows(named=True)}
        self.score_iv = {(_key(r), r["scope"]): r for r in
                         frames.get("score_intervals", pl.DataFrame()).iter_rows(named=True)}
        self.rank_iv = {_key(r): r for r in frames.get("rank_intervals", pl.DataFrame())
                        .filter(pl.col("scope") == "macro").iter_rows(named=True)} \
            if "rank_intervals" in frames else {}

    def show(self, table: FitTable) -> None:
        """Print a table, one blank line after the one before."""
        if self.shown:
            self.console.print()
        self.console.print(table)
        self.shown.append(table)

    def scored(self, r: dict, scope: str) -> str:
        """A score with its interval where the bootstrap gives one."""
        iv = self.score_iv.get((_key(r), scope))
        return _f(r[scope]) + (f" {interval_text(iv['low'], iv['high'], 2)}" if iv else "")

    def rank_range(self, r: dict) -> list[str]:
        """The macro rank interval cell, `[2-7]` (none without the bootstrap)."""
        if not self.rank_iv:
            return []
        iv = self.rank_iv.get(_key(r))
        return [f"[{iv['rank_low']}-{iv['rank_high']}]"
                if iv and iv["rank_low"] is not None else "—"]


def aggregates_section(s: Sheet) -> None:
    """The aggregates with their intervals, the comparison with the imported leaderboard and
    why an interval is missing."""
    with_iv = (f"; [ ] = {s.pct} interval over {s.n_boot:,} resamples of the tasks (within "
               "each category for macro), rank interval = the macro rank's" if s.score_iv
               else "")
    t = _table(f"Aggregates ({s.where}): category = mean of its tasks, micro = mean of the "
               f"tasks, macro = mean of the categories; — where a task is missing{with_iv}",
               [("#", "right"), ("model", "left"),
                *([("rank interval", "right")] if s.rank_iv else []),
                ("macro", "right"), ("micro", "right"),
                *((c, "right") for c in s.cats), ("missing", "right")], keys=2)
    for r in s.agg.iter_rows(named=True):
        t.add_row(_n(s.ranks[_key(r)]["macro"]), s.names(r), *s.rank_range(r),
                  s.scored(r, "macro"), s.scored(r, "micro"), *(_f(r[c]) for c in s.cats),
                  str(r["n_missing"]))
    s.show(t)
    published = s.frames["leaderboard_differences"]
    if published.height:
        worst = published["difference"].abs().max()
        s.console.print(f"Imported leaderboard.json: {published['model'].n_unique()} models in "
                        f"common; largest |aggregate - published| = "
                        f"{'—' if worst is None else f'{worst:.1e}'}")
    if s.boot is not None and not s.score_iv:
        s.console.print(f"[dim]no intervals in {s.regime}: the bootstrap needs an entry with a "
                        "score on every task of the suite[/]")
    elif any(iv["low"] is None for iv in s.score_iv.values()):
        s.console.print(f"[dim]— in place of an interval: {ONE_TASK_NOTE}[/]", soft_wrap=False)


def leader_section(s: Sheet) -> None:
    """The leader of the scope, the runner-up and the margin (the one rule's decision)."""
    top = s.agg.filter(pl.col("macro").is_not_null()).head(2).to_dicts()   # agg: best first
    if len(top) < 2:
        return
    margin = s.frames.get("leader_margin", pl.DataFrame()).to_dicts()
    paired = ""
    if margin:          # the one rule, as the tie group decides it
        m = margin[0]
        paired = ((f" {interval_text(m['low'], m['high'], 2)}" if m["low"] is not None
                   else "")
                  + "; " + claim_text(m["differs"], m["p_value"], m["n_tasks"], m["wins"],
                                      m["losses"], s.level, m["threshold"], a="the leader"))
    s.console.print(Text.from_markup(
        f"Leader of the scope (macro, {s.where}): {s.names(top[0])} {s.scored(top[0], 'macro')}"
        + "".join(f", rank {x}" for x in s.rank_range(top[0]))
        + f"; runner-up: {s.names(top[1])} {s.scored(top[1], 'macro')}"
        + "".join(f", rank {x}" for x in s.rank_range(top[1]))
        + f"; margin {_f(top[0]['macro'] - top[1]['macro'])}{escape(paired)}",
        overflow="fold"), soft_wrap=False)                  # wrapped at the width


def tie_group_section(s: Sheet) -> None:
    """The macro leader's tie group (the one rule)."""
    if "leader_tie_group" not in s.frames or not s.frames["leader_tie_group"].height:
        return
    tie = s.frames["leader_tie_group"]
    compared = tie.height - 1          # every entry but the leader
    if not compared:                   # the leader alone: no rule to state
        s.console.print(Text.from_markup(
            f"Tie group of the macro leader ({s.where}, {s.pct}): "
            f"{s.names(tie.row(0, named=True))} is the only entry with a macro score; none to "
            "compare it with", overflow="fold"), soft_wrap=False)
        return
    n_tasks = tie["n_tasks"][0]
    group = tie.filter("tied_with_leader")
    t = _table(f"Tie group of the macro leader ({s.where}, {s.pct}): the leader and the models "
               "the one rule does not separate from it (sign-flip test of the "
               f"{n_tasks} tasks' differences: p > {threshold_text(s.level, compared)}, the "
               f"leader compared with {compared} other{'s' * (compared != 1)}; or the "
               "interval of Δ contains "
               "0); Δ = leader - it, wins-losses = the leader's tasks above-below it; the "
               "rank interval describes the resamples",
               [("model", "left"), ("macro", "right"), ("Δ", "right"), ("p", "right"),
                ("wins-losses", "right"), ("rank interval", "right")])
    macro = {_key(r): r for r in s.agg.iter_rows(named=True)}
    for r in group.iter_rows(named=True):
        own = r["leader"]
        t.add_row(s.names(r) + (" (leader)" if own else ""), _f(macro[_key(r)]["macro"]),
                  "—" if own else _f(r["delta"]) + (
                      f" {interval_text(r['delta_low'], r['delta_high'], 2)}"
                      if r["delta_low"] is not None else ""),
                  "—" if own else p_text(r["p_value"]),
                  "—" if own else f"{r['wins']}-{r['losses']}",
                  "—" if r["rank_low"] is None else f"{r['rank_low']}-{r['rank_high']}")
    s.show(t)
    if few := too_few(n_tasks, s.level, compared):
        _folded(s.console, few)


def borda_section(s: Sheet) -> None:
    t = _table(f"Rankings per category ({s.where}) and Borda count (n - rank points per "
               "category, summed)",
               [("#", "right"), ("model", "left"), ("Borda", "right"), ("mean rank", "right"),
                *((c, "right") for c in s.cats)], keys=2)
    for r in s.frames["borda"].iter_rows(named=True):
        rk = s.ranks[_key(r)]
        t.add_row(_n(r["borda_rank"]), s.names(r), _n(r["borda"]),
                  _f(r["mean_rank"], 1), *(_n(rk[c]) for c in s.cats))
    s.show(t)


def rank_tests_section(s: Sheet) -> None:
    """Friedman and the Nemenyi critical difference per regime and scope."""
    if "rank_tests" not in s.frames:
        return
    tests = s.frames["rank_tests"]
    alpha = tests["alpha"][0] if tests.height else None
    best = {(r["regime"], r["scope"]): r for r in s.frames["average_ranks"]
            .group_by("regime", "scope", maintain_order=True).first().iter_rows(named=True)}
    one_k = tests["n_models"].n_unique() == 1     # the usual case: said in the title
    t = _table(f"Friedman test and Nemenyi critical difference ({s.metric}"
               + (f", {tests['n_models'][0]} models" if one_k else "")
               + f"): average ranks over the tasks (1 = best), all tasks and each category "
               f"with >= {MIN_TASKS}; two models whose average ranks differ by more than CD "
               f"differ at alpha = {alpha:g}",
               [("regime", "left"), ("scope", "left"),
                *([] if one_k else [("models", "right")]),
                ("tasks", "right"), ("chi2", "right"), ("p-value", "right"),
                ("CD", "right"), ("best: its average rank", "left")], keys=2)
    for r in tests.iter_rows(named=True):
        top = best.get((r["regime"], r["scope"]))
        few = r["n_tasks"] < MIN_TASKS     # the categories' rule, for every scope shown
        t.add_row(escape(r["regime"]), escape(r["scope"]),
                  *([] if one_k else [str(r["n_models"])]),
                  str(r["n_tasks"]), "—" if few else _f(r["statistic"], 1),
                  TOO_FEW_TASKS if few else p_text(r["p_value"]),
                  "—" if few else _f(r["critical_difference"], 2),
                  f"{s.names(top)}: {_f(top['average_rank'], 2)}" if top else "—")
    s.show(t)


def rank_shift_section(s: Sheet) -> None:
    shifts = {r: {_key(x): x for x in s.frames[f"rank_shift_full_{r}"].iter_rows(named=True)}
              for r in FEW_SHOT_REGIMES}
    t = _table(f"Rank shift of macro ({s.metric}) from full: + climbs, - falls",
               [("model", "left"), ("full", "right"),
                *((f"{r} rank", "right") for r in FEW_SHOT_REGIMES),
                *((f"full→{r}", "right") for r in FEW_SHOT_REGIMES)],
               empty="no entry has a macro score (every task) in full and in 10shot")
    for r in s.frames["rank_shift_full_10shot"].iter_rows(named=True):
        rows = [shifts[k].get(_key(r)) for k in FEW_SHOT_REGIMES]
        t.add_row(s.names(r), str(r["rank_a"]),
                  *(str(x["rank_b"]) if x else "—" for x in rows),
                  *(_signed(x["shift"]) if x else "—" for x in rows))
    s.show(t)


def spearman_regimes_section(s: Sheet) -> None:
    t = _table(f"Spearman rho between the regimes' macro rankings ({s.metric})",
               [("regimes", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")],
               empty=_too_few(s.frames["spearman_regimes"],
                              "with a macro score in both regimes"))
    for r in _defined(s.frames["spearman_regimes"]):
        t.add_row(f"{r['regime_a']} vs {r['regime_b']}", _f(r["rho"]),
                  p_text(r["p_value"]), str(r["n"]))
    s.show(t)


def category_agreement_section(s: Sheet) -> None:
    t = _table(f"Spearman rho between category rankings ({s.where})",
               [("", "left"), *((c, "right") for c in s.cats)],
               empty="rho needs at least 3 entries with both category scores, not all equal")
    agreement = s.frames["category_agreement"]
    for r in (agreement.iter_rows(named=True)
              if any(agreement[c].drop_nulls().len() for c in s.cats) else ()):
        t.add_row(escape(r["category"]), *(_f(r[c], 2) for c in s.cats))
    s.show(t)


def degradation_section(s: Sheet) -> None:
    """Few-shot degradation per entry (macro) and per category (means over the models)."""
    few = FEW_SHOT_REGIMES
    deg_cols = [("full", "right"), *((k, "right") for k in few),
                *(c for k in few for c in ((f"drop {k}", "right"), (f"rel. drop {k}", "right"),
                                           (f"retention {k}", "right")))]

    def deg_cells(r: dict) -> list[str]:
        return [_f(r["full"]), *(_f(r[k]) for k in few),
                *(_f(r[f"{m}_{k}"]) for k in few for m in ("drop", "rel_drop", "retention"))]

    t = _table(f"Few-shot degradation of macro ({s.metric}): drop = full - k, rel. drop = "
               "drop / full, retention = k / full", [("model", "left"), *deg_cols],
               empty="no entry has a full macro score")
    for r in (s.frames["degradation"].filter(pl.col("scope") == "macro")
              .sort("full", descending=True, nulls_last=True).iter_rows(named=True)):
        t.add_row(s.names(r), *deg_cells(r))
    s.show(t)
    t = _table(f"Few-shot degradation per category ({s.metric}): means over the models",
               [("scope", "left"), ("n", "right"), *deg_cols])
    for r in s.frames["degradation_summary"].iter_rows(named=True):
        t.add_row(escape(r["scope"]), str(r["n"]), *deg_cells(r))
    s.show(t)


def scale_section(s: Sheet) -> None:
    """Spearman rho between parameter count and score, with its interval."""
    by_source = s.names.mixed and "source" in s.frames["scale"].columns
    rho_iv = {(r.get("source"), r["scope"]): r
              for r in s.frames.get("scale_rho_intervals", pl.DataFrame()).iter_rows(named=True)}
    t = _table(f"Scale ({s.where}): Spearman rho between parameter count and score"
               + (f"; its {s.pct} interval over the resamples of the tasks" if rho_iv else ""),
               [*([("source", "left")] if by_source else []),
                ("scope", "left"), ("rho", "right"), *([("interval", "right")] if rho_iv else []),
                ("p-value", "right"), ("n", "right")],
               keys=2 if by_source else 1,
               empty=_too_few(s.frames["scale"], "with a known parameter count (the k-mer "
                                                 "baselines have none) and the score"))
    for r in _defined(s.frames["scale"]):
        iv = rho_iv.get((r.get("source"), r["scope"]))
        same = iv is not None and iv["n"] == r["n"]     # the same models (all complete)
        t.add_row(*([escape(r["source"])] if by_source else []), escape(r["scope"]), _f(r["rho"]),
                  *([interval_text(iv["low"], iv["high"], 2) if same else "—"] if rho_iv else []),
                  p_text(r["p_value"]), str(r["n"]))
    s.show(t)


def controlled_pairs_section(s: Sheet) -> None:
    """Models differing in exactly one attribute, with the one rule's decision per pair."""
    pairs = s.frames["controlled_pairs"].sort("attribute", "model_a", "model_b")
    pair_iv = {(r.get("source"), r["model_a"], r["model_b"]): r
               for r in s.frames.get("controlled_pair_intervals", pl.DataFrame())
               .filter(pl.col("scope") == "macro").iter_rows(named=True)} \
        if "controlled_pair_intervals" in s.frames else {}
    t = _table(f"Controlled pairs ({s.where}): models differing in exactly one attribute; "
               "Δ = a - b, wins over the categories"
               + (f"; [ ] = {s.pct} interval of Δ; p = sign-flip p of the tasks' differences; "
                  f"differs = the one rule at {s.pct} (p <= {threshold_text(s.level)} and the "
                  "interval excludes 0)" if pair_iv else ""),
               [("attribute", "left"), ("model a", "left"), ("model b", "left"),
                ("a", "left"), ("b", "left"), ("Δ macro", "right"),
                *([("p", "right"), ("differs", "left")] if pair_iv else []),
                ("wins a-b-ties", "right")], keys=3,
               empty="no two models (of one source) differ in exactly one of architecture "
                     "family, tokenization family, pretraining data and scale band")
    for r in pairs.iter_rows(named=True):
        iv = pair_iv.get((r.get("source"), r["model_a"], r["model_b"]))
        t.add_row(escape(r["attribute"]), s.names(r, "model_a"), s.names(r, "model_b"),
                  escape(r["value_a"]), escape(r["value_b"]),
                  _f(r["macro"]) + (f" {interval_text(iv['low'], iv['high'], 2)}" if iv else ""),
                  *(_rule_cells(iv) if pair_iv else []),
                  f"{r['wins_a']}-{r['wins_b']}-{r['ties']}")
    s.show(t)


def controlled_pairs_in_domain_section(s: Sheet) -> None:
    """The same pairs over only the tasks in both models' pretraining domain."""
    in_domain = s.frames.get("controlled_pairs_in_domain")
    if in_domain is None:
        return
    with_p = "p_value" in in_domain.columns and in_domain["p_value"].drop_nulls().len() > 0
    t = _table(f"Controlled pairs on in-domain tasks ({s.where}): the same pairs over only "
               "the tasks in the pretraining domain of both models (the rule: docs, Task "
               "and model domains); Δ = a - b, macro over the categories of those tasks"
               + (f"; [ ] = {s.pct} interval of Δ over resamples of those tasks; p and "
                  "differs: the one rule on those tasks" if with_p else ""),
               [("attribute", "left"), ("model a", "left"), ("model b", "left"),
                ("tasks", "right"), ("categories", "right"), ("Δ macro", "right"),
                *([("p", "right"), ("differs", "left")] if with_p else []),
                ("wins a-b-ties", "right")],
               keys=3, empty="no controlled pairs")
    for r in in_domain.sort("attribute", "model_a", "model_b").iter_rows(named=True):
        few = r["macro"] is None
        t.add_row(escape(r["attribute"]), s.names(r, "model_a"), s.names(r, "model_b"),
                  str(r["n_tasks"]), str(r["n_categories"]),
                  f"fewer than {MIN_IN_DOMAIN} tasks in both domains" if few else
                  _f(r["macro"]) + (f" {interval_text(r['low'], r['high'], 2)}"
                                    if r.get("low") is not None else ""),
                  *(_rule_cells(r) if with_p else []),
                  "—" if few else f"{r['wins_a']}-{r['wins_b']}-{r['ties']}")
    s.show(t)


def smaller_beats_larger_section(s: Sheet) -> None:
    if "smaller_beats_larger_summary" not in s.frames:
        return
    counts = "; ".join(f"{r['regime']}: {r['n_hold']} of {r['n_cases']}"
                       for r in s.frames["smaller_beats_larger_summary"].iter_rows(named=True))
    _folded(s.console,
            f"Smaller beats 5x larger ({s.metric}, macro; pairs of one source where the model "
            "with at most a fifth of the other's parameters scores higher), cases that hold at "
            f"{s.pct} (the one rule separates the two: sign-flip p of the tasks' differences <= "
            f"{threshold_text(s.level)} and the interval of Δ excludes 0): {counts}")


def task_difficulty_section(s: Sheet) -> None:
    difficulty = s.frames["task_difficulty"]
    flagged = difficulty.filter(pl.col("easy") | pl.col("hard") | pl.col("high_variance"))
    t = _table(f"Task difficulty ({s.where}): easy = mean > {EASY}, hard = mean < {HARD}, "
               f"high variance = sd > {HIGH_VAR} (sample sd); {difficulty['easy'].sum()} easy, "
               f"{difficulty['hard'].sum()} hard, {difficulty['high_variance'].sum()} "
               "high-variance tasks",
               [("task", "left"), ("category", "left"), ("mean", "right"), ("sd", "right"),
                ("best model", "left"), ("best", "right"), ("flags", "left")],
               empty="no task is easy, hard or high-variance")
    for r in flagged.iter_rows(named=True):
        flags = ", ".join(f for f, on in (("easy", r["easy"]), ("hard", r["hard"]),
                                          ("high variance", r["high_variance"])) if on)
        t.add_row(escape(r["label"]), escape(r["category"]), _f(r["mean"]), _f(r["sd"]),
                  s.names({"model": r["best_model"], "source": r.get("best_source")}),
                  _f(r["best_value"]), flags)
    s.show(t)


def domain_split_section(s: Sheet) -> None:
    t = _table(f"In and out of domain ({s.where}): micro = mean of the entry's tasks in its "
               "model's pretraining domain (in) and out of it (out), with their counts; tasks "
               "of unknown domain in neither (the rule: docs, Task and model domains)",
               [("model", "left"), ("in", "right"), ("tasks in", "right"), ("out", "right"),
                ("tasks out", "right"), ("unknown", "right")],
               empty="no entry has a score")
    for r in s.frames["domain_split"].iter_rows(named=True):
        t.add_row(s.names(r), _f(r["in_micro"]), str(r["n_in"]), _f(r["out_micro"]),
                  str(r["n_out"]), str(r["n_unknown"]))
    s.show(t)


def category_leaders_section(s: Sheet) -> None:
    leaders = {(r["regime"], r["scope"]): r
               for r in s.frames["category_leaders"].iter_rows(named=True)}
    t = _table(f"Category leaders ({s.metric}) per regime; * where the leader changes",
               [("", "left"), ("scope", "left"),
                *(c for r in REGIMES for c in ((r, "left"), ("score", "right")))], keys=2,
               empty="no entry has a score", groups=[None, None, *(r for r in REGIMES
                                                                  for _ in range(2))])
    for r in s.frames["leader_changes"].iter_rows(named=True):
        cells = []
        for regime in REGIMES:
            lead = leaders.get((regime, r["scope"]))
            cells += [s.names(lead), _f(lead["value"])] if lead else ["—", "—"]
        t.add_row("*" if r["changed"] else "", escape(r["scope"]), *cells)
    s.show(t)


def leader_changes_section(s: Sheet) -> None:
    """Whether each change of a scope's leader from full holds (the one rule, both regimes)."""
    if "leader_change_significance" not in s.frames:
        return
    changes = s.frames["leader_change_significance"].filter("changed")
    t = _table(f"Leader changes from full ({s.metric}): significant when the one rule "
               f"separates the two leaders at {s.pct} in both regimes, each as a comparison "
               "with its regime's leader: the new one ahead in the new regime, the old one "
               "ahead in full (sign-flip p of the scope's tasks <= (1 - level) / the "
               "entries compared with the leader, and the interval of Δ excluding 0)",
               [("regime", "left"), ("scope", "left"), ("significant", "left"),
                ("p new regime", "right"), ("p full", "right"),
                ("tasks", "right"), ("new leader", "left"), ("full leader", "left")],
               keys=2, empty="no leader changes")
    for r in changes.iter_rows(named=True):
        t.add_row(escape(r["regime_to"]), escape(r["scope"]),
                  "yes" if r["significant"] else "no",
                  p_text(r["p_value_to"]), p_text(r["p_value_from"]),
                  "—" if r["n_tasks"] is None else str(r["n_tasks"]),
                  s.names({"model": r["leader_to"], "source": r.get("source_to")}),
                  s.names({"model": r["leader_from"], "source": r.get("source_from")}))
    s.show(t)


def protocol_agreement_section(s: Sheet) -> None:
    """`--versus`: the geneb-v1 rankings against the other protocol's."""
    if "protocol_agreement" not in s.frames:
        return
    t = _table(f"Probe agreement ({s.where}, local): Spearman rho between the geneb-v1 "
               "rankings and the other protocol's, per column",
               [("column", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")])
    for r in s.frames["protocol_agreement"].iter_rows(named=True):
        t.add_row(escape(r["column"]), _f(r["rho"]), p_text(r["p_value"]), str(r["n"]))
    s.show(t)
    t = _table(f"Macro rank under {GENEB_V1.name} and under the other protocol",
               [("model", "left"), (GENEB_V1.name, "right"), ("other", "right"),
                ("shift", "right")],
               empty="no model has a macro score under both protocols")
    for r in s.frames["protocol_rank_shift"].sort("rank_a").iter_rows(named=True):
        t.add_row(escape(r["model"]), str(r["rank_a"]), str(r["rank_b"]), _signed(r["shift"]))
    s.show(t)


def zero_shot_section(s: Sheet) -> None:
    """The kind's zero-shot protocol (`store.analyses.zero_shot`): macro, micro and each task,
    the leader's tie group marked (the one rule), and why it cannot separate where so."""
    if "zero_shot_aggregates" not in s.frames:
        return
    agg = s.frames["zero_shot_aggregates"]
    tie = s.frames.get("zero_shot_tie_group")
    tied = ({_key(r) for r in tie.filter(pl.col("tied_with_leader")).iter_rows(named=True)}
            if tie is not None else set())
    cats = category_columns(agg)
    marked = "; * = in the macro leader's tie group (the one rule)" if tie is not None else ""
    t = _table(f"Zero-shot ({VARIANT_COSINE_V1.name}, {s.metric}): no probe, the score of each "
               f"variant its cosine distance{marked}",
               [("model", "left"), ("macro", "right"), ("micro", "right"),
                *((c, "right") for c in cats)])
    for r in agg.iter_rows(named=True):
        t.add_row(s.names(r) + (" *" if _key(r) in tied else ""), _f(r["macro"]),
                  _f(r["micro"]), *(_f(r[c]) for c in cats))
    s.show(t)
    if tie is not None and tie.height:
        few = too_few(tie["n_tasks"][0], s.level, tie.height - 1)
        if few:
            _folded(s.console, few)


# The report's sections, in the order printed.
def context_section(s: Sheet) -> None:
    """Score against context per model (`store.analyses.context`), where a model has entries
    at several context policies: macro, then each category where the suite has more than one."""
    if "context_curve" not in s.frames:
        return
    curve = s.frames["context_curve"]
    what = ("each model's entries at several context policies; the length is the nucleotides "
            "each sequence was cut to (windows: each window's), crop its own limit")
    macro = curve.filter(pl.col("scope") == "macro")
    t = _table(f"Score against context (macro, {s.where}, {s.pct} task-bootstrap interval): "
               + what, [("model", "left"), ("context", "left"), ("length", "right"),
                        ("macro", "right"), ("low", "right"), ("high", "right")], keys=2)
    for r in macro.iter_rows(named=True):
        t.add_row(escape(r["model"]), escape(r["context"]), _n(r["context_length"]),
                  _f(r["value"]), _f(r["low"]), _f(r["high"]))
    s.show(t)
    categories = curve.filter(pl.col("scope") != "macro")
    if categories.height:
        _context_categories(s, categories, what)
    if curve["low"].null_count():
        s.console.print(f"[dim]— in place of an interval: {ONE_TASK_NOTE}[/]", soft_wrap=False)


def _context_categories(s: Sheet, categories: pl.DataFrame, what: str) -> None:
    t = _table(f"Score against context per category ({s.where}, {s.pct} task-bootstrap "
               "interval, the same draws): each category's score is the mean of its tasks'; "
               + what, [("category", "left"), ("model", "left"), ("context", "left"),
                        ("length", "right"), ("score", "right"), ("low", "right"),
                        ("high", "right")], keys=3)
    for r in categories.iter_rows(named=True):
        t.add_row(escape(r["scope"]), escape(r["model"]), escape(r["context"]),
                  _n(r["context_length"]), _f(r["value"]), _f(r["low"]), _f(r["high"]))
    s.show(t)


SECTIONS: tuple[Callable[[Sheet], None], ...] = (
    aggregates_section, leader_section, tie_group_section, zero_shot_section, borda_section,
    rank_tests_section,
    rank_shift_section, spearman_regimes_section, category_agreement_section,
    degradation_section, scale_section, controlled_pairs_section,
    controlled_pairs_in_domain_section, smaller_beats_larger_section, task_difficulty_section,
    domain_split_section, category_leaders_section, leader_changes_section,
    protocol_agreement_section, context_section,
)


def render(console: Console, frames: dict[str, pl.DataFrame], names: Names, *,
           regime: str, metric: str, level: float = LEVEL) -> None:
    """Every section of the report (`SECTIONS`) from the frames of `compute`."""
    sheet = Sheet(console, frames, names, regime, metric, level)
    for section in SECTIONS:
        section(sheet)


def render_domain(console: Console, agg: pl.DataFrame, names: Names, *, regime: str,
                  metric: str, domain: str) -> None:
    """`--domain`'s report: the aggregates of each entry over its own cells of the domain
    (`partial_aggregates`), then what is not computed (DOMAIN_SKIPPED) and why."""
    cats = category_columns(agg)
    t = _table(f"Aggregates of the cells {DOMAIN_WORDS[domain]} ({regime}, {metric}): each "
               "entry over its own tasks of the domain; micro = mean of its tasks, category = "
               "mean of its tasks there, macro = mean of its categories; not ranked (the "
               "entries do not share a task set)",
               [("model", "left"), ("macro", "right"), ("categories", "right"),
                ("micro", "right"), ("tasks", "right"), *((c, "right") for c in cats)],
               empty=f"no entry has a {regime} score on a cell of this domain")
    for r in agg.iter_rows(named=True):
        t.add_row(names(r), _f(r["macro"]), str(r["n_categories"]), _f(r["micro"]),
                  str(r["n_tasks"]), *(_f(r[c]) for c in cats))
    console.print(t)
    _folded(console, f"not computed with --domain (they compare entries on one task set): "
                     f"{', '.join(DOMAIN_SKIPPED)}")


def render_examples(console: Console, frame: pl.DataFrame, regime: str) -> None:
    """The line saying where `--examples`' intervals are (in --json), or why there are none."""
    cells = frame.filter(pl.col("seed").is_null()).height
    console.print(f"per-example MCC intervals of {cells} local cell(s) of {regime}: "
                  "in --json (example_intervals)" if cells else
                  f"per-example MCC intervals: no local predictions of {regime}; "
                  f"{NO_PREDICTIONS}")


def render_health(console: Console, health: dict, n_tasks: int, suite: str) -> None:
    """The task-health section: the flagged tasks of the scope, and how many were audited."""
    if not health:     # wrapped at the width (the console's prints are not)
        _folded(console, f"task health: no task of the report audited (`geneb-engine audit "
                         f"--suite {suite}` checks them)", style="dim")
        return
    flagged = {t: h for t, (_, h) in health.items() if h.flagged}
    table = FitTable(f"Task health: {len(flagged)} of {len(health)} audited task(s) flagged "
                     f"({n_tasks - len(health)} not audited); `geneb-engine audit` for details",
                     [Col("task", key=True), Col("verdict", wrap=14), Col("leak", justify="right"),
                      Col("label conflicts", justify="right"), Col("shortcut", wrap=12),
                      Col("of best model", justify="right")])
    for t, h in flagged.items():
        table.add_row(escape(t), ", ".join(h.flags), f"{h.leak_share:.1%}",
                      f"{h.conflict_share:.1%}",
                      f"{h.shortcut} {h.shortcut_mcc:.2f}" if h.shortcut else "-",
                      "-" if h.shortcut_share is None else f"{h.shortcut_share:.0%}")
    if flagged:
        console.print(table)
    else:
        _folded(console, f"task health: all {len(health)} audited task(s) clean "
                         f"({n_tasks - len(health)} not audited)")
