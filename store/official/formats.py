"""The official GENEB file formats: submissions (schema 1.0), `leaderboard.json` and
`leaderboard_tasks.json`, read and validated.

Reading validates every rule of the official validator (`tools/validate_submission.py`) and the
stricter ones it misses: wrong types are reported instead of crashing, booleans are not numbers,
NaN and infinities are rejected, each regime covers exactly the geneb-v1 task ids, unknown
regimes are refused and the schema version must be "1.0". The rows of the two leaderboard files
(written by the official `tools/build_leaderboard.py`) get the same rules; leaderboard_tasks.json
also its task list, every model in every regime, one display name and parameter count per
model. A file is told apart by its content: `data` without `results` or `model_id` is a
leaderboard, with a `tasks` list the per-task one. Every problem is a `Problem` (file, field,
rule), one line `<file>: <field>: <rule>`: `read_official_file` returns a file's problems
(`geneb-engine validate` prints them), `read_official_files` collects those of all files, adds
the conflicts between files an import cannot resolve, and raises one `GenebError` listing
them, so a caller stores nothing unless every file is valid.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from store.catalog import CATEGORY_ORDER, TaskMeta, geneb_v1_tasks, official_model_ids
from store.vocab.errors import GenebError
from store.vocab.ids import ID_RULE, id_problem, safe_name
from store.vocab.protocol import REGIMES
from store.vocab.sources import (  # 'official' only for the authors' 40 models
    DEFAULT_PROVENANCE,
    SUBMISSION_PROVENANCES,
)

SCHEMA_VERSION = "1.0"
# The source of the result rows imported from a leaderboard_tasks.json (it states no provenance).
LEADERBOARD_SOURCE = "leaderboard"
# Official metric name -> result column.
METRIC_COLUMNS: dict[str, str] = {"MCC": "mcc", "Acc": "acc", "F1": "f1_macro"}
RANGES: dict[str, tuple[float, float]] = {"MCC": (-1.0, 1.0), "Acc": (0.0, 1.0), "F1": (0.0, 1.0)}
RANGE_TOLERANCE = 1e-6
_SHOWN = 5  # ids listed in a missing/unknown-ids problem before "... (N in all)"
INT64_MAX = (1 << 63) - 1  # parameter counts are stored in Int64 catalog columns


@dataclass(frozen=True)
class Submission:
    """A valid submission: seed-mean scores per regime and task, official metric names."""

    path: Path
    model_id: str
    harness_version: str
    meta: dict
    results: dict[str, dict[str, dict[str, float]]]

    @property
    def provenance(self) -> str:
        return self.meta.get("provenance", DEFAULT_PROVENANCE)


@dataclass(frozen=True)
class Leaderboard:
    """A valid leaderboard: one row per (model, regime, metric), `leaderboard_schema()` columns."""

    path: Path
    frame: pl.DataFrame


@dataclass(frozen=True)
class LeaderboardTasks:
    """A valid leaderboard_tasks.json: each model's row as a submission (display, params, the
    per-task scores of every regime) with no harness version and the provenance
    `leaderboard_provenance` gives; its micro and macro are checked, not kept (they follow from
    the per-task scores)."""

    path: Path
    models: tuple[Submission, ...]


@dataclass(frozen=True)
class Problem:
    """One rule a file breaks: the file, the field (a dotted path into the document, or
    `(file)` / `(top level)`) and the rule, with what was found."""

    file: Path
    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.rule}"


def leaderboard_schema() -> dict[str, pl.DataType]:
    return {"model": pl.String, "display": pl.String, "params": pl.Int64,
            "provenance": pl.String, "regime": pl.String, "metric": pl.String,
            "micro": pl.Float64, "macro": pl.Float64,
            **{c: pl.Float64 for c in CATEGORY_ORDER}}


def leaderboard_provenance(model_id: str) -> str:
    """The provenance of a model's row in leaderboard_tasks.json, which states none: 'official'
    for the benchmark authors' curated models (the only ones that may claim it), else the
    official tools' default (`DEFAULT_PROVENANCE`)."""
    return "official" if model_id in official_model_ids() else DEFAULT_PROVENANCE


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _listing(ids: Iterable[str]) -> str:
    ids = sorted(ids)
    shown = ", ".join(ids[:_SHOWN])
    return shown if len(ids) <= _SHOWN else f"{shown}, ... ({len(ids)} in all)"


class _Problems:
    """The problems of one file, in the order found."""

    def __init__(self, path: Path):
        self.path = path
        self.items: list[Problem] = []

    def add(self, field: str, rule: str) -> None:
        self.items.append(Problem(self.path, field, rule))

    def non_empty_string(self, obj: dict, key: str, field: str) -> None:
        value = obj.get(key)
        if key not in obj:
            self.add(field, "required (a non-empty string)")
        elif not isinstance(value, str) or not value.strip():
            self.add(field, f"must be a non-empty string, got {_kind(value)} {value!r}")

    def count(self, value, field: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.add(field, f"must be an integer >= 0 (a parameter count), "
                            f"got {_kind(value)} {value!r}")
        elif value > INT64_MAX:
            self.add(field, f"{value} is too large (a parameter count is below 2^63)")

    def model_id(self, value, field: str) -> bool:
        """A non-empty string that the one id rule (`store.vocab.ids`) accepts."""
        if not isinstance(value, str) or not value.strip():
            return False        # reported by non_empty_string
        problem = id_problem("model", value)
        if problem is not None:
            self.add(field, f"{value!r} cannot be used as a model id ({problem}); {ID_RULE}")
        return problem is None

    def score(self, value, metric: str, field: str) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(field, f"must be a number, got {_kind(value)} {value!r}")
            return False
        try:
            finite = math.isfinite(float(value))
        except OverflowError:
            finite = False
        if not finite:
            self.add(field, f"must be a finite number, got {value!r}")
            return False
        lo, hi = RANGES[metric]
        if not lo - RANGE_TOLERANCE <= value <= hi + RANGE_TOLERANCE:
            self.add(field, f"{value!r} out of range [{lo:g}, {hi:g}] (tolerance 1e-6)")
            return False
        return True

    def key_set(self, got: Iterable[str], expected: Iterable[str], field: str, what: str) -> None:
        got, expected = set(got), set(expected)
        if missing := expected - got:
            self.add(field, f"missing {len(missing)} {what}: {_listing(missing)}")
        if unknown := got - expected:
            self.add(field, f"{len(unknown)} unknown {what}: {_listing(unknown)}")


_TOO_DEEP = ("not readable: arrays or objects nested too deeply (a submission nests 4 levels, "
             "a leaderboard 5)")


def _load_json(path: Path, problems: _Problems):
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add("(file)", f"cannot be read ({exc})")
        return None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add("(file)", f"not valid JSON ({exc.msg} at line {exc.lineno} "
                               f"column {exc.colno})")
        return None
    except RecursionError:
        problems.add("(file)", _TOO_DEEP)
        return None
    if not isinstance(doc, dict):
        problems.add("(top level)", f"must be a JSON object, got {_kind(doc)}")
        return None
    return doc


def _check_meta(meta: dict, model_id: str | None, p: _Problems) -> None:
    p.non_empty_string(meta, "display", "meta.display")
    p.count(meta.get("params"), "meta.params")
    provenance = meta.get("provenance", DEFAULT_PROVENANCE)
    if provenance not in SUBMISSION_PROVENANCES:
        p.add("meta.provenance", f"must be one of {', '.join(SUBMISSION_PROVENANCES)}, "
                                 f"got {_kind(provenance)} {provenance!r}")
    elif provenance == "official" and model_id and model_id not in official_model_ids():
        p.add("meta.provenance", "'official' is reserved for the benchmark authors' 40 curated "
                                 f"models; an external submission uses {DEFAULT_PROVENANCE!r}")
    if not isinstance(meta.get("zero_shot", False), bool):
        p.add("meta.zero_shot", f"must be true or false, got {_kind(meta['zero_shot'])}")


def _check_submission(path: Path, doc: dict, p: _Problems) -> Submission | None:
    if doc.get("schema_version") != SCHEMA_VERSION:
        p.add("schema_version", f"must be {SCHEMA_VERSION!r} (the schema this tool reads), "
                                f"got {doc.get('schema_version')!r}")
    p.non_empty_string(doc, "model_id", "model_id")
    model_id = doc.get("model_id")
    named = p.model_id(model_id, "model_id")
    if named and path.name != f"{safe_name(model_id)}.json":
        p.add("model_id", f"the file name must be the model id with characters outside "
                          f"A-Za-z0-9._- replaced by _, plus .json: expected "
                          f"{safe_name(model_id)}.json, got {path.name}")
    p.non_empty_string(doc, "harness_version", "harness_version")

    meta = doc.get("meta")
    if isinstance(meta, dict):
        _check_meta(meta, model_id if named else None, p)
    else:
        p.add("meta", f"must be an object with display, params and provenance, "
                      f"got {_kind(meta)}")

    results = doc.get("results")
    if not isinstance(results, dict):
        p.add("results", f"must be an object with the regimes {', '.join(REGIMES)}, "
                         f"got {_kind(results)}")
        return None
    p.key_set(results, REGIMES, "results", "regime(s)")
    task_ids = [t.task_id for t in geneb_v1_tasks()]
    for regime in REGIMES:
        per_task = results.get(regime)
        if regime not in results:
            continue
        if not isinstance(per_task, dict):
            p.add(f"results.{regime}", f"must be an object mapping task ids to scores, "
                                       f"got {_kind(per_task)}")
            continue
        p.key_set(per_task, task_ids, f"results.{regime}", "task id(s) of the geneb-v1 spec")
        for task, scores in per_task.items():
            field = f"results.{regime}.{task}"
            if not isinstance(scores, dict):
                p.add(field, f"must be an object with {', '.join(METRIC_COLUMNS)}, "
                             f"got {_kind(scores)}")
                continue
            for metric in METRIC_COLUMNS:
                if metric not in scores:
                    p.add(f"{field}.{metric}", "missing (every task needs MCC, Acc and F1)")
                else:
                    p.score(scores[metric], metric, f"{field}.{metric}")
    if p.items:
        return None
    return Submission(path, model_id, doc["harness_version"], meta,
                      {r: results[r] for r in REGIMES})


def _board_data(doc: dict, p: _Problems) -> dict | None:
    """A leaderboard's `data`: an object of regimes, each an array of model rows."""
    data = doc.get("data")
    if not isinstance(data, dict):
        p.add("data", f"must be an object with the regimes {', '.join(REGIMES)}, "
                      f"got {_kind(data)}")
        return None
    p.key_set(data, REGIMES, "data", "regime(s)")
    return data


def _board_rows(data: dict, p: _Problems):
    """The model rows of a leaderboard's `data`, checked for what the rows of both leaderboard
    files hold: a model id once per regime, the display name, the parameter count. Yields
    (regime, field, model, named, display, row); `field` names the row by its model id when that
    is a valid one (`named`)."""
    for regime in REGIMES:
        entries = data.get(regime)
        if regime not in data:
            continue
        if not isinstance(entries, list):
            p.add(f"data.{regime}", f"must be an array of model rows, got {_kind(entries)}")
            continue
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            field = f"data.{regime}[{i}]"
            if not isinstance(entry, dict):
                p.add(field, f"must be an object, got {_kind(entry)}")
                continue
            p.non_empty_string(entry, "model", f"{field}.model")
            model = entry.get("model")
            named = p.model_id(model, f"{field}.model")
            if named:
                if model in seen:
                    p.add(f"{field}.model", f"{model!r} appears twice in the regime")
                seen.add(model)
                field = f"data.{regime}.{model}"
            display = entry.get("disp", model)
            if not isinstance(display, str):
                p.add(f"{field}.disp", f"must be a string, got {_kind(display)}")
            p.count(entry.get("params"), f"{field}.params")
            yield regime, field, model, named, display, entry


def _scopes(entry: dict, metric: str, field: str, p: _Problems) -> dict[str, float]:
    """A row's valid `micro_<metric>` and `macro_<metric>`, by scope."""
    out = {}
    for scope in ("micro", "macro"):
        key = f"{scope}_{metric}"
        if key not in entry:
            p.add(f"{field}.{key}", "missing")
        elif p.score(entry[key], metric, f"{field}.{key}"):
            out[scope] = entry[key]
    return out


def _check_leaderboard(path: Path, doc: dict, p: _Problems) -> Leaderboard | None:
    data = _board_data(doc, p)
    if data is None:
        return None
    rows = []
    for regime, field, model, _, display, entry in _board_rows(data, p):
        provenance = entry.get("submitted")
        if provenance not in SUBMISSION_PROVENANCES:
            p.add(f"{field}.submitted", f"must be one of {', '.join(SUBMISSION_PROVENANCES)},"
                                        f" got {_kind(provenance)} {provenance!r}")
        for metric, column in METRIC_COLUMNS.items():
            row = {"model": model, "display": display, "params": entry.get("params"),
                   "provenance": provenance, "regime": regime, "metric": column,
                   **_scopes(entry, metric, field, p)}
            cats = entry.get(f"cat_{metric}")
            if not isinstance(cats, dict):
                p.add(f"{field}.cat_{metric}", f"must be an object with the 13 category "
                                               f"scores, got {_kind(cats)}")
                continue
            p.key_set(cats, CATEGORY_ORDER, f"{field}.cat_{metric}", "category(ies)")
            for cat in CATEGORY_ORDER:
                if cat in cats and p.score(cats[cat], metric, f"{field}.cat_{metric}.{cat}"):
                    row[cat] = cats[cat]
            rows.append(row)
    if p.items:
        return None
    return Leaderboard(path, pl.DataFrame(rows, schema=leaderboard_schema()))


def _check_task_list(tasks, spec: dict[str, TaskMeta], p: _Problems) -> None:
    """leaderboard_tasks.json's `tasks`: every geneb-v1 task once, as {id, label, cat} with the
    task's category."""
    if not isinstance(tasks, list):
        p.add("tasks", f"must be an array of {{id, label, cat}} objects (the geneb-v1 tasks), "
                       f"got {_kind(tasks)}")
        return
    seen: set[str] = set()
    for i, entry in enumerate(tasks):
        field = f"tasks[{i}]"
        if not isinstance(entry, dict):
            p.add(field, f"must be an object with id, label and cat, got {_kind(entry)}")
            continue
        task_id = entry.get("id")
        if not isinstance(task_id, str):
            p.add(f"{field}.id", f"must be a task id (a string), got {_kind(task_id)} "
                                 f"{task_id!r}")
            continue
        if task_id in seen:
            p.add(f"{field}.id", f"{task_id!r} appears twice")
            continue
        seen.add(task_id)
        if task_id not in spec:
            continue                    # reported with the other unknown ids below
        field = f"tasks.{task_id}"
        p.non_empty_string(entry, "label", f"{field}.label")
        category = entry.get("cat")
        if category != spec[task_id].category:
            p.add(f"{field}.cat", f"must be {spec[task_id].category!r} (the task's geneb-v1 "
                                  f"category), got {_kind(category)} {category!r}")
    p.key_set(seen, spec, "tasks", "task id(s) of the geneb-v1 spec")


def _check_leaderboard_tasks(path: Path, doc: dict, p: _Problems) -> LeaderboardTasks | None:
    spec = {t.task_id: t for t in geneb_v1_tasks()}
    _check_task_list(doc.get("tasks"), spec, p)
    data = _board_data(doc, p)
    if data is None:
        return None
    # model -> regime -> (field, display, params, {task: {metric: score}})
    rows: dict[str, dict[str, tuple]] = {}
    for regime, field, model, named, display, entry in _board_rows(data, p):
        scores: dict[str, dict[str, float]] = {}
        for metric in METRIC_COLUMNS:
            _scopes(entry, metric, field, p)
            key = f"task_{metric}"
            per_task = entry.get(key)
            if not isinstance(per_task, dict):
                p.add(f"{field}.{key}", f"must be an object with the {len(spec)} task scores, "
                                        f"got {_kind(per_task)}")
                continue
            p.key_set(per_task, spec, f"{field}.{key}", "task id(s) of the geneb-v1 spec")
            for task, value in per_task.items():
                if p.score(value, metric, f"{field}.{key}.{task}"):
                    scores.setdefault(task, {})[metric] = value
        if named:
            rows.setdefault(model, {})[regime] = (field, display, entry.get("params"), scores)
    if p.items:
        return None
    # Across regimes, once every row is valid on its own: the same models, one display name
    # and one parameter count each.
    for regime in REGIMES:
        p.key_set((m for m, by in rows.items() if regime in by), rows, f"data.{regime}",
                  "model(s) of the other regimes")
    for by in rows.values():
        (_, first_display, first_params, _), *others = by.values()
        first = next(iter(by))
        for field, display, params, _ in others:
            if display != first_display:
                p.add(f"{field}.disp", f"{display!r} differs from data.{first}'s "
                                       f"{first_display!r} (one display name per model)")
            if params != first_params:
                p.add(f"{field}.params", f"{params!r} differs from data.{first}'s "
                                         f"{first_params!r} (one parameter count per model)")
    if p.items:
        return None
    return LeaderboardTasks(path, tuple(
        Submission(path, model, "", {"display": by["full"][1], "params": by["full"][2],
                                     "provenance": leaderboard_provenance(model)},
                   {regime: by[regime][3] for regime in REGIMES})
        for model, by in rows.items()))


def read_official_file(path: Path) -> tuple[Submission | Leaderboard | LeaderboardTasks | None,
                                            list[Problem]]:
    """One file and its problems (none when it is valid), told apart by its content: `data`
    without `results` or `model_id` is a leaderboard, with a `tasks` list leaderboard_tasks.json;
    anything else is read as a submission."""
    problems = _Problems(path)
    doc = _load_json(path, problems)
    if doc is None:
        return None, problems.items
    try:
        if "data" in doc and "results" not in doc and "model_id" not in doc:
            check = _check_leaderboard_tasks if "tasks" in doc else _check_leaderboard
            return check(path, doc, problems), problems.items
        return _check_submission(path, doc, problems), problems.items
    except RecursionError:      # a value nested just shallow enough to parse
        return None, [Problem(path, "(file)", _TOO_DEEP)]


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; a folder stands for the `*.json` files directly inside it but hidden
    ones (a name starting with ".": the record of an output folder, `.geneb-output.json`;
    macOS's `._` copies)."""
    out: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if not p.name.startswith("."))
            if not found:
                raise GenebError(f"{path}: no *.json files in this folder")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise GenebError(f"{path}: no such file or folder")
    unique = {p.resolve(): p for p in out}
    return list(unique.values())


def read_official_files(paths: Iterable[str | Path]
                        ) -> list[Submission | Leaderboard | LeaderboardTasks]:
    """Validate every file first (`read_official_file`), then what importing them together
    needs: one file per (model id, provenance) and at most one leaderboard file of each kind.
    Raise one `GenebError` listing all problems of all files."""
    problems: list[str] = []
    docs: list[Submission | Leaderboard | LeaderboardTasks] = []
    owners: dict[tuple[str, str], Path] = {}
    for path in expand_paths(paths):
        doc, found = read_official_file(path)
        problems += map(str, found)
        if isinstance(doc, Submission):
            owner = owners.setdefault((doc.model_id, doc.provenance), path)
            if owner != path:
                problems.append(str(Problem(
                    path, "model_id", f"{doc.model_id!r} with provenance {doc.provenance!r} is "
                                      f"also in {owner}; import one of them")))
        if doc is not None:
            docs.append(doc)
    for kind, name in ((Leaderboard, "leaderboard.json"),
                       (LeaderboardTasks, "leaderboard_tasks.json")):
        if sum(isinstance(d, kind) for d in docs) > 1:
            problems.append(f"leaderboard files: more than one given; import one {name}")
    if len(problems) == 1:
        raise GenebError(f"{problems[0]}; nothing imported")
    if problems:
        raise GenebError(f"{len(problems)} problem(s), nothing imported:\n  "
                         + "\n  ".join(problems))
    return docs


def submission_document(model_id: str, harness_version: str, meta: dict,
                        results: dict[str, dict[str, dict[str, float]]]) -> dict:
    """A schema-1.0 submission as the official tools write it (regimes, then tasks in order)."""
    return {"schema_version": SCHEMA_VERSION, "model_id": model_id,
            "harness_version": harness_version, "meta": meta, "results": results}
