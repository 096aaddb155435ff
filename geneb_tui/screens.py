"""The dashboard's screens as the app opens them: the help, the filter dialog and the views
(comparisons, Significance, Recommend, missing evaluations), each kept installed between
openings while it still fits the app's state (`KEPT`, `ScreenKeys._kept_screen`), a part of
`geneb_tui.app.GenebApp` (which prepares the kept ones off screen in a pause:
`GenebApp._prepare_screens`).

A view is made over the snapshot and the selection; its module imports polars, so it is
imported when the view is first made, never at start-up.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.screen import Screen

from geneb_tui.components.filter_screen import FilterScreen
from geneb_tui.components.help_screen import HelpScreen
from geneb_tui.core.kinds import not_shown

# The screens the app prepares in a pause (`GenebApp._prepare_screens`), the likeliest to be
# opened first; these and the Recommend view (its answer computed only when it is asked) are
# kept installed between openings (`ScreenKeys._kept_screen`).
KEPT = ("compare", "significance", "missing", "filters", "help")


class ScreenKeys(App[None]):
    """`GenebApp`'s keys that open a screen, and the screens it keeps installed (`_kept`, in
    `GenebApp`) with what each needs to fit."""

    # -- screens ------------------------------------------------------------------------------
    def action_help(self) -> None:
        if not any(isinstance(s, HelpScreen) for s in self.screen_stack):   # ? on the help
            self.push_screen(self._kept_screen("help"))

    def action_compare(self) -> None:
        self._open_view("compare")

    def action_significance(self) -> None:
        self._open_view("significance")

    def action_missing(self) -> None:
        self._open_view("missing")

    def action_recommend(self) -> None:
        self._open_view("recommend")

    def action_context_curve(self) -> None:
        self._open_view("context")

    def _new_view(self, name: str) -> Screen:
        """A new view `name` (compare, significance, recommend, context, missing) over the
        snapshot and the selection."""
        if name == "compare":
            # lazy: polars, duckdb, pyarrow
            from geneb_tui.components.compare_screen import CompareScreen

            return CompareScreen(self.snapshot, self.filters)
        if name == "significance":
            # lazy: polars, duckdb, pyarrow
            from geneb_tui.components.significance_screen import SignificanceScreen

            return SignificanceScreen(self.snapshot, self.filters)
        if name == "recommend":
            # lazy: polars, duckdb, pyarrow
            from geneb_tui.components.recommend_screen import RecommendScreen

            return RecommendScreen(self.snapshot, self.filters)
        if name == "context":
            # lazy: polars, duckdb, pyarrow
            from geneb_tui.components.context_screen import ContextScreen

            return ContextScreen(self.snapshot, self.filters)
        # lazy: polars, duckdb, pyarrow
        from geneb_tui.components.missing_screen import MissingScreen

        return MissingScreen(self.paths, self.snapshot, self.filters, self.fill_choices)

    def _open_view(self, name: str) -> None:
        if self.snapshot is None or self.snapshot.is_empty:
            return
        if (line := not_shown(name, self.snapshot.kind)) is not None:   # classification only
            self.notify(line, timeout=8)
            return
        self.push_screen(self._kept_screen(name))

    # -- screens kept between openings ----------------------------------------------------------
    def _screen_kind(self, name: str) -> tuple[Callable[[Screen], bool], Callable[[], Screen]]:
        """For kept screen `name` (one of KEPT, or "recommend"): whether the one kept still
        fits the app's state, and how to make a new one."""
        if name == "help":
            return (lambda screen: True), HelpScreen
        if name == "filters":
            choices = self.snapshot.filter_choices(self.filters.suite)
            return (lambda dialog: dialog.choices == choices), (
                lambda: FilterScreen(self.filters, choices))
        return (lambda view: view.snapshot is self.snapshot), lambda: self._new_view(name)

    def _kept_screen(self, name: str) -> Screen:
        """Screen `name` as it was last shown (or prepared) while it still fits, reopened for
        the current filters (`reopen`): the app keeps it installed, so closing it keeps its
        widgets and showing it again skips composing, mounting and styling them. Otherwise a
        new one, installed in its place."""
        fits, make = self._screen_kind(name)
        screen = self._kept.get(name)
        if screen is not None and fits(screen):
            screen.reopen(self.filters)
            return screen
        return self._keep_new(name, make)

    def _keep_new(self, name: str, make: Callable[[], Screen]) -> Screen:
        self._forget(name)
        screen = self._kept[name] = make()
        self.install_screen(screen, name)
        return screen

    def _forget(self, name: str) -> None:
        """Kept screen `name` (not on the stack) uninstalled and removed, if there is one."""
        screen = self._kept.pop(name, None)
        if screen is not None:
            self.uninstall_screen(screen)
            screen.remove()
