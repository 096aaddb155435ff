"""Per-cell differences between two sets of results: what `geneb-engine compare` reports.

A cell is (model, task, regime, metric); its value is the seed mean of a store's rows
(`store.seedmeans`) or the mean an official submission holds
(`store.official.submission.submission_rows`).
Two sides are compared on the cells both hold: difference = B - A, within the tolerance when
|B - A| <= tol. Cells of one side only are counted, never compared.

`preset_candidates` compares each variant a store holds of a submission's model (its rows at
the current variant, under the model's id, and each entry `<model> [reference@4]`, ...: the
recipe presets and batch sizes that were filled, `store.vocab.variant`) with the submission on
its own, by the same rule: which one reproduces it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from store import seedmeans
from store.db import Source, query
from store.official.formats import Submission
from store.official.submission import submission_rows
from store.vocab.protocol import METRICS, REGIMES
from store.vocab.variant import preset_label

CELL: tuple[str, ...] = ("model", "task", "regime", "metric")

# Metrics lie in [-1, 1]: summing a seed mean in another order moves it by a few 1e-16, while
# one test prediction more or less moves it by about 1 / (5 x test size), above 1e-7 for any
# test set under a million sequences. 1e-12 tells the two apart.
DEFAULT_TOL = 1e-12


def store_cells(source: Source, protocol_hash: str, source_name: str | None = None
                ) -> pl.DataFrame:
    """[source, model, task, regime, metric, value]: the seed means of the store's rows under
    one protocol, of `source_name` or (None) of every source."""
    filters = {"source": [source_name]} if source_name is not None else {}
    return _cells(seedmeans.seed_means(source, protocol_hash=[protocol_hash], **filters))


def submission_cells(subs: Iterable[Submission]) -> pl.DataFrame:
    """The cells of official submissions, as `store_cells` (source = the file's provenance)."""
    return _cells(pl.DataFrame([row for sub in subs for row in submission_rows(sub)]))


def _cells(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (source, cell) of a frame with one column per metric; NULL values left out."""
    return (frame.select("source", "model", "task", "regime", *METRICS)
            .unpivot(on=list(METRICS), index=["source", "model", "task", "regime"],
                     variable_name="metric", value_name="value")
            .drop_nulls("value"))


def mixed_sources(cells: pl.DataFrame) -> dict[str, list[str]]:
    """Model -> its sources, for the models some of whose cells have values of two sources
    (which one to compare is then for the user to say)."""
    mixed = (cells.group_by(*CELL).agg(pl.col("source").unique())
             .filter(pl.col("source").list.len() > 1)
             .explode("source").group_by("model").agg(pl.col("source").unique().sort())
             .sort("model"))
    return dict(zip(mixed["model"], mixed["source"].to_list(), strict=True))


@dataclass(frozen=True)
class Comparison:
    """Two sides' cells compared at tolerance `tol`."""

    tol: float
    compared: int               # cells both sides hold
    differences: pl.DataFrame   # [*CELL, a, b, difference] beyond tol, largest |difference| first
    largest: dict | None        # the compared cell of the largest |difference| (None: none)
    only_a: pl.DataFrame        # [model, cells]: cells only side A holds, per model
    only_b: pl.DataFrame
    compared_models: pl.DataFrame   # [model, cells]: cells both sides hold, per model

    @property
    def agrees(self) -> bool:
        """Some cell compared, and every compared cell within the tolerance."""
        return self.compared > 0 and self.differences.is_empty()

    def reproduced(self, side: str) -> dict[str, str]:
        """The one rule for "a submission is reproduced": model -> "" when the other side
        holds every cell of the model's cells on `side` ("a" or "b", the submissions), each
        within the tolerance; else why not (cells beyond the tolerance, cells the other side
        lacks). Models the other side holds no cell of are left out (nothing was compared)."""
        beyond = dict(self.differences.group_by("model").len().iter_rows())
        lacking = dict((self.only_a if side == "a" else self.only_b).iter_rows())
        out = {}
        for model in sorted(self.compared_models["model"]):
            why = []
            if n := beyond.get(model):
                why.append(f"{n} of its cells beyond {self.tol:g}")
            if n := lacking.get(model):
                why.append(f"{n} of its cells missing from the other side")
            out[model] = " and ".join(why)
        return out


def compare_cells(a: pl.DataFrame, b: pl.DataFrame, tol: float = DEFAULT_TOL) -> Comparison:
    """Compare the cells of two `store_cells` / `submission_cells` frames, each holding one
    value per cell (see `mixed_sources`)."""
    key = list(CELL)
    joined = (a.select(*key, pl.col("value").alias("a"))
              .join(b.select(*key, pl.col("value").alias("b")), on=key, how="full",
                    coalesce=True))
    order = [pl.col("difference").abs(), "model", "task",
             pl.col("regime").replace_strict({r: i for i, r in enumerate(REGIMES)},
                                             default=len(REGIMES), return_dtype=pl.Int64),
             pl.col("metric").replace_strict({m: i for i, m in enumerate(METRICS)},
                                             return_dtype=pl.Int64)]
    both = (joined.filter(pl.col("a").is_not_null() & pl.col("b").is_not_null())
            .with_columns(difference=pl.col("b") - pl.col("a"))
            .sort(order, descending=[True, False, False, False, False]))
    beyond = both.filter(~(pl.col("difference").abs() <= tol))   # NaN is beyond

    def only(present: str, absent: str) -> pl.DataFrame:
        return (joined.filter(pl.col(present).is_not_null() & pl.col(absent).is_null())
                .group_by("model").agg(cells=pl.len()).sort("model"))

    return Comparison(tol=tol, compared=both.height, differences=beyond,
                      largest=both.row(0, named=True) if both.height else None,
                      only_a=only("a", "b"), only_b=only("b", "a"),
                      compared_models=both.group_by("model").agg(cells=pl.len()).sort("model"))


def variant_cells(source: Source, protocol_hash: str, source_name: str | None = None
                  ) -> pl.DataFrame:
    """`store_cells` with `entry` (the model as readers name it: `<model> [<variant>]` at a
    variant other than its current one) and `preset` (its recipe preset's label); `model` is
    the model the entry is a variant of."""
    filters = {"source": [source_name]} if source_name is not None else {}
    means = seedmeans.seed_means(source, protocol_hash=[protocol_hash], **filters)
    bases = dict(query(source, "SELECT entry, model FROM entries").iter_rows())
    labels = {p: preset_label(p) for p in means["recipe_preset"].unique().to_list()}
    return (means.with_columns(
                entry=pl.col("model"),
                model=pl.col("model").replace(bases),
                preset=pl.col("recipe_preset").replace_strict(labels, return_dtype=pl.String))
            .select("source", "model", "entry", "preset", "task", "regime", *METRICS)
            .unpivot(on=list(METRICS), index=["source", "model", "entry", "preset", "task",
                                              "regime"],
                     variable_name="metric", value_name="value")
            .drop_nulls("value"))


@dataclass(frozen=True)
class Candidate:
    """One variant of a store's model compared with a submission of that model."""

    model: str                  # the submission's model
    entry: str                  # the store's entry (the model at one variant)
    preset: str                 # its recipe preset (`store.vocab.variant.preset_label`)
    comparison: Comparison      # store (A) against the submission (B)

    @property
    def why_not(self) -> str:
        """"" when this variant reproduces the submission (`Comparison.reproduced`), else why
        not."""
        return self.comparison.reproduced("b").get(self.model, "no cell in common")


def preset_candidates(store: pl.DataFrame, submissions: pl.DataFrame,
                      tol: float = DEFAULT_TOL) -> list[Candidate]:
    """Each variant (`variant_cells`) of each submission model (`submission_cells`) compared
    with the submission, by model, then the current variant first, then by entry."""
    out = []
    models = set(submissions["model"])
    keys = (store.filter(pl.col("model").is_in(models)).select("model", "entry", "preset")
            .unique().sort("model", pl.col("entry") != pl.col("model"), "entry"))
    for model, entry, preset in keys.iter_rows():
        side = store.filter(pl.col("entry") == entry).drop("entry", "preset")
        out.append(Candidate(model, entry, preset, compare_cells(
            side, submissions.filter(pl.col("model") == model), tol)))
    return out
