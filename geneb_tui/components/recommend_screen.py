"""The Recommend view (`w`): which models to try for a scope, a regime or label budget and
constraints, and which differences are real: `geneb-engine recommend` in the dashboard.

A form (the scope's category, the regime, labels per class, max parameters, memory in GB and
its dtype, runnable here, in-domain, not zero-shot) starts from the main view's selection and
follows it (`geneb_tui.core.recommend`: `seeded`, `followed`); the answer is
`store.analyses.recommend.recommend`'s, computed in a worker and cached per question
(`view_cache.recommend_view`): the leader and its tie group, the tie rule, the notes, the
neighbouring regimes, the command that runs the picks here, and the excluded models with
their reasons and P. `e` exports the answer as CSV.
"""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Checkbox, Header, Input, Label, Select, Static

from geneb_tui.actions import RECOMMEND_KEYS, bindings
from geneb_tui.components.export_screen import ExportScreen
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.removed import unless_removed
from geneb_tui.components.selection_screen import SelectionScreen
from geneb_tui.components.typed_input import TypedInput
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import Failed
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.core.recommend import (
    Form,
    Refused,
    after_lines,
    answer_lines,
    csv_rows,
    excluded_table,
    export_name,
    followed,
    parse_field,
    picks_table,
    question_line,
    seeded,
)
from geneb_tui.messages import ComparisonReady
from store.analyses.recommend import Answer
from store.catalog import params_text
from store.vocab.encoder_kinds import DTYPES
from store.vocab.protocol import REGIMES

TYPING_S = 0.5   # a pause in a text field before its value is asked (Enter: at once)
TEXT_FIELDS = ("labels", "max_params", "memory_gb")
CHECKS = {"runnable_here": "Runnable here", "in_domain": "In-domain",
          "not_zero_shot": "Not zero-shot", "commercial": "Commercial use"}


def _shown(name: str, value) -> str:
    """A text field's text for the form's value."""
    if value is None:
        return ""
    return params_text(value) if name == "max_params" else f"{value:g}"


@dismiss_once
class RecommendScreen(SelectionScreen):
    VIEW = "recommend"
    BINDINGS = bindings(RECOMMEND_KEYS)

    def __init__(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        super().__init__(snapshot, filters)
        self.form: Form = seeded(filters)
        self.shown: Answer | None = None     # the answer on screen
        self._token = 0
        self._typing: Timer | None = None
        self._suite: str | None = None       # the suite whose categories the form offers
        self._categories: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="recommend-form"):
            with Horizontal(classes="form-row"):
                yield Label("Category")
                yield Select([], id="rec-category", prompt="every category", compact=True)
                yield Label("Regime")
                yield Select([(r, r) for r in REGIMES], id="rec-regime", allow_blank=False,
                             value=self.form.regime, compact=True)
                yield Label("Labels/class")
                yield TypedInput(id="rec-labels", placeholder="e.g. 10", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("Max params")
                yield TypedInput(id="rec-max_params", placeholder="e.g. 100M", compact=True)
                yield Label("Memory GB")
                yield TypedInput(id="rec-memory_gb", placeholder="e.g. 24", compact=True)
                yield Label("at")
                yield Select([(d, d) for d in DTYPES], id="rec-dtype", allow_blank=False,
                             value=self.form.dtype, compact=True)
            with Horizontal(classes="form-row"):
                for name, title in CHECKS.items():
                    yield Checkbox(title, id=f"rec-{name}", compact=True)
        yield Static("", id="recommend-question", classes="view-note")
        yield Static("computing…", id="recommend-answer")
        yield ViewTable(id="recommend-picks", classes="view-table")
        with VerticalScroll(id="recommend-after-scroll"):
            yield Static("", id="recommend-after", classes="view-note")
        yield Static("", id="recommend-excluded-note", classes="view-note")
        yield ViewTable(id="recommend-excluded", classes="view-table")
        yield KeysFooter()

    # -- the form ----------------------------------------------------------------------------
    def selection_changed(self, old: Filters, new: Filters) -> None:
        self.form = followed(self.form, old, new)

    def _show_form(self) -> None:
        """The widgets as the form holds it (their Changed messages then change nothing)."""
        category = self.query_one("#rec-category", Select)
        if self._suite != self.filters.suite:
            self._suite = self.filters.suite
            self._categories = self.snapshot.categories(self._suite)
            category.set_options([(c, c) for c in self._categories])
        category.value = (self.form.category if self.form.category in self._categories
                          else Select.NULL)
        self.query_one("#rec-regime", Select).value = self.form.asked_regime
        self.query_one("#rec-dtype", Select).value = self.form.dtype
        for name in TEXT_FIELDS:
            field = self.query_one(f"#rec-{name}", Input)
            try:
                current = parse_field(name, field.value)
            except ValueError:
                current = None
            if current != getattr(self.form, name):   # never rewrite what the user types
                with field.prevent(Input.Changed):
                    field.value = _shown(name, getattr(self.form, name))
        for name in CHECKS:
            self.query_one(f"#rec-{name}", Checkbox).value = getattr(self.form, name)

    def _set(self, **changes) -> None:
        form = Form(**{**self.form.__dict__, **changes})
        if form != self.form:
            self.form = form
            # after the refresh: a Changed can come while the form's widgets are still being
            # mounted (a Select's options set, keys typed as the screen opens)
            self.call_after_refresh(self.recompute)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        name = (event.select.id or "").removeprefix("rec-")
        value = None if event.value in (Select.NULL, Select.BLANK) else event.value
        if name == "regime" and value not in (None, self.form.asked_regime):
            self._set(regime=value, labels=None)   # a regime chosen: no label budget
        elif name == "dtype" and value is not None:
            self._set(dtype=value)
        elif name == "category":
            self._set(category=value)

    @on(Checkbox.Changed)
    def _check_changed(self, event: Checkbox.Changed) -> None:
        self._set(**{(event.checkbox.id or "").removeprefix("rec-"): event.value})

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        if self._typing is not None:
            self._typing.stop()
        self._typing = self.set_timer(TYPING_S, self._read_fields)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self._read_fields()

    def _read_fields(self) -> None:
        """The text fields into the form; a value that is not one: told, nothing asked."""
        if self._typing is not None:
            self._typing.stop()
            self._typing = None
        values = {}
        for name in TEXT_FIELDS:
            try:
                values[name] = parse_field(name, self.query_one(f"#rec-{name}", Input).value)
            except ValueError as exc:
                self.query_one("#recommend-question", Static).update(
                    f"[b]{escape(str(exc))}[/b]")
                self.app.bell()
                return
        self._set(**values)

    # -- computing ---------------------------------------------------------------------------
    def recompute(self) -> None:
        self._token += 1
        self._show_form()
        line = self.kind_line()
        cached = None if line is not None else content_cache.cache_of(self.snapshot).peek(
            content_cache.recommend_key(self.filters, self.form))
        if cached is not None:
            self._show(cached)
            return
        self.shown = None
        self.query_one("#recommend-answer", Static).update("computing…")
        for name in ("question", "after", "excluded-note"):
            self.query_one(f"#recommend-{name}", Static).update("")
        for name in ("picks", "excluded"):
            self.query_one(f"#recommend-{name}", ViewTable).show_nothing()
        if line is not None:
            self._show(Refused(line))
            return
        self._compute(self.snapshot, self.filters, self.form, self._token)

    @work(thread=True, exclusive=True, group="recommend")
    def _compute(self, snap: StoreSnapshot, filters: Filters, form: Form, token: int) -> None:
        payload = view_cache.recommend_view(snap, filters, form)
        self.post_message(ComparisonReady("recommend", payload, token))

    @on(ComparisonReady)
    @unless_removed
    def _ready(self, msg: ComparisonReady) -> None:
        msg.stop()
        if msg.name == "recommend" and msg.token == self._token:
            self._show(msg.payload)

    def _show(self, payload) -> None:
        answer_note = self.query_one("#recommend-answer", Static)
        if isinstance(payload, Failed | Refused):
            self.shown = None
            answer_note.update(f"[b]Could not answer[/b]: {escape(payload.message)}"
                               if isinstance(payload, Refused) else
                               f"[b]Could not compute this view[/b]: {escape(payload.note)}")
            if isinstance(payload, Failed):
                self.app.report_internal_error("Recommend view", payload.note)
            return
        self.shown = payload
        self.query_one("#recommend-question", Static).update(
            escape(question_line(payload.question)))
        lines = [escape(line) for line in answer_lines(payload)]
        at = len(payload.question.notes)          # the answer's own line, in bold
        lines[at] = f"[b]{lines[at]}[/b]"
        answer_note.update("\n".join(lines))
        self.query_one("#recommend-picks", ViewTable).show(picks_table(payload))
        self.query_one("#recommend-after", Static).update(
            "\n".join(escape(line) for line in after_lines(payload)))
        excluded = payload.excluded
        self.query_one("#recommend-excluded-note", Static).update(
            f"Excluded ({len(excluded)}): why each model is not in the answer"
            if excluded else "Excluded: none")
        self.query_one("#recommend-excluded", ViewTable).show(excluded_table(payload))

    # -- keys --------------------------------------------------------------------------------
    def action_export_answer(self) -> None:
        answer = self.shown
        if answer is None:
            self.notify("No answer to export yet", timeout=3)
            return
        header, rows = csv_rows(answer)

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.app.export_csv(path, lambda: (header, rows))

        self.app.push_screen(ExportScreen(
            Path.cwd() / export_name(answer.question), len(rows), len(header),
            "the leader, the models tied with it and the excluded, each with its status "
            "(leader / tied / excluded) and reason, at full precision, and the question"),
            chosen)

    def action_close(self) -> None:
        self.dismiss()
