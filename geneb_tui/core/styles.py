"""Styles shared by the table and the CSV-free views (plain data: no Textual import)."""

from __future__ import annotations

from store.vocab.sources import LOCAL

# Provenance -> the style of its badge in the Source column (the full word, never cut).
SOURCE_STYLES: dict[str, str] = {
    "official": "bold green",
    "verified": "bold cyan",
    "self-reported": "bold yellow",
    "reproduced": "bold magenta",
    LOCAL: "bold bright_blue",
    "baseline": "bold",
}
