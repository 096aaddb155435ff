"""Scopes: which of a suite's tasks an answer covers, by task catalog column (standard library
only: the command line's parsers read it). A scope becomes a task set in `store.scopes`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScopeField:
    """One way to narrow a scope: its `Scope` field, the task catalog column it matches, its
    command-line option and the noun that names one value in messages."""

    name: str
    column: str
    option: str
    what: str

    def missing_from_suite(self, values: list[str], suite: str) -> str:
        """Why `values` (known names) select nothing of `suite`."""
        shown = ", ".join(values)
        if self.column == "task_id":
            return f"suite {suite} has no task {shown}"
        return f"no task of suite {suite} has {self.what} {shown}"


# The scope options, in the order they are shown (`Scope` has one field of each).
SCOPE_FIELDS: tuple[ScopeField, ...] = (
    ScopeField("categories", "category", "--category", "category"),
    ScopeField("tasks", "task_id", "--tasks", "task"),
    ScopeField("organisms", "organism", "--organism", "organism"),
    ScopeField("kingdoms", "kingdom", "--kingdom", "kingdom"),
    ScopeField("source_benchmarks", "source_benchmark", "--source-benchmark",
               "source benchmark"),
)


@dataclass(frozen=True)
class Scope:
    """A suite's tasks narrowed by any of the SCOPE_FIELDS: a task is in the scope when its
    value of each field given is one of those given (values OR, fields AND); nothing given:
    every task of the suite."""

    categories: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    organisms: tuple[str, ...] = ()
    kingdoms: tuple[str, ...] = ()
    source_benchmarks: tuple[str, ...] = ()

    def given(self) -> list[tuple[ScopeField, tuple[str, ...]]]:
        """(field, values) of each field given, in SCOPE_FIELDS order."""
        return [(f, getattr(self, f.name)) for f in SCOPE_FIELDS if getattr(self, f.name)]

    @property
    def whole(self) -> bool:
        return not self.given()

    def describe(self) -> str:
        """'category Promoters, Enhancers; organism human' ('' for the whole suite)."""
        return "; ".join(f"{f.what} {', '.join(values)}" for f, values in self.given())

