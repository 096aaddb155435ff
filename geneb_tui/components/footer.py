"""Textual's footer, rebuilt only when the keys it shows change.

Textual recomposes the footer on every bindings refresh (each focus change, each screen
change), even when it would show the same keys: a burst of Tab presses rebuilt it every time
(the monkey test's main cost). This one
- compares what it would show (the keys with `show` set, enabled or not) and recomposes once
  per refresh, only on a change;
- follows the refreshes of its screen only while that screen is on top (the app's
  `check_action` answers for the screen on top: a screen below would show the top one's keys,
  and recompose twice for nothing on each screen opened over it);
- shows its keys from the first frame on the screen on top (Textual's shows none until the
  first refresh, then composes them: one more layout of the screen as it opens);
- makes each key with its `compact` already set, the footer's where Textual binds it to that
  (a key made with its own default restyles itself twice on mount, its watcher and then the
  binding to the footer's value: some 2 ms per key, 11 keys, on every screen opened).
"""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeysFooter(Footer):
    _shown: tuple | None = None
    _pending = False

    def compose(self):
        if self._shown is None and self.screen is self.app.screen:
            self.set_reactive(Footer._bindings_ready, True)
        if self._bindings_ready:
            self._shown = self._signature()
        for widget in super().compose():
            if isinstance(widget, FooterKey):   # bound to the footer's, or its own default
                bound = "compact" in (widget._reactive_connect or {})
                compact = self.compact if bound else FooterKey.compact._default
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    def _signature(self) -> tuple:
        """What the footer shows: the keys with `show` set (the focused widget's own keys, the
        arrows of a table, have it off) and the command palette's, each enabled or not."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple((key, binding.description, enabled)
                     for key, (_, binding, enabled, _) in self.screen.active_bindings.items()
                     if binding.show or key == palette)

    def bindings_changed(self, screen) -> None:
        if not screen.app.app_focus or self._pending:
            return
        if self.is_attached and screen is self.screen and screen is screen.app.screen:
            self._bindings_ready = True
            self._pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if not self.is_attached or self.screen is not self.app.screen:
            return
        shown = self._signature()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
