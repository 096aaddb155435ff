"""`@unless_removed`: a worker's result that reaches a screen being removed is dropped.

A screen's workers run in threads; a result posted while the app removes the screen (a kept
view dropped on a reload, a view closed while it computed) is handled after its widgets are
gone, so the handler's first query fails with NoMatches; so does one handled while the app
shuts down (it closes the widgets of a kept screen without marking them removed). That, and
only that, is ignored: a NoMatches on a screen still in place is a bug and propagates.
(Decorates a sync method; its signature is kept, which Textual's message dispatch reads.)
"""

from __future__ import annotations

from functools import wraps

from textual.css.query import NoMatches


def unless_removed(handler):
    @wraps(handler)
    def wrapper(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except NoMatches:
            # Textual marks a node being removed, and an app shutting down
            if self.is_attached and not self._pruning and self.app.is_running:
                raise
            return None

    return wrapper
