"""`SelectionScreen`: a screen over the app's selection that follows it (the comparison views,
the Significance view). The app calls `snapshot_updated` and `filters_updated` on the screen on
top (r, m, c, f, x work there too); the screen recomputes in its own workers. The app keeps each
installed between openings (`GenebApp._kept_screen`, `reopen`)."""

from __future__ import annotations

from typing import ClassVar

from textual.screen import Screen

from geneb_tui.components.once import rearm
from geneb_tui.core.filters import Filters
from geneb_tui.core.kinds import not_shown
from geneb_tui.core.query import StoreSnapshot


class SelectionScreen(Screen[None]):
    """Holds `snapshot` and `filters`, shows the selection as its sub-title and calls
    `recompute()` (the subclass's) when it opens and whenever either changes."""

    # The view's name in `geneb_tui.core.kinds.CLASSIFICATION_ONLY` where it reads
    # classification results only ("": every kind)
    VIEW: ClassVar[str] = ""

    def __init__(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.filters = filters

    def recompute(self) -> None:
        raise NotImplementedError

    def kind_line(self) -> str | None:
        """What the view says instead of its content over a snapshot of a kind it does not
        read (the store read again as another kind while it is open: `k` just before its
        key); None where it reads the snapshot's kind."""
        return not_shown(self.VIEW, self.snapshot.kind) if self.VIEW else None

    def selection_changed(self, old: Filters, new: Filters) -> None:
        """What a subclass adjusts when the selection changes, before it recomputes."""

    def on_mount(self) -> None:
        self.sub_title = self.filters.describe()
        self.recompute()

    def snapshot_updated(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        """The app read the store again (Ctrl+R, another kind, a run's end): its snapshot and
        the selection that fits it (`StoreSnapshot.filters_for`), followed together, one
        recompute."""
        self.snapshot = snapshot
        if filters != self.filters:
            old, self.filters = self.filters, filters
            self.sub_title = filters.describe()
            self.selection_changed(old, filters)
        if self.is_mounted:
            self.recompute()

    def reopen(self, filters: Filters) -> None:
        """Show the screen again (the app keeps it installed; it also calls this off screen
        in a pause when the selection moved on): dismissable once more, its tab and views as
        they were, following `filters` if the selection moved on while it was closed (a view
        still computing then goes on in its worker)."""
        rearm(self)
        if filters != self.filters:
            self.filters_updated(filters)

    def filters_updated(self, filters: Filters) -> None:
        """The app's selection changed: follow it."""
        self.snapshot_updated(self.snapshot, filters)
