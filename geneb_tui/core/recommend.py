"""The Recommend view's plain data (UI-free): the question the view's form asks, made into a
`store.analyses.recommend.Question` (nothing recomputed: `recommend` answers it), and the
answer shaped into the view's lines, its two tables and its CSV rows.

The form starts from the main view's selection and follows it: a field that one of the
selection's filters seeds (`SEEDS`: category -> the scope's category, regime, architecture and
pretraining -> constraints, the custom scale band's upper bound -> max parameters, the domain
filter "in" -> in-domain) takes the selection's new value whenever that filter changes; what
the user set in the view stays otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from geneb_tui.core.compare import Table
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot, suite_task_metas
from store.analyses.differ import claim_text
from store.analyses.recommend import (
    Answer,
    Constraints,
    Pick,
    Question,
    recommend,
    regime_for_labels,
)
from store.analyses.uncertainty import interval_text
from store.catalog import params_text, parse_params
from store.domains import IN
from store.runnable import here_text
from store.scopes import scope_tasks
from store.vocab.ids import safe_name
from store.vocab.kinds import TaskKind
from store.vocab.scopes import Scope

LEADER, TIED, EXCLUDED = "leader", "tied", "excluded"   # the CSV's status column


@dataclass(frozen=True)
class Refused:
    """A question the store refuses (`store.vocab.errors.GenebError`): the one line to show."""

    message: str


@dataclass(frozen=True)
class Form:
    """What the view's form holds (None / False: not given)."""

    category: str | None = None          # None: every category of the suite
    regime: str = "full"
    labels: int | None = None            # labels per class: the nearest regime instead
    max_params: int | None = None
    memory_gb: float | None = None
    dtype: str = "auto"
    runnable_here: bool = False
    in_domain: bool = False
    not_zero_shot: bool = False
    commercial: bool = False             # licences of weights and code permit commercial use
    architecture: str | None = None
    pretraining: str | None = None

    @property
    def asked_regime(self) -> str:
        """The regime asked: the label budget's nearest where one is given, else `regime`."""
        return regime_for_labels(self.labels)[0] if self.labels is not None else self.regime


# The form's fields a filter of the main view seeds, and how.
SEEDS: dict[str, Callable[[Filters], object]] = {
    "category": lambda f: f.category,
    "regime": lambda f: f.regime,
    "architecture": lambda f: f.architecture_family,
    "pretraining": lambda f: f.pretraining_data,
    "max_params": lambda f: f.params_max if f.scale_band == "custom" else None,
    "in_domain": lambda f: f.domain == IN,
}


def seeded(filters: Filters) -> Form:
    """The form as the view opens on `filters`."""
    return Form(**{name: seed(filters) for name, seed in SEEDS.items()})


def followed(form: Form, old: Filters, new: Filters) -> Form:
    """`form` after the main view's selection went from `old` to `new`: each seeded field whose
    filter changed takes the new value (another suite: the whole form anew, keeping what no
    filter seeds)."""
    if old.suite != new.suite:
        return replace(form, **{name: seed(new) for name, seed in SEEDS.items()})
    return replace(form, **{name: seed(new) for name, seed in SEEDS.items()
                            if seed(old) != seed(new)})


def parse_field(name: str, text: str):
    """The value of the form's text field `name` (labels, max_params, memory_gb) from `text`
    ('' -> None); ValueError with the one line to show."""
    text = text.strip()
    if not text:
        return None
    try:
        if name == "labels":
            value = int(text)
            ok = value >= 1
        elif name == "max_params":
            value = parse_params(text)
            ok = value is not None and value >= 1
        else:
            value = float(text)
            ok = math.isfinite(value) and value > 0
    except ValueError:
        ok = False
    if not ok:
        raise ValueError({
            "labels": f"Labels per class: {text!r} is not a whole number of at least 1",
            "max_params": f"Max params: {text!r} is not a parameter count; give one such as "
                          "100M or 1.5B",
            "memory_gb": f"Memory GB: {text!r} is not a positive size; give one such as 24",
        }[name])
    return value


def question(snap: StoreSnapshot, filters: Filters, form: Form) -> Question:
    """The `Question` of `form` on the selection's suite and metric. A category the suite does
    not have is the store's one GenebError (`store.scopes.scope_tasks`)."""
    tasks = suite_task_metas(snap, filters)
    scope = Scope(categories=(form.category,)) if form.category else Scope()
    chosen = scope_tasks(snap.paths, tasks, scope, suite=filters.suite, known=snap.tasks)
    notes = []
    if form.labels is not None:
        warning = regime_for_labels(form.labels)[1]
        notes.append(warning or f"{form.labels} labels per class: {form.asked_regime}")
    constraints = Constraints(
        max_params=form.max_params, memory_gb=form.memory_gb, dtype=form.dtype,
        architecture=form.architecture, pretraining=form.pretraining,
        in_domain=form.in_domain, runnable_here=form.runnable_here,
        not_zero_shot=form.not_zero_shot, commercial=form.commercial)
    return Question(tuple(chosen), form.asked_regime, filters.metric, constraints=constraints,
                    suite=filters.suite, whole_suite=len(chosen) == len(tasks),
                    scope=scope.describe(), notes=tuple(notes), kind=TaskKind(snap.kind))


def answer(snap: StoreSnapshot, q: Question) -> Answer:
    """`recommend` on the store the snapshot was read from (its newest version)."""
    return recommend(snap.paths, q)


# -- the answer as the view shows it --------------------------------------------------------------
def question_line(q: Question) -> str:
    """The question in one line (plain text: the caller escapes it)."""
    categories = len({t.category for t in q.tasks})
    parts = [f"suite {q.suite}", q.scope or "every category",
             f"{len(q.tasks)} task{'' if len(q.tasks) == 1 else 's'} in {categories} "
             f"categor{'y' if categories == 1 else 'ies'}", f"regime {q.regime}",
             f"metric {q.metric}", f"{round(q.level * 100)}% intervals"]
    wanted = q.constraints.describe()
    return " · ".join(parts) + (f" · constraints: {wanted}" if wanted else "")


def answer_lines(a: Answer) -> list[str]:
    """The notes on the question, the answer's line, why the scope separates nothing (plain
    text)."""
    return [*a.question.notes, a.message, *([a.small] if a.small else [])]


def after_lines(a: Answer) -> list[str]:
    """The tie rule, why a pick does not run here, the neighbouring regimes' lines and the
    command that computes the picks here (plain text)."""
    return ([a.rule] if a.picks else []) + \
        a.not_here + \
        [n.line for n in a.neighbours] + ([f"run here: {a.fill}"] if a.fill else [])


def _rank(p: Pick) -> str:
    return f"{p.rank_low}-{p.rank_high}" if p.rank_low is not None else str(p.rank)


def _status(a: Answer, p: Pick) -> str:
    return LEADER if p is a.picks[0] else TIED


PICK_HEADER = ["Model", "Status", "Source", "Score", "Interval", "Rank", "p vs lead",
               "Params", "Context", "In/out/?", "Runs here"]
EXCLUDED_HEADER = ["Model", "Source", "Score", "p vs lead", "Why"]


def picks_table(a: Answer) -> Table:
    """The leader and its tie group, best first."""
    rows = [[p.model, _status(a, p), p.source, p.score, interval_text(p.low, p.high, 3),
             _rank(p), p.p_value, params_text(p.params),
             f"{p.context:,}" if p.context else "?",
             f"{p.domain.inside}/{p.domain.outside}/{p.domain.unknown}",
             here_text(p.runs_here)] for p in a.picks]
    return Table(PICK_HEADER, rows, row_keys=[p.model for p in a.picks])


def excluded_table(a: Answer) -> Table:
    """The models not in the answer, and why (the answer's order; the reasons wrapped in the
    width the other columns leave, so each is read whole)."""
    return Table(EXCLUDED_HEADER, [[x.model, x.source or "—", x.score, x.p_value,
                                    "; ".join(x.reasons)] for x in a.excluded],
                 wrap=EXCLUDED_HEADER.index("Why"))


# -- the CSV export ----------------------------------------------------------------------------
CSV_HEADER = ["status", "model", "source", "display", "score", "low", "high", "rank",
              "rank_low", "rank_high", "p_leader_beats", "leader_minus", "leader_minus_low",
              "leader_minus_high", "p_value", "leader_wins", "leader_losses", "params",
              "context", "tasks_in_domain",
              "tasks_out_of_domain", "tasks_domain_unknown", "runs_here", "exclusion",
              "reason", "suite", "scope", "regime", "metric", "level", "constraints"]


def _pick_reason(a: Answer, p: Pick) -> str:
    if p is a.picks[0]:
        return a.message
    return (f"{a.small}; " if a.small else "") + claim_text(
        False, p.p_value, len(a.question.tasks), p.wins, p.losses, a.question.level,
        a.threshold or 0.0, p.diff, p.diff_low, p.diff_high, a="the leader")


def csv_rows(a: Answer) -> tuple[list[str], list[list]]:
    """(header, rows): the picks (status leader / tied), then every excluded model (status
    excluded, its kind and reasons), each with the question on its line; full precision."""
    q = a.question
    asked = [q.suite, q.scope or "every category", q.regime, q.metric, q.level,
             q.constraints.describe()]
    rows = []
    for p in a.picks:
        rows.append([_status(a, p), p.model, p.source, p.display, p.score, p.low, p.high,
                     p.rank, p.rank_low, p.rank_high, p.p_leader_beats, p.diff, p.diff_low,
                     p.diff_high, p.p_value, p.wins, p.losses, p.params, p.context,
                     p.domain.inside, p.domain.outside,
                     p.domain.unknown, p.runs_here, "", _pick_reason(a, p), *asked])
    for x in a.excluded:
        rows.append([EXCLUDED, x.model, x.source, "", x.score, None, None, None, None, None,
                     x.p_leader_beats, None, x.diff_low, x.diff_high, x.p_value, x.wins,
                     x.losses, None, None, None, None, None, None, x.kind,
                     "; ".join(x.reasons), *asked])
    return CSV_HEADER, rows


def export_name(q: Question) -> str:
    """The default file name of the answer's CSV."""
    scope = safe_name(q.scope) if q.scope else "all"
    return f"geneb-recommend-{safe_name(q.suite)}-{scope}-{q.regime}-{q.metric}.csv"

