"""`TypedInput`: a text field whose editing keys act in the order they were typed.

Textual runs a focused widget's key bindings (backspace, ctrl+u, home, enter's submit...) only
once the key has bubbled from the widget back up to the app, one message queue at a time,
while the field inserts a printable key at once. Keys typed in a burst (fast typing, a paste
sent as keys, a script driving the terminal) are then applied out of order: the characters
after an editing key land before it, and the submitted value is not the text typed (a path
typed with a correction, then Enter, came out as `tui-export.`). This field runs its own
bindings when the key reaches it, in line with the characters around it.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TypedInput(Input):
    """An Input whose non-priority bindings run when their key arrives (see the module)."""

    async def _on_key(self, event: events.Key) -> None:
        if not event.is_printable:
            for binding in self._bindings.key_to_bindings.get(event.key, ()):
                if not binding.priority and await self.app.run_action(binding.action, self):
                    event.stop()
                    event.prevent_default()
                    return
        await super()._on_key(event)
