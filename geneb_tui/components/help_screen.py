"""Help: what the dashboard shows and every key (from the actions registry)."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from geneb_tui.actions import ACTIONS, key_label

ABOUT = (
    "[b]geneb-tui[/b] shows the GENEB results in the store: official imports and your local "
    "runs. Rows are models (one per source); columns are macro, micro and the 13 categories, or "
    "the tasks of one category (c). Each cell is the value and its rank (#1 = best) among the "
    "rows shown; [i]—[/i] is a missing result, never a zero. Colours run red → yellow → green "
    "over each column's range. Ctrl+P opens the command palette with every action.\n"
)


def keys_table() -> Table:
    t = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    t.add_column("Key")
    t.add_column("Action")
    t.add_column("What it does")
    for a in ACTIONS:
        t.add_row(key_label(a.key), a.title, a.help)
    t.add_row("Ctrl+P", "Command palette", "Every action by name, and Textual's themes")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static(ABOUT)
            yield Static(keys_table())
            yield Static("\n[dim]Esc closes.[/]")
