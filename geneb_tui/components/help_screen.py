"""Help: what the dashboard shows and every key of every screen (from the actions registry)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.visual import RenderOptions, RichVisual
from textual.widgets import Static

from geneb_tui.actions import HELP_KEYS, SCREENS, bindings, key_label
from geneb_tui.components.once import dismiss_once, rearm
from geneb_tui.core.filters import Filters

ABOUT = (
    "[b]geneb-tui[/b] shows the GENEB results in the store: official imports and your local "
    "runs. Rows are models (one per source); columns are macro, micro and the 13 categories, or "
    "the tasks of one category (c). Each cell is the value and its rank (#1 = best, ties share "
    "the better rank): by default the rank among [i]all[/i] entries of the store for this "
    "suite, category, regime and metric, so a filter never makes a model look first overall; "
    "[b]n[/b] switches to the rank among the rows shown. [i]—[/i] is a missing result, never a "
    "zero. Colours run red → yellow → green over each column's range. A moment after the table, "
    "each rank of macro, micro and the categories gets its 95 % rank interval, "
    "[b]#4 \\[2-7][/b]: the 2.5-97.5 % range of the model's rank over 5,000 bootstrap resamples "
    "of the tasks (and of the seeds of local few-shot runs), among the same entries as the rank "
    "beside it; [b]≈[/b] before the rank (and bold) marks the leader's tie group, the models "
    "a sign-flip test of the tasks cannot separate from the leader (with the leader compared "
    "with every other model). [b]d[/b] opens the Significance view: a "
    "critical-difference diagram, the P(A > B) matrix and a two-model test. Ctrl+P opens the "
    "command palette with every action.\n"
)


def _table(title: str) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False, expand=True, title=title,
              title_justify="left", title_style="bold underline")
    t.add_column("Key", no_wrap=True, width=12)
    t.add_column("Action", no_wrap=True, width=18)
    t.add_column("What it does", ratio=1)
    return t


def keys_table() -> Group:
    """One table per screen, the same columns in each (key, action, what it does)."""
    tables = []
    for screen, actions in SCREENS:
        t = _table(screen)
        for a in actions:
            t.add_row(Text(key_label(a.key)), Text(a.title), Text(a.help))
        tables.append(t)
    t = _table("Everywhere")
    t.add_row("Ctrl+P", "Command palette", "Every action by name, and Textual's themes")
    t.add_row("Ctrl+Q", "Quit", "Leave geneb-tui from any screen")
    tables.append(t)
    return Group(*(part for t in tables for part in (t, Text(""))))


_RENDERED: dict[tuple, object] = {}   # _KeysVisual's measures and lines, for the process


def _kept(key: tuple, compute: Callable, *args):
    if key not in _RENDERED:
        _RENDERED[key] = compute(*args)
    return _RENDERED[key]


class _KeysVisual(RichVisual):
    """`keys_table()` as Textual renders it, each measure and each render kept for the process
    by what it depends on (width, height, style; the widget is always a `KeysTable`): Rich
    lays the tables out again on every layout and render, ~45 ms of each opening of the help
    (a second opening: 110 -> 68 ms, median of 5 on a quiet machine)."""

    def __init__(self, widget: Static) -> None:
        super().__init__(widget, _keys_table())

    def get_optimal_width(self, rules, container_width: int) -> int:
        return _kept(("width", container_width), super().get_optimal_width, rules,
                     container_width)

    def get_height(self, rules, width: int) -> int:
        return _kept(("height", width), super().get_height, rules, width)

    def render_strips(self, width: int, height: int | None, style,
                      options: RenderOptions) -> list[Strip]:
        return list(_kept(("lines", width, height, style), super().render_strips, width,
                          height, style, options))


_keys_table = cache(keys_table)   # the tables themselves, built once


class KeysTable(Static):
    """The keys of every screen (`keys_table()`), rendered once per width and style."""

    def render(self) -> _KeysVisual:
        return _KeysVisual(self)


@dismiss_once
class HelpScreen(ModalScreen[None]):
    BINDINGS = bindings(HELP_KEYS)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static(ABOUT)
            yield KeysTable()
            yield Static("\n[dim]Esc closes; arrows / PgUp / PgDn scroll.[/]")

    def reopen(self, filters: Filters) -> None:
        """Shown again (the app keeps it installed): at the top, dismissable once more."""
        rearm(self)
        if self.is_mounted:
            self.query_one("#help-dialog").scroll_home(animate=False)
