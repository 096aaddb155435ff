"""The filter dialog: every filter in one place; returns the new `Filters` (or None).

The app keeps one dialog per set of choices and shows it again (`FilterScreen.reopen`): composing
and styling its ~100 widgets (9 drop-downs) is most of a first opening (~220 ms on the official
store, `bench/tui_startup.py`); shown again, with only its values set, it opens in ~70 ms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from geneb_tui.actions import FILTER_KEYS, bindings
from geneb_tui.components.once import dismiss_once, rearm
from geneb_tui.components.typed_input import TypedInput
from geneb_tui.core.filters import (
    DOMAIN_LABELS,
    METRIC_LABELS,
    SCALE_BANDS,
    Filters,
    parse_bounds,
)
from store.catalog import params_text
from store.vocab.kinds import PRIMARY, TaskKind
from store.vocab.protocol import REGIMES

if TYPE_CHECKING:
    from geneb_tui.core.query import FilterChoices


def _options(ch: FilterChoices) -> dict[str, tuple[tuple, dict, bool]]:
    """Each drop-down's (values, labels, blank allowed), by id (a `Filters` field)."""
    return {
        "suite": (ch.suites, {}, False),
        "category": (ch.categories, {}, True),
        "regime": (REGIMES, {}, False),
        "metric": (ch.metrics, METRIC_LABELS, False),   # the kind shown's (`k` switches)
        "architecture_family": (ch.architecture_families, {}, True),
        "scale_band": (SCALE_BANDS, {}, True),
        "pretraining_data": (ch.pretraining_data, {}, True),
        "source": (ch.sources, {}, True),
        "domain": (tuple(DOMAIN_LABELS), DOMAIN_LABELS, True),
        "exclude_flagged": ((False, True), {False: "all", True: "leave out flagged"}, False),
    }


def _values(filters: Filters, ch: FilterChoices) -> dict[str, object]:
    """What each widget shows for `filters`, by id: a drop-down's value (a value it does not
    offer: blank, or its first value where blank is not allowed), a text field's text."""
    shown: dict[str, object] = {}
    for id_, (values, _, blank) in _options(ch).items():
        current = getattr(filters, id_)
        shown[id_] = current if current in values else Select.NULL if blank else values[0]
    shown["params_min"] = params_text(filters.params_min) if filters.params_min else ""
    shown["params_max"] = params_text(filters.params_max) if filters.params_max else ""
    shown["search"] = filters.search
    return shown


def _select(id_: str, options: tuple[tuple, dict, bool], value) -> Select:
    values, labels, blank = options
    return Select([(labels.get(v, v), v) for v in values], id=id_, compact=True,
                  allow_blank=blank, prompt="any", value=value)


@dismiss_once
class FilterScreen(ModalScreen[Filters | None]):
    BINDINGS = bindings(FILTER_KEYS)

    def __init__(self, filters: Filters, choices: FilterChoices) -> None:
        super().__init__()
        self.filters = filters
        self.choices = choices

    def compose(self) -> ComposeResult:
        options, shown = _options(self.choices), _values(self.filters, self.choices)

        def select(id_: str) -> Select:
            return _select(id_, options[id_], shown[id_])

        with Vertical(id="filter-dialog", classes="dialog"):
            yield Label("[b]Filters[/b] — all combine; Enter/Ctrl+S applies, Esc cancels")
            with Grid(id="filter-grid"):
                yield Label("Suite")
                yield select("suite")
                yield Label("Category")
                yield select("category")
                yield Label("Regime")
                yield select("regime")
                yield Label("Metric")
                yield select("metric")
                yield Label("Architecture")
                yield select("architecture_family")
                yield Label("Scale band")
                yield select("scale_band")
                yield Label("Params from")
                yield TypedInput(shown["params_min"], placeholder="custom min, e.g. 50M",
                                 id="params_min", compact=True)
                yield Label("Params to")
                yield TypedInput(shown["params_max"], placeholder="custom max, e.g. 1.5B",
                                 id="params_max", compact=True)
                yield Label("Pretraining")
                yield select("pretraining_data")
                yield Label("Source")
                yield select("source")
                yield Label("Domain")
                yield select("domain")
                yield Label("Model name")
                yield TypedInput(shown["search"], placeholder="substring of id or name",
                                 id="search", compact=True)
                yield Label("Tasks")
                yield select("exclude_flagged")
            yield Label("", id="filter-error")
            with Horizontal(classes="buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Clear", id="clear")
                yield Button("Cancel", id="cancel")

    def reopen(self, filters: Filters) -> None:
        """Show the dialog again (same choices) as a new one for `filters` would open: its
        values, no list open, no error, the focus on the first field, dismissable again. (Not
        mounted yet, e.g. closed in the key burst that opened it: `compose` shows `filters`.)"""
        self.filters = filters
        rearm(self)
        if not self.is_mounted:
            return
        for id_, value in _values(filters, self.choices).items():
            widget = self.query_one(f"#{id_}")
            if isinstance(widget, Select):
                widget.expanded = False
                widget.value = value
            else:
                with widget.prevent(Input.Changed):
                    widget.value = value
                widget.cursor_position = len(value)
        self.query_one("#filter-error", Label).update("")
        self.set_focus(None)   # pushed, the screen focuses its first field

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
        return self.filters.with_(     # the kind shown stays (`k` switches it, not the dialog)
            suite=suite, category=category,
            regime=self._value("regime") or "full",
            metric=self._value("metric") or PRIMARY[TaskKind(self.filters.kind)],
            architecture_family=self._value("architecture_family"),
            scale_band=band,
            params_min=lo if band == "custom" else None,
            params_max=hi if band == "custom" else None,
            pretraining_data=self._value("pretraining_data"),
            source=self._value("source"),
            search=self.query_one("#search", Input).value.strip(),
            domain=self._value("domain"),
            exclude_flagged=bool(self._value("exclude_flagged")),
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
