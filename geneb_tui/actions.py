"""Every user action in one registry: bindings, footer, command palette and help come from it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Action:
    action: str          # the App action name (without `action_`)
    key: str             # key(s) for the binding
    title: str           # command palette title
    help: str            # one-line description (help screen, palette)
    footer: bool = True  # shown in the footer


ACTIONS: tuple[Action, ...] = (
    Action("filters", "f", "Filters…", "Open the filter dialog (all filters combine)"),
    Action("clear_filters", "x", "Clear filters", "Reset every filter to its default"),
    Action("search", "slash", "Search models", "Filter models by name", footer=False),
    Action("cycle_regime", "r", "Next regime", "Switch regime: full → 10-shot → 1-shot"),
    Action("cycle_metric", "m", "Next metric", "Switch metric: MCC → Acc → F1"),
    Action("cycle_category", "c", "Next category",
           "Show the tasks of the next category (then back to all categories)"),
    Action("prev_category", "C", "Previous category", "Previous category", footer=False),
    Action("cycle_suite", "u", "Next suite", "Switch suite (geneb-v1, geneb-mini, …)",
           footer=False),
    Action("sort_column", "s", "Sort by column",
           "Sort by the column under the cursor (again: reverse)"),
    Action("compare", "v", "Comparison views",
           "Ranks, rank shift, agreement, scale, few-shot, tasks, controlled pairs"),
    Action("missing", "g", "Missing evaluations…",
           "List the missing cells of the selection and run geneb-engine fill"),
    Action("export", "e", "Export CSV…", "Export the table as shown to CSV"),
    Action("refresh", "ctrl+r", "Reload store", "Read the store again", footer=False),
    Action("help", "question_mark", "Help", "Keys and what the dashboard shows"),
    Action("quit", "q", "Quit", "Leave geneb-tui"),
)


def bindings() -> list[Binding]:
    return [Binding(a.key, a.action, a.title.rstrip("…"), show=a.footer) for a in ACTIONS]


def key_label(key: str) -> str:
    return {"slash": "/", "question_mark": "?", "ctrl+r": "Ctrl+R"}.get(key, key)
