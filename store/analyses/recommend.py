"""Which model for my task: the answer of `geneb-engine recommend` (UI-free: a `Question` in, an
`Answer` out, plain frozen dataclasses; the dashboard's view asks the same).

The rules, each decided here once:

- Label budget -> regime (`regime_for_labels`): N labelled sequences per class answer for the
  nearest regime, 1shot for N <= 3, 10shot for N <= 30, full above (full = "many": every
  training row, hundreds to thousands per class); a budget strictly between two regimes' label
  counts (1 < N < 10, 10 < N < FULL_FROM) comes with a warning naming both.
- Tasks like a task (`like_tasks`): the suite's tasks of the same kingdom, and, where both have
  a recorded sequence-length profile (`store.catalog.TaskProfile`), a median length within a
  factor LIKE_LENGTH_FACTOR of its own; a task without a profile is kept by its kingdom alone
  (the answer counts both).
- Constraints (`Constraints.reasons`): every constraint a model fails is named; a fact the
  catalog does not hold (no parameter count, no context) fails the constraint that needs it.
  The memory a model needs is its weights' at the dtype (`store.runnable.weight_bytes`),
  activations not counted; GB = 2**30 bytes. A weight-free baseline (the k-mer spectra) has
  no parameters: it satisfies --max-params and --memory-gb. "Runs here" is
  `store.runnable.assess` (the dashboard's missing-evaluations answer, held to the engine's
  preflight by its test).
- The leader: the best point score over the scope (macro over the scope's categories, as
  `report` aggregates it), among the entries (model, source) that satisfy the constraints and
  have a score on every task of the scope.
- The tie group (TIE_RULE): B is tied with the leader when the one rule for "A and B differ"
  (`store.analyses.differ`, as `uncertainty.leader_tie_group` applies it: the sign-flip test of
  the per-task differences leader - B over the scope, its threshold (1 - level) shared by the
  comparisons with the leader, and the percentile interval of leader - B over the paired task
  bootstrap of `report` and the Significance view excluding 0) does not separate them. A
  scope too small for any p-value to reach the threshold separates nothing: every eligible
  entry is in the answer, with the line saying so (`differ.too_few`). P(leader > B), the
  share of resamples where the leader scores strictly higher, is descriptive (`--json`).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import polars as pl

from store.analyses.differ import claim_text, threshold_text, too_few
from store.analyses.presets import LEVEL, RESAMPLES, SEED
from store.analyses.scores import scores_of, seed_means
from store.analyses.uncertainty import bootstrap, leader_tie_group, min_ranks, score_intervals
from store.catalog import ModelMeta, TaskMeta, param_count, params_text
from store.db import Snapshot, snapshot_of
from store.domains import IN, OUT, UNKNOWN
from store.licences import allowed_problems, commercial_problems
from store.paths import store_args
from store.runnable import (
    GIB,
    Runnability,
    assess,
    device_memory,
    package_installed,
    weight_bytes,
)
from store.scopes import with_metadata
from store.seedmeans import per_seed
from store.tables.catalogs import known_tasks, pair_domains, store_models
from store.vocab.encoder_kinds import KINDS, UNPUBLISHED
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, TaskKind
from store.vocab.protocol import FEW_SHOT_REGIMES, REGIME_K, REGIMES, read_protocol
from store.vocab.suites import DEFAULT as DEFAULT_SUITE

# Labelled sequences per class of the few-shot regimes (their k), and the budget from which full
# data ("many") is the nearest regime's.
REGIME_LABELS: dict[str, int] = {r: REGIME_K[r] for r in FEW_SHOT_REGIMES}
FULL_FROM = 100
NEAREST: tuple[tuple[int, str], ...] = ((3, "1shot"), (30, "10shot"))   # N <= bound -> regime
# The regimes beside each in `REGIMES`' order, from most labels to fewest (how the answer
# changes there): full -> 10shot; 10shot -> full, 1shot; 1shot -> 10shot.
NEIGHBOURS: dict[str, tuple[str, ...]] = {
    r: tuple(REGIMES[j] for j in (i - 1, i + 1) if 0 <= j < len(REGIMES))
    for i, r in enumerate(REGIMES)}
LIKE_LENGTH_FACTOR = 2.0
NAMED_TIED = 4          # a neighbouring regime's line names this many of its tie group
TIE_RULE = ("B is tied with the leader unless the sign-flip test of the {n} tasks' differences "
            "leader - B gives p <= {bar} (the leader compared with {m} others) and the {pct} "
            "bootstrap interval of leader - B excludes 0; p = that p-value")

# Why an entry is not in the answer, in the order the excluded list shows them.
WORSE, PARTIAL, CONSTRAINT, NO_RESULTS = "worse", "partial", "constraint", "no results"
EXCLUSION_ORDER = (WORSE, PARTIAL, CONSTRAINT, NO_RESULTS)


def regime_for_labels(n: int) -> tuple[str, str | None]:
    """(the regime nearest `n` labelled sequences per class, the warning when `n` lies between
    two regimes' label counts, else None)."""
    if n < 1:
        raise ValueError(f"a label budget is at least 1 per class, got {n}")
    regime = next((r for bound, r in NEAREST if n <= bound), "full")
    if n in REGIME_LABELS.values() or n >= FULL_FROM:
        return regime, None
    below, above = (("1shot", "10shot") if n < REGIME_LABELS["10shot"] else ("10shot", "full"))
    shown = {**{r: f"{k} per class" for r, k in REGIME_LABELS.items()},
             "full": f"every training row, {FULL_FROM}+ per class"}
    return regime, (f"{n} labels per class lie between {below} ({shown[below]}) and {above} "
                    f"({shown[above]}): answering for the nearest, {regime}")


def like_tasks(task_id: str, tasks: Sequence[TaskMeta],
               known: pl.DataFrame) -> tuple[tuple[TaskMeta, ...], str]:
    """(the tasks of `tasks` like `task_id`, the line saying which rule picked which) by the
    module's rule, over the task catalog's columns (`known`: `known_tasks`). A GenebError when
    `task_id` is not among `tasks` or its kingdom is not known."""
    rows = with_metadata(tasks, known)
    kingdom = dict(rows.select("task_id", "kingdom").iter_rows())
    length = dict(rows.select("task_id", "length_median").iter_rows())
    if task_id not in kingdom:
        raise GenebError(f"--like {task_id}: not a task of the suite; `geneb-engine tasks` "
                         "lists them")
    own = kingdom[task_id]
    if own in (None, "", UNKNOWN) or own == "mixed":
        raise GenebError(f"--like {task_id}: its kingdom is {own or 'not known'}, so no task "
                         "is like it by kingdom; give the scope with --category, --tasks, "
                         "--organism or --kingdom")
    mine = length[task_id]
    by_length, by_kingdom = [], []
    for t in tasks:
        if kingdom[t.task_id] != own:
            continue
        other = length[t.task_id]
        if mine is None or other is None:
            by_kingdom.append(t)
        elif mine / LIKE_LENGTH_FACTOR <= other <= mine * LIKE_LENGTH_FACTOR:
            by_length.append(t)
    chosen = {t.task_id for t in (*by_length, *by_kingdom)}
    factor = f"{LIKE_LENGTH_FACTOR:g}"
    if mine is None:
        rule = (f"tasks like {task_id}: kingdom {own} ({len(by_kingdom)} tasks; its sequence "
                "lengths are not recorded, `geneb-engine data verify` records them)")
    else:
        rule = (f"tasks like {task_id}: kingdom {own} and median length within a factor "
                f"{factor} of its {mine:g} ({len(by_length)} tasks)"
                + (f", and {len(by_kingdom)} of kingdom {own} whose lengths are not recorded"
                   if by_kingdom else ""))
    return tuple(t for t in tasks if t.task_id in chosen), rule


@dataclass(frozen=True)
class Constraints:
    """What a model must satisfy; None / False: no such constraint."""

    max_params: int | None = None
    min_context: int | None = None
    memory_gb: float | None = None      # its weights at `dtype` fit in this many GiB
    dtype: str = "auto"
    architecture: str | None = None
    tokenization: str | None = None
    pretraining: str | None = None
    in_domain: bool = False             # some of the scope's tasks in its pretraining domain
    runnable_here: bool = False
    weights_available: bool = False
    not_zero_shot: bool = False         # no zero_shot training on benchmark data, no overlap
    commercial: bool = False            # weights and code licences permit commercial use
    licences: tuple[str, ...] = ()      # weights and code licences among these (SPDX ids)

    def describe(self) -> str:
        """The constraints given, in words ('' when none)."""
        parts = [
            self.max_params is not None and f"at most {params_text(self.max_params)} parameters",
            self.min_context is not None and f"a context of at least {self.min_context:,}",
            self.memory_gb is not None and f"weights in {self.memory_gb:g} GB at {self.dtype}",
            self.architecture and f"architecture {self.architecture}",
            self.tokenization and f"tokenization {self.tokenization}",
            self.pretraining and f"pretraining {self.pretraining}",
            self.in_domain and "in-domain",
            self.runnable_here and "runnable here",
            self.weights_available and "weights available",
            self.not_zero_shot and "not zero-shot",
            self.commercial and "licences that permit commercial use",
            self.licences and f"licences among {', '.join(self.licences)}",
        ]
        return ", ".join(p for p in parts if p)

    def reasons(self, meta: ModelMeta | None, domain: DomainCounts,
                here: Runnability | None) -> tuple[str, ...]:
        """Every constraint `meta` fails, in words (a model outside the catalog fails each
        constraint on a catalog fact)."""
        if meta is None:
            return ("not in the model catalog",) if self.describe() else ()
        out = []
        params = param_count(meta.params)
        weight_free = meta.encoder in KINDS and KINDS[meta.encoder].weight_free
        if self.max_params is not None and not weight_free:
            out += (["parameter count unknown"] if params is None else
                    [f"{params_text(params)} parameters > {params_text(self.max_params)}"]
                    if params > self.max_params else [])
        if self.min_context is not None:
            context = meta.context or meta.max_tokens
            out += (["context unknown"] if not context else
                    [f"context {context:,} < {self.min_context:,}"]
                    if context < self.min_context else [])
        need = weight_bytes(params, self.dtype)      # None: weight-free, fits anywhere
        if self.memory_gb is not None and need is not None and need > self.memory_gb * GIB:
            out.append(f"{self.dtype} weights {need / GIB:.2f} GB > {self.memory_gb:g} GB")
        for wanted, have, what in ((self.architecture, meta.architecture_family, "architecture"),
                                   (self.tokenization, meta.tokenization_family, "tokenization"),
                                   (self.pretraining, meta.pretraining_data, "pretraining")):
            if wanted and have != wanted:
                out.append(f"{what} {have or 'unknown'}")
        if self.in_domain and not domain.inside:
            out.append(f"in domain on none of the scope's tasks ({domain.text})")
        if self.runnable_here and here is not None and not here.runnable:
            out.append("does not run here: " + here.reason)
        if self.weights_available and KINDS.get(meta.encoder) and \
                KINDS[meta.encoder].unavailable == UNPUBLISHED:
            out.append("no published weights")
        if self.not_zero_shot and (meta.zero_shot or meta.overlap):
            out.append("zero-shot (trained on benchmark data)" if meta.zero_shot
                       else f"known overlap: {meta.overlap}")
        if self.commercial:
            out += commercial_problems(meta.weights_licence, meta.code_licence)
        if self.licences:
            out += allowed_problems(meta.weights_licence, meta.code_licence, self.licences)
        return tuple(out)


@dataclass(frozen=True)
class DomainCounts:
    """How many of the scope's tasks are in a model's pretraining domain, out of it, unknown."""

    inside: int = 0
    outside: int = 0
    unknown: int = 0

    @property
    def text(self) -> str:
        return f"{self.inside} in, {self.outside} out, {self.unknown} unknown"


@dataclass(frozen=True)
class Question:
    """What `recommend` is asked: the scope's tasks (of `suite`), the regime, the metric, the
    bootstrap's settings and the constraints. `scope` and `notes` say how the tasks and the
    regime were chosen (shown with the answer)."""

    tasks: tuple[TaskMeta, ...]
    regime: str = "full"
    metric: str = "mcc"
    level: float = LEVEL
    resamples: int = RESAMPLES
    seed: int = SEED
    constraints: Constraints = field(default_factory=Constraints)
    suite: str = DEFAULT_SUITE
    whole_suite: bool = True            # the scope is every task of the suite
    scope: str = ""
    notes: tuple[str, ...] = ()
    neighbours: bool = True             # also the answer in the neighbouring regimes
    kind: TaskKind = CLASSIFICATION     # the tasks' kind: read under its protocol, alone
    # the suite as the user named it (`--suite`: a folder suite's path), for the fill line to
    # find its data where `suite`, the name, would not; "": `suite`
    suite_given: str = ""


@dataclass(frozen=True)
class Pick:
    """A model in the answer: the leader, or one not separably worse than it."""

    model: str
    source: str                         # its provenance: local, official, verified...
    display: str
    score: float
    low: float | None                   # its score's interval (None: the scope cannot move)
    high: float | None
    rank: int
    rank_low: int | None
    rank_high: int | None
    p_best: float | None
    p_leader_beats: float | None        # P(leader > it), descriptive; None for the leader
    diff: float                         # leader - it
    diff_low: float | None
    diff_high: float | None
    p_value: float | None               # the one rule's sign-flip p of leader - it (None: leader)
    wins: int | None                    # the scope's tasks where the leader is above it
    losses: int | None                  # ... and below it
    params: int | None
    context: int | None
    domain: DomainCounts
    runs_here: bool | None              # None: cannot be told (`Runnability.runs_here`)
    runs_why: str                       # what a run needs, or why it cannot (or may not) run
    fill: str | None                    # the command that computes it here



@dataclass(frozen=True)
class Excluded:
    """A model (or entry) not in the answer, and why (`kind`: one of EXCLUSION_ORDER)."""

    model: str
    source: str | None                  # None: no results on the scope
    kind: str
    reasons: tuple[str, ...]
    score: float | None = None
    p_leader_beats: float | None = None
    diff_low: float | None = None
    diff_high: float | None = None
    p_value: float | None = None        # separably worse: the one rule's numbers
    wins: int | None = None
    losses: int | None = None


@dataclass(frozen=True)
class Neighbour:
    """The answer in a neighbouring regime, in one line."""

    regime: str
    leader: str | None
    tied: tuple[str, ...]
    line: str


@dataclass(frozen=True)
class Answer:
    question: Question
    rule: str                           # TIE_RULE at the level
    picks: tuple[Pick, ...]             # the leader first, then the tie group, best first
    fill: str | None                    # one command computing every pick that runs here
    excluded: tuple[Excluded, ...]
    neighbours: tuple[Neighbour, ...]
    message: str                        # the answer in one line
    small: str | None                   # why the scope cannot separate anything
    resampled: bool
    threshold: float | None = None      # the largest p that separates from the leader
    compared: int = 0                   # the entries compared with the leader

    @property
    def leader(self) -> Pick | None:
        return self.picks[0] if self.picks else None

    @property
    def not_here(self) -> list[str]:
        """The lines that say why picks do not run here, or why that cannot be told: the
        reasons behind "here: no" and "here: ?" in every output, not only in `--json`; the
        picks with one reason in one line (the hub's state is every unfetched model's)."""
        groups: dict[tuple[bool | None, str], list[str]] = {}
        for p in self.picks:
            if not p.runs_here:
                groups.setdefault((p.runs_here, p.runs_why), []).append(p.model)
        return [f"{', '.join(models)} {'does' if len(models) == 1 else 'do'} not run here: {why}"
                if runs is False else
                f"whether {', '.join(models)} {'runs' if len(models) == 1 else 'run'} here "
                f"cannot be told: {why}"
                for (runs, why), models in groups.items()]

    def to_dict(self) -> dict:
        out = asdict(self)
        out["question"]["tasks"] = [t.task_id for t in self.question.tasks]
        if self.question.kind is CLASSIFICATION:    # as before the kinds (report's rule too)
            del out["question"]["kind"]
        return out


def _none(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def fill_line(runs: Sequence[Runnability], q: Question, regime: str,
              store: Sequence[str] = ()) -> str:
    """The `geneb-engine fill` command that computes the models of `runs` (each runnable here)
    on the question's scope at `regime`, into the store that `store` names
    (`store.paths.store_args`), quoted for a POSIX shell (a suite folder with a space)."""
    parts = ["geneb-engine", "fill", *store, "--models", *(r.spec for r in runs)]
    if (suite := q.suite_given or q.suite) != DEFAULT_SUITE:
        parts += ["--suite", suite]
    if not q.whole_suite:
        parts += ["--tasks", *(t.task_id for t in q.tasks)]
    parts += ["--regimes", regime]
    if any(r.remote_code for r in runs):
        parts.append("--trust-remote-code")
    if q.constraints.dtype != "auto":
        parts += ["--dtype", q.constraints.dtype]
    return shlex.join(parts)


@dataclass(frozen=True)
class _Facts:
    """What the answer reads besides the scores, once per question."""

    models: Mapping[str, ModelMeta]
    domains: Mapping[str, DomainCounts]
    here: Mapping[str, Runnability]
    reasons: Mapping[str, tuple[str, ...]]
    store: tuple[str, ...]          # the fill lines' --store (`store.paths.store_args`)


def _facts(paths, q: Question, installed: Callable[[str], bool],
           extra: Sequence[str]) -> _Facts:
    models = store_models(paths)
    of = pair_domains(paths, models, _task_domains(paths, q.tasks))
    ids = list(dict.fromkeys([*models, *extra]))
    domains = {}
    for m in ids:
        found = [of(m, t.task_id) for t in q.tasks]
        domains[m] = DomainCounts(found.count(IN), found.count(OUT), found.count(UNKNOWN))
    memory = device_memory("auto")
    here = {m: assess(asdict(meta), m, memory=memory, dtype=q.constraints.dtype,
                      installed=installed) for m, meta in models.items()}
    reasons = {m: q.constraints.reasons(models.get(m), domains[m], here.get(m)) for m in ids}
    return _Facts(models, domains, here, reasons, tuple(store_args(paths)))


def _task_domains(paths, tasks: Sequence[TaskMeta]) -> pl.DataFrame:
    """[task_id, organism, kingdom] of the scope's tasks: the suite's own (a directory suite's
    manifest), else the task catalog's (`store.scopes.with_metadata`)."""
    return with_metadata(tasks, known_tasks(paths)).select("task_id", "organism", "kingdom")


def _scores(snap: Snapshot, q: Question) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(the seed means of the scope's tasks, the per-seed rows of local few-shot cells with
    several seeds, else None): what `report` bootstraps."""
    protocol = read_protocol(q.kind).hash
    means = seed_means(snap, protocol_hash=protocol).filter(
        pl.col("task").is_in([t.task_id for t in q.tasks]))
    rows = None
    if not means.is_empty() and (means["n_seeds"].max() or 0) > 1:
        rows = per_seed(snap, protocol_hash=[protocol], regime=list(FEW_SHOT_REGIMES))
    return means, rows


@dataclass(frozen=True)
class _AtRegime:
    picks: tuple[Pick, ...]
    excluded: tuple[Excluded, ...]
    resampled: bool
    compared: int = 0                   # the entries compared with the leader
    threshold: float | None = None


def _at_regime(q: Question, regime: str, means: pl.DataFrame, seed_rows: pl.DataFrame | None,
               facts: _Facts) -> _AtRegime:
    scores = scores_of(means, regime=regime, metric=q.metric, with_source=True)
    counts = {(m, s): n for m, s, n in scores.group_by("model", "source")
              .agg(pl.col("task").n_unique()).iter_rows()}
    n_tasks = len(q.tasks)
    excluded: list[Excluded] = []
    eligible = []
    for (m, s), n in sorted(counts.items()):
        if facts.reasons.get(m):
            excluded.append(Excluded(m, s, CONSTRAINT, facts.reasons[m]))
        elif n < n_tasks:
            excluded.append(Excluded(m, s, PARTIAL, (f"results on {n} of the {n_tasks} tasks "
                                                     f"at {regime}",)))
        else:
            eligible.append((m, s))
    with_results = {m for m, _ in counts}
    for m in facts.models:
        if m not in with_results:
            excluded.append(Excluded(m, None, CONSTRAINT, facts.reasons[m])
                            if facts.reasons.get(m) else
                            Excluded(m, None, NO_RESULTS, (f"no results on the scope at "
                                                           f"{regime}",)))
    if not eligible:
        return _AtRegime((), _ordered(excluded), False)
    keep = pl.DataFrame(eligible, schema={"model": pl.String, "source": pl.String}, orient="row")
    draws = bootstrap(scores.join(keep, on=["model", "source"]), tasks=q.tasks, regime=regime,
                      metric=q.metric, per_seed_rows=seed_rows, with_source=True,
                      n=q.resamples, seed=q.seed)
    j = draws.scopes.index("macro")
    moves = draws.resampled(j)
    ties = leader_tie_group(draws, scope="macro", level=q.level)   # the one rule, decided
    at = {(m, s): i for i, (m, s) in enumerate(draws.entries.iter_rows())}
    lead = at[tuple(ties.row(0)[:2])]
    e = len(at)
    iv = score_intervals(draws, q.level).filter(pl.col("scope") == "macro")
    rank = min_ranks(draws.point[:, j])
    picks, worse = [], []
    for r in ties.iter_rows(named=True):
        key = (r["model"], r["source"])
        i = at[key]
        diff = float(draws.point[lead, j] - draws.point[i, j])
        p_win = r["p_leader_beats"]        # descriptive: the share of resamples
        if not r["tied_with_leader"]:
            worse.append(Excluded(*key, WORSE, (
                claim_text(True, r["p_value"], r["n_tasks"], r["wins"], r["losses"], q.level,
                           r["threshold"], r["delta"], r["delta_low"], r["delta_high"],
                           a="the leader"),), float(draws.point[i, j]), p_win, r["delta_low"],
                r["delta_high"], r["p_value"], r["wins"], r["losses"]))
            continue
        meta = facts.models.get(key[0])
        here = facts.here.get(key[0])
        picks.append(Pick(
            key[0], key[1], (meta.display if meta else "") or key[0], float(draws.point[i, j]),
            _none(iv["low"][i]), _none(iv["high"][i]), int(rank[i]),
            r["rank_low"], r["rank_high"], _none(r["p_best"]), p_win, diff,
            r["delta_low"], r["delta_high"], r["p_value"], r["wins"], r["losses"],
            param_count(meta.params) if meta else None,
            (meta.context or meta.max_tokens) if meta else None,
            facts.domains[key[0]], here.runs_here if here else False,
            (here.unsure or here.needs or "ready") if here and here.runnable else
            (here.why if here else "not in the model catalog"),
            fill_line([here], q, regime, facts.store) if meta and here and here.runnable
            else None))
    return _AtRegime(tuple(picks), _ordered([*worse, *excluded]), moves, e - 1,
                     float(ties["threshold"][0]))


def _ordered(excluded: list[Excluded]) -> tuple[Excluded, ...]:
    return tuple(sorted(excluded, key=lambda x: (EXCLUSION_ORDER.index(x.kind),
                                                 -(x.score if x.score is not None else 0),
                                                 x.model)))


def _small(q: Question, main: _AtRegime) -> str | None:
    """Why the scope cannot separate any model from the leader (`differ.too_few`), or None."""
    if main.compared < 1:
        return None
    return too_few(len(q.tasks), q.level, main.compared)


def _nobody(q: Question, regime: str) -> str:
    """The answer when no entry is eligible at `regime`."""
    wanted = q.constraints.describe()
    return (f"no model satisfies {wanted} with results on every task of the scope at {regime}"
            if wanted else f"no model has results on every task of the scope at {regime}")


def recommend(source, q: Question, *,
              installed: Callable[[str], bool] = package_installed) -> Answer:
    """The answer to `q` over the results of `source` (a `StorePaths` or a `Snapshot`): the
    leader and every model not separably worse (the module's rules), the models excluded and
    why, and the leader and tie group of each neighbouring regime."""
    if q.regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {q.regime!r}")
    snap = snapshot_of(source)
    means, seed_rows = _scores(snap, q)
    facts = _facts(snap.paths, q, installed, means["model"].unique().to_list())
    main = _at_regime(q, q.regime, means, seed_rows, facts)
    pct = f"{round(q.level * 100)}%"
    neighbours = []
    for other in NEIGHBOURS[q.regime] if q.neighbours else ():
        there = _at_regime(q, other, means, seed_rows, facts)
        names = tuple(p.model for p in there.picks)
        tied = names[1:]
        shown = ", ".join(tied[:NAMED_TIED]) + (f" and {len(tied) - NAMED_TIED} more"
                                                 if len(tied) > NAMED_TIED else "")
        line = (f"at {other}: {names[0]} leads" + (f", tied with {shown}" if tied else ", alone")
                if names else f"at {other}: {_nobody(q, other)}")
        neighbours.append(Neighbour(other, names[0] if names else None, names[1:], line))
    if main.picks:
        lead = main.picks[0]
        others = len(main.picks) - 1
        message = (f"{lead.model} leads ({q.metric} {lead.score:.3f}, {q.regime})"
                   + (f"; {others} more not separably worse" if others else
                      "; every other model is separably worse" if main.compared else
                      "; the only model eligible: none to compare it with"))
    else:
        message = _nobody(q, q.regime)
    runs = [facts.here[m] for m in dict.fromkeys(p.model for p in main.picks
                                                 if p.runs_here is not False)]
    rule = TIE_RULE.format(n=len(q.tasks), bar=threshold_text(q.level, max(1, main.compared)),
                           m=main.compared, pct=pct)
    return Answer(q, rule, main.picks, fill_line(runs, q, q.regime, facts.store) if runs else None,
                  main.excluded, tuple(neighbours), message,
                  _small(q, main) if main.picks else None, main.resampled, main.threshold,
                  main.compared)
