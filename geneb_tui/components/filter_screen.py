"""The filter dialog: every filter in one place; returns the new `Filters` (or None)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from geneb_tui.actions import FILTER_KEYS, bindings
from geneb_tui.components.once import dismiss_once
from geneb_tui.core.filters import (
    METRIC_LABELS,
    SCALE_BANDS,
    Filters,
    format_params,
    parse_bounds,
)
from store.protocol import REGIMES

if TYPE_CHECKING:
    from geneb_tui.core.query import FilterChoices


def _select(id_: str, values, current, labels=None, blank=True) -> Select:
    labels = labels or {}
    return Select([(labels.get(v, v), v) for v in values], id=id_, compact=True,
                  allow_blank=blank, prompt="any",
                  value=current if current in values else Select.NULL)


@dismiss_once
class FilterScreen(ModalScreen[Filters | None]):
    BINDINGS = bindings(FILTER_KEYS)

    def __init__(self, filters: Filters, choices: FilterChoices) -> None:
        super().__init__()
        self.filters = filters
        self.choices = choices

    def compose(self) -> ComposeResult:
        f, ch = self.filters, self.choices
        with Vertical(id="filter-dialog", classes="dialog"):
            yield Label("[b]Filters[/b] — all combine; Enter/Ctrl+S applies, Esc cancels")
            with Grid(id="filter-grid"):
                yield Label("Suite")
                yield _select("suite", ch.suites, f.suite, blank=False)
                yield Label("Category")
                yield _select("category", ch.categories, f.category)
                yield Label("Regime")
                yield _select("regime", REGIMES, f.regime, blank=False)
                yield Label("Metric")
                yield _select("metric", tuple(METRIC_LABELS), f.metric, METRIC_LABELS,
                              blank=False)
                yield Label("Architecture")
                yield _select("architecture_family", ch.architecture_families,
                              f.architecture_family)
                yield Label("Scale band")
                yield _select("scale_band", SCALE_BANDS, f.scale_band)
                yield Label("Params from")
                yield Input(format_params(f.params_min) if f.params_min else "",
                            placeholder="custom min, e.g. 50M", id="params_min", compact=True)
                yield Label("Params to")
                yield Input(format_params(f.params_max) if f.params_max else "",
                            placeholder="custom max, e.g. 1.5B", id="params_max", compact=True)
                yield Label("Pretraining")
                yield _select("pretraining_data", ch.pretraining_data, f.pretraining_data)
                yield Label("Source")
                yield _select("source", ch.sources, f.source)
                yield Label("Model name")
                yield Input(f.search, placeholder="substring of id or name", id="search",
                            compact=True)
            yield Label("", id="filter-error")
            with Horizontal(classes="buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Clear", id="clear")
                yield Button("Cancel", id="cancel")

    def _value(self, id_: str):
        v = self.query_one(f"#{id_}", Select).value
        return None if v in (Select.NULL, Select.BLANK) else v

    def collect(self) -> Filters:
        """The dialog's state as `Filters`; ValueError (with the message to show) for a bound
        that is not a parameter count, a range upside down, or bounds with a fixed band."""
        lo, hi = parse_bounds(self.query_one("#params_min", Input).value,
                              self.query_one("#params_max", Input).value)
        band = self._value("scale_band")
        if (lo is not None or hi is not None) and band is None:
            band = "custom"
        if (lo is not None or hi is not None) and band != "custom":
            raise ValueError(f"Scale band {band} has fixed bounds: clear Params from/to, or "
                             "choose the band 'custom'")
        if band == "custom" and lo is None and hi is None:
            band = None   # a custom band without bounds is no filter
        suite = self._value("suite") or self.filters.suite
        category = self._value("category")
        if suite != self.filters.suite:
            category = None
        return Filters(
            suite=suite, category=category,
            regime=self._value("regime") or "full", metric=self._value("metric") or "mcc",
            architecture_family=self._value("architecture_family"),
            scale_band=band,
            params_min=lo if band == "custom" else None,
            params_max=hi if band == "custom" else None,
            pretraining_data=self._value("pretraining_data"),
            source=self._value("source"),
            search=self.query_one("#search", Input).value.strip(),
        )

    def action_apply(self) -> None:
        try:
            filters = self.collect()
        except ValueError as exc:
            self.query_one("#filter-error", Label).update(escape(str(exc)))
            self.app.bell()
            return
        self.dismiss(filters)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#apply")
    def _apply(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#clear")
    def _clear(self) -> None:
        self.dismiss(self.filters.cleared())

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
