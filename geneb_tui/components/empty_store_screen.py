"""Shown when the store holds no results: exactly how to fill or import some, and how long."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from geneb_tui.actions import EMPTY_KEYS, bindings
from geneb_tui.components.footer import KeysFooter


def empty_store_text(root: Path) -> str:
    # Times measured on two CPU cores after `make demo`'s install (docs/guide/dashboard.md).
    store = escape(str(root))
    paragraphs = [
        "[b]This store has no results yet.[/b]\n"
        f"Store: {store}",
        "Import the official GENEB results, shipped with geneb (40 official and 1 self-reported "
        "submission × 100 tasks × 3 regimes; no network, about a second):",
        f"    geneb-engine import --official --store {store}",
        "or import submission files you have (official JSON format; about a second for 40 "
        "files):",
        f"    geneb-engine import PATH.. --store {store}",
        "or compute the built-in mini suite with the k-mer baselines (117 cells: about 15-20 s "
        "on two cores with --jobs 2, about 35 s with one job):",
        "    geneb-engine fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6 --jobs 2 "
        f"--store {store}",
        "Then press [b]Ctrl+R[/b] here to reload (or start geneb-tui again). [b]q[/b] quits.",
    ]
    return "\n\n".join(paragraphs) + "\n"


class EmptyStoreScreen(Screen[None]):
    BINDINGS = bindings(EMPTY_KEYS)

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="empty-store"):
            yield Static(empty_store_text(self.root), id="empty-text", markup=True)
        yield KeysFooter()
