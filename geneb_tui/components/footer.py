"""Textual's footer, rebuilt only when the keys it shows change.

Textual recomposes the footer on every bindings refresh (each focus change, each screen
change), even when it would show the same keys: a burst of Tab presses rebuilt it every time
(the monkey test's main cost). This one compares what it would show and recomposes once per
refresh, only on a change.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    _shown: tuple | None = None
    _pending = False

    def _signature(self) -> tuple:
        return tuple((binding.key, binding.description, enabled)
                     for (_, binding, enabled, _) in self.screen.active_bindings.values())

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._pending:
            return
        if self.is_attached and screen is self.screen:
            self._pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if not self.is_attached:
            return
        shown = self._signature()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
