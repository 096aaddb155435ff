"""Scores by domain: the in-domain flag of each (model, task) cell (`store.domains.domain`,
through a `(model, task) -> flag` callable such as `store.tables.catalogs.pair_domains`), the
cells of one domain (the `--domain` filter of `report`, `status` and `export`, and the
dashboard's), aggregates over such a partial matrix, and per entry the micro score over the
tasks in its model's pretraining domain and over those out of it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl

from store.analyses.aggregates import categories_of, entry_keys
from store.catalog import TaskMeta, geneb_v1_tasks
from store.domains import DOMAIN_WORDS, IN, OUT, UNKNOWN
from store.vocab.errors import GenebError

DomainOf = Callable[[str, str], str]


def domain_flags(frame: pl.DataFrame, domain_of: DomainOf, *, model: str = "model",
                 task: str = "task") -> pl.Series:
    """The `domain` ("in", "out", "unknown") of each row of a frame of (model, task) cells."""
    return pl.Series("domain", [domain_of(m, t) for m, t in
                                zip(frame[model], frame[task], strict=True)], dtype=pl.String)


def keep_domain(frame: pl.DataFrame, domain_of: DomainOf, which: str | None, *,
                model: str = "model", task: str = "task") -> pl.DataFrame:
    """The rows of a frame of (model, task) cells whose pair is in domain `which` (every row
    for None): the one domain filter."""
    if which is None:
        return frame
    return frame.filter(domain_flags(frame, domain_of, model=model, task=task) == which)


def domain_cells(which: str | None, frame: pl.DataFrame, domain_of: DomainOf, *,
                 what: str = "result cells") -> pl.DataFrame:
    """The rows of `frame` (model and task columns) whose pair is of domain `which` (`--domain`;
    `keep_domain`, every row for None); a GenebError naming the domains its rows have when it
    had rows and none is of that one."""
    kept = keep_domain(frame, domain_of, which)
    if kept.is_empty() and not frame.is_empty():
        counts = domain_flags(frame, domain_of).value_counts(sort=True)
        have = ", ".join(f"{d} ({n})" for d, n in counts.iter_rows())
        raise GenebError(f"--domain {which}: none of the {frame.height} {what} of the "
                         f"selection is {DOMAIN_WORDS[which]}; theirs: {have}")
    return kept


def partial_aggregates(scores: pl.DataFrame,
                       tasks: Iterable[TaskMeta] | None = None) -> pl.DataFrame:
    """[model, (source), n_tasks, n_categories, micro, macro, <categories>] over the cells a
    `scores` frame holds of the suite's `tasks` (default geneb-v1's), each entry on its own
    tasks (a matrix a domain filter left partial): micro = the mean of its tasks, a category =
    the mean of its tasks of that category (NULL where it has none), macro = the mean of the
    categories where it has a task; `n_tasks`, `n_categories` count them. Entries in key
    order (no ranking: the entries do not share a task set)."""
    expected = list(tasks if tasks is not None else geneb_v1_tasks())
    categories = categories_of(expected)
    keys = entry_keys(scores)
    cells = scores.drop("category", strict=False).join(
        pl.DataFrame({"task": [t.task_id for t in expected],
                      "category": [t.category for t in expected]},
                     schema={"task": pl.String, "category": pl.String}), on="task")
    per_category = cells.group_by(*keys, "category").agg(pl.col("value").mean())
    schema = {**{k: pl.String for k in keys}, "n_tasks": pl.Int64, "n_categories": pl.Int64,
              "micro": pl.Float64, "macro": pl.Float64, **dict.fromkeys(categories, pl.Float64)}
    if cells.is_empty():
        return pl.DataFrame(schema=schema)
    wide = per_category.pivot(on="category", index=keys, values="value")
    return (cells.group_by(keys)
            .agg(pl.col("value").mean().alias("micro"), pl.len().cast(pl.Int64).alias("n_tasks"))
            .join(per_category.group_by(keys)
                  .agg(pl.col("value").mean().alias("macro"),
                       pl.len().cast(pl.Int64).alias("n_categories")), on=keys)
            .join(wide, on=keys)
            .with_columns(pl.lit(None, dtype=pl.Float64).alias(c)
                          for c in categories if c not in wide.columns)
            .select(*schema).cast(schema).sort(keys))


def domain_split(scores: pl.DataFrame, domain_of: DomainOf) -> pl.DataFrame:
    """[model, (source), in_micro, n_in, out_micro, n_out, n_unknown] from a `scores` frame
    (`store.analyses.scores_of`): `in_micro` the mean over the entry's scored in-domain tasks,
    `out_micro` over its out-of-domain ones (NULL where it has none), `n_unknown` the tasks whose
    domain is unknown (in neither mean); entries in model order."""
    keys = entry_keys(scores)
    flagged = scores.with_columns(domain_flags(scores, domain_of))
    value = pl.col("value")
    return (flagged.group_by(keys)
            .agg(value.filter(pl.col("domain") == IN).mean().alias("in_micro"),
                 (pl.col("domain") == IN).sum().cast(pl.Int64).alias("n_in"),
                 value.filter(pl.col("domain") == OUT).mean().alias("out_micro"),
                 (pl.col("domain") == OUT).sum().cast(pl.Int64).alias("n_out"),
                 (pl.col("domain") == UNKNOWN).sum().cast(pl.Int64).alias("n_unknown"))
            .sort(keys))
