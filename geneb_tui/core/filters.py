"""The current selection of the dashboard as plain, hashable data."""

from __future__ import annotations

from dataclasses import dataclass, replace

from store.catalog import params_text, parse_params
from store.domains import IN, OUT, UNKNOWN
from store.vocab.ids import safe_name
from store.vocab.kinds import CLASSIFICATION, PRIMARY, TaskKind
from store.vocab.suites import DEFAULT as DEFAULT_SUITE

# Each metric column's short name in the table's status line and headings (every kind's:
# `store.vocab.kinds.METRICS_OF`)
METRIC_LABELS: dict[str, str] = {"mcc": "MCC", "acc": "Acc", "f1_macro": "F1",
                                 "pearson": "Pearson r", "spearman": "Spearman ρ", "r2": "R²",
                                 "auroc": "AUROC", "auprc": "AUPRC"}
SCALE_BANDS: tuple[str, ...] = ("<100M", "100M-1B", ">1B", "custom")
# The domain filter's choices (`store.domains.DOMAINS`), as the dialog and the status line say
DOMAIN_LABELS: dict[str, str] = {IN: "in-domain cells only", OUT: "out-of-domain cells only",
                                 UNKNOWN: "cells of unknown domain only"}


def parse_bounds(lo_text: str, hi_text: str) -> tuple[int | None, int | None]:
    """The custom scale range of the filter dialog; ValueError with a message that names the
    bad field (never a bound silently dropped)."""
    out = []
    for name, text in (("Params from", lo_text), ("Params to", hi_text)):
        try:
            out.append(parse_params(text))
        except ValueError:
            raise ValueError(f"{name}: {text.strip()!r} is not a parameter count; give a "
                             "number such as 50M, 1.5B or 250000000") from None
    lo, hi = out
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"Params from ({params_text(lo)}) is above Params to "
                         f"({params_text(hi)}); swap them")
    return lo, hi


@dataclass(frozen=True)
class Filters:
    """What the main table shows. Every field combines with every other (AND)."""

    suite: str = DEFAULT_SUITE
    category: str | None = None          # None: macro, micro and the categories; else its tasks
    regime: str = "full"
    metric: str = "mcc"
    architecture_family: str | None = None
    scale_band: str | None = None        # one of SCALE_BANDS
    params_min: int | None = None        # with scale_band == "custom" (inclusive)
    params_max: int | None = None
    pretraining_data: str | None = None
    source: str | None = None            # official / verified / self-reported / local ...
    search: str = ""                     # case-insensitive substring of model id or display
    domain: str | None = None            # only the cells of pairs of this domain (in, out,
    #                                      unknown: `store.analyses.domains.keep_domain`)
    exclude_flagged: bool = False        # leave out the tasks their audit flags
    kind: str = str(CLASSIFICATION)      # the task kind shown (`store.vocab.kinds`): its
    #                                      results only, `metric` one of its metrics

    def cleared(self) -> Filters:
        """Back to the defaults, keeping the suite and the task kind (which store slice we
        look at), with the kind's primary metric."""
        return Filters(suite=self.suite, kind=self.kind, metric=PRIMARY[TaskKind(self.kind)])

    def with_(self, **changes) -> Filters:
        return replace(self, **changes)

    @property
    def is_default(self) -> bool:
        return self == self.cleared()

    def without_model_filters(self) -> Filters:
        """The same slice of the store (suite, category, regime, metric, the domain of the
        cells) with every model and source filter off: what ranks "among all entries in the
        store" are taken over."""
        return Filters(suite=self.suite, category=self.category, regime=self.regime,
                       metric=self.metric, domain=self.domain,
                       exclude_flagged=self.exclude_flagged, kind=self.kind)

    @property
    def filters_models(self) -> bool:
        return self != self.without_model_filters()

    def describe(self) -> str:
        """A one-line summary of the selection, always shown above the table."""
        parts = [
            *([f"{self.kind} tasks"] if self.kind != CLASSIFICATION else []),
            f"suite {self.suite}",
            f"regime {self.regime}",
            f"metric {METRIC_LABELS.get(self.metric, self.metric)}",
            f"category {self.category}" if self.category else "all categories",
            *([f"{DOMAIN_LABELS[self.domain]} (other cells blank)"] if self.domain else []),
            *(["flagged tasks left out"] if self.exclude_flagged else []),
        ]
        model = self.describe_model_filters()
        return " · ".join(parts + ([model] if model else []))

    def export_name(self) -> str:
        """The default file name of the selection's CSV export: suite, regime, metric and
        category (when one is shown), each a safe file name (`store.vocab.ids.safe_name`; a suite
        run from a folder goes by the folder's name), after a `geneb-` the suite name does not
        already start with (`geneb-mini-full-mcc.csv`, `geneb-my_suite-full-mcc.csv`)."""
        suite = safe_name(self.suite)
        parts = [suite if suite.startswith("geneb") else f"geneb-{suite}", self.regime,
                 self.metric]
        if self.category:
            parts.append(safe_name(self.category))
        return "-".join(parts) + ".csv"

    def describe_model_filters(self) -> str:
        """The active model and source filters ('' when none)."""
        parts = []
        if self.architecture_family:
            parts.append(f"arch {self.architecture_family}")
        if self.scale_band == "custom":
            lo = params_text(self.params_min) if self.params_min else "0"
            hi = params_text(self.params_max) if self.params_max else "∞"
            parts.append(f"params {lo}–{hi}")
        elif self.scale_band:
            parts.append(f"params {self.scale_band}")
        if self.pretraining_data:
            parts.append(f"pretraining {self.pretraining_data}")
        if self.source:
            parts.append(f"source {self.source}")
        if self.search:
            parts.append(f"search “{self.search}”")
        return " · ".join(parts)

    def model_matches(self, model: dict) -> bool:
        """Does one model (a row of the models catalog) pass the model filters?"""
        arch = self.architecture_family
        if arch and model.get("architecture_family") != arch:
            return False
        if self.pretraining_data and model.get("pretraining_data") != self.pretraining_data:
            return False
        params = model.get("params") or 0
        if self.scale_band == "custom":
            if self.params_min is not None and params < self.params_min:
                return False
            if self.params_max is not None and params > self.params_max:
                return False
        elif self.scale_band and model.get("scale_band") != self.scale_band:
            return False
        if self.search:
            s = self.search.lower()
            if s not in str(model.get("model_id", "")).lower() and s not in str(
                model.get("display", "")
            ).lower():
                return False
        return True
