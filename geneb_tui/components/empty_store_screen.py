"""Shown when the store holds no results: exactly how to fill or import some."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static


def empty_store_text(root: Path) -> str:
    store = str(root)
    return f"""\
[b]This store has no results yet.[/b]
Store: {store}

Import the official GENEB results (40 models × 100 tasks × 3 regimes):

    geneb-engine import --official --store {store}

or import submission files you have (official JSON format):

    geneb-engine import PATH.. --store {store}

or compute the built-in mini suite with the k-mer baselines (minutes on a CPU):

    geneb-engine fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6 --store {store}

Then press [b]Ctrl+R[/b] here to reload (or start geneb-tui again). [b]q[/b] quits.
"""


class EmptyStoreScreen(Screen[None]):
    BINDINGS = [Binding("ctrl+r", "app.refresh", "Reload store"),
                Binding("q", "app.quit", "Quit")]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="empty-store"):
            yield Static(empty_store_text(self.root), id="empty-text", markup=True)
        yield Footer()
