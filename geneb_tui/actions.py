"""Every key of every screen in one registry: bindings, footer, command palette and help come
from it (a key that is not here does not exist; tests/tui/test_screens.py checks that every
screen's bindings are listed)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Action:
    action: str | None   # the action name (without `action_`); None: a key a widget handles
    key: str             # key(s) for the binding
    title: str           # command palette / footer title
    help: str            # one-line description (help screen, palette)
    footer: bool = True  # shown in the footer


# The main view. Footer order matters: at 120 columns the footer shows the first keys, so the
# ones a new user needs (g, e, ?, q) come right after the filter keys and before the rest.
ACTIONS: tuple[Action, ...] = (
    Action("filters", "f", "Filters…", "Open the filter dialog (all filters combine)"),
    Action("cycle_regime", "r", "Regime", "Switch regime: full → 10-shot → 1-shot"),
    Action("cycle_metric", "m", "Metric", "Switch metric: MCC → Acc → F1 (regression: Pearson r "
           "→ Spearman ρ → R²; variant: AUROC → AUPRC)"),
    Action("cycle_category", "c", "Category",
           "Show the tasks of the next category (then back to all categories)"),
    Action("compare", "v", "Views", "Comparison views: ranks, rank shift, agreement, scale, "
                                    "few-shot, tasks, controlled pairs"),
    Action("missing", "g", "Missing…",
           "Missing evaluations: list them and run geneb-engine fill"),
    Action("export", "e", "Export…", "Export the table as shown to CSV"),
    Action("help", "question_mark", "Help", "Every key of every screen"),
    Action("quit", "q", "Quit", "Leave geneb-tui"),
    Action("significance", "d", "Signif.",
           "Significance: critical-difference diagram, P(A > B) matrix, two-model test"),
    Action("recommend", "w", "Which model",
           "Recommend: which models to try for a scope, regime or label budget and "
           "constraints, and which differences are real"),
    Action("context_curve", "l", "Context",
           "Score against context length: a curve per model over its entries at several "
           "context policies (fill --context-lengths), with task-bootstrap intervals"),
    Action("clear_filters", "x", "Clear", "Reset every filter to its default", footer=False),
    Action("sort_column", "s", "Sort", "Sort by the column under the cursor (again: reverse)",
           footer=False),
    Action("rank_scope", "n", "Rank scope",
           "Ranks in the cells: among all entries in the store ↔ among the rows shown",
           footer=False),
    Action("search", "slash", "Search models", "Filter models by name", footer=False),
    Action("prev_category", "C", "Previous category", "Previous category", footer=False),
    Action("cycle_suite", "u", "Next suite", "Switch suite (geneb-v1, geneb-mini, …)",
           footer=False),
    Action("cycle_kind", "k", "Task kind",
           "Switch task kind: classification → regression → variant (those the store holds "
           "results of; each with its own tasks, models and metrics)", footer=False),
    Action("refresh", "ctrl+r", "Reload store", "Read the store again", footer=False),
)

# Titles of the main actions for the command palette (longer than the footer's).
PALETTE_TITLES: dict[str, str] = {
    "filters": "Filters…", "cycle_regime": "Next regime", "cycle_metric": "Next metric",
    "cycle_category": "Next category", "compare": "Comparison views",
    "missing": "Missing evaluations…", "export": "Export CSV…", "clear_filters": "Clear filters",
    "sort_column": "Sort by column", "rank_scope": "Toggle rank scope (store / shown)",
    "significance": "Significance view (which differences are real)",
    "recommend": "Recommend: which model for my task…",
    "context_curve": "Score against context length (a curve per model)",
    "cycle_kind": "Next task kind (classification, regression, variant)",
}

COMPARE_KEYS: tuple[Action, ...] = (
    Action("close", "escape,v", "Back", "Back to the main table"),
    *(Action(f"tab('{name}')", str(i), title, f"Tab {title}", footer=False)
      for i, (name, title) in enumerate((
          ("leaders", "Ranks"), ("shift", "Rank shift"), ("agreement", "Agreement"),
          ("scale", "Scale"), ("degradation", "Few-shot"), ("tasks", "Tasks"),
          ("pairs", "Pairs")), 1)),
    Action("regime_a", "a", "Regime A", "Rank shift / few-shot: the first regime"),
    Action("regime_b", "b", "Regime B", "Rank shift: the second regime"),
    Action("column", "o", "Column", "The score column of rank shift, scale and few-shot"),
    Action(None, "enter", "Drill down", "Tasks tab: the task's values across the models"),
    Action(None, "tab", "Focus", "Between the tabs and the view"),
)

SIGNIFICANCE_TABS: tuple[tuple[str, str], ...] = (
    ("cd", "CD diagram"), ("matrix", "P(A > B)"), ("pair", "Two models"))

SIGNIFICANCE_KEYS: tuple[Action, ...] = (
    Action("close", "escape,d", "Back", "Back to the main table"),
    *(Action(f"tab('{name}')", str(i), title, f"Tab {title}", footer=False)
      for i, (name, title) in enumerate(SIGNIFICANCE_TABS, 1)),
    Action("model_a", "a", "Model A", "Two models: the next model as A (average-rank order)"),
    Action("model_b", "b", "Model B", "Two models: the next model as B"),
    Action(None, "enter", "Compare", "P(A > B) tab: compare the row's model with the column's"),
    Action(None, "tab", "Focus", "Between the tabs and the view"),
)

RECOMMEND_KEYS: tuple[Action, ...] = (
    Action("close", "escape,w", "Back", "Back to the main table"),
    Action("export_answer", "e", "Export…",
           "Export the answer to CSV: the leader, the tied and the excluded, with the reasons"),
    Action(None, "tab", "Next field", "Between the form's fields and the two tables "
                                      "(shift+tab: back); Enter opens a list, Space ticks"),
)

MISSING_KEYS: tuple[Action, ...] = (
    Action("toggle", "space", "Tick", "Tick / untick the model under the cursor (also Enter)"),
    Action("tick_all", "a", "All", "Tick every runnable model shown"),
    Action("tick_none", "n", "None", "Untick every model"),
    Action("next_regimes", "r", "Regimes", "Regimes to fill: all → full → 10-shot → 1-shot"),
    Action("next_device", "d", "Device", "Device passed to fill: auto → cpu → cuda"),
    Action("next_dtype", "p", "Precision",
           "Precision passed to fill (--dtype): auto → bfloat16 → float16 → float32",
           footer=False),
    Action("toggle_trust", "t", "Trust code",
           "Pass --trust-remote-code (remote-code models run at their pinned revision)"),
    Action("batch_size", "b", "Batch", "Batch size passed to fill (empty: the model's default)",
           footer=False),
    Action("next_executor", "e", "Executor",
           "Executor passed to fill: local → ray (one Ray actor per model on a GPU)",
           footer=False),
    Action("address", "A", "Ray address",
           "Ray address passed to fill (auto, ray://HOST:PORT or HOST:PORT; empty: a local "
           "Ray instance)", footer=False),
    Action("run_fill", "g", "Run fill", "Run geneb-engine fill for the ticked models' cells"),
    Action("cancel_fill", "k", "Cancel run", "Stop the run (finished cells are kept)"),
    Action("close", "escape", "Back", "Back to the main table"),
)

CONTEXT_KEYS: tuple[Action, ...] = (
    Action("close", "escape,l", "Back", "Back to the main table"),
    Action(None, "up,down", "Points", "The points' values and intervals (the table below)",
           footer=False),
)

TASK_KEYS: tuple[Action, ...] = (Action("dismiss", "escape,q", "Close", "Back to the views"),)
HELP_KEYS: tuple[Action, ...] = (
    Action("dismiss", "escape,q,question_mark", "Close", "Close the help"),)
EMPTY_KEYS: tuple[Action, ...] = (
    Action("app.refresh", "ctrl+r", "Reload store", "Read the store again"),
    Action("app.quit", "q", "Quit", "Leave geneb-tui"),
)
FILTER_KEYS: tuple[Action, ...] = (
    Action("apply", "ctrl+s", "Apply", "Apply the filters (also Enter in a text field)"),
    Action("cancel", "escape", "Cancel", "Close without changing anything"),
    Action(None, "tab", "Next field", "Next field (shift+tab: previous); Enter opens a list"),
)
EXPORT_KEYS: tuple[Action, ...] = (
    Action(None, "enter", "Export", "Write the CSV to the path given"),
    Action("cancel", "escape", "Cancel", "Close without writing"),
)

# Every screen's keys, as the help lists them.
SCREENS: tuple[tuple[str, tuple[Action, ...]], ...] = (
    ("Main table", ACTIONS),
    ("Comparison views (v)", COMPARE_KEYS),
    ("Significance (d)", SIGNIFICANCE_KEYS),
    ("Recommend (w)", RECOMMEND_KEYS),
    ("Score against context (l)", CONTEXT_KEYS),
    ("Task drill-down (Enter in Tasks)", TASK_KEYS),
    ("Missing evaluations (g)", MISSING_KEYS),
    ("Filter dialog (f)", FILTER_KEYS),
    ("Export dialog (e)", EXPORT_KEYS),
    ("Empty store", EMPTY_KEYS),
    ("Help (?)", HELP_KEYS),
)


def palette_title(a: Action) -> str:
    return PALETTE_TITLES.get(a.action or "", a.title)


def bindings(actions: tuple[Action, ...] = ACTIONS) -> list[Binding]:
    return [Binding(a.key, a.action, a.title.rstrip("…") if a.footer else a.title,
                    show=a.footer)
            for a in actions if a.action is not None]


_LABELS = {"slash": "/", "question_mark": "?", "ctrl+r": "Ctrl+R", "ctrl+s": "Ctrl+S",
           "escape": "Esc", "space": "Space", "enter": "Enter", "tab": "Tab"}


def key_label(key: str) -> str:
    return " / ".join(_LABELS.get(k, k) for k in key.split(","))
