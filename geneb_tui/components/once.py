"""`@dismiss_once`: a screen's `dismiss` closes that screen only, and only once.

Textual's `Screen.dismiss` pops whatever screen is on top: two Enter presses in a burst (or
Enter then Escape) in a dialog would close the dialog and then the screen below it, or fail
with ScreenStackError on the main screen (found by the monkey test). A screen that is no longer
on top ignores a late dismiss; `rearm(screen)` lets a screen that is shown again (one the app
keeps installed) be dismissed once more. A class decorator, not a base class: Textual takes a
screen's CSS type names and component classes from its first base only.
"""

from __future__ import annotations

from textual.await_complete import AwaitComplete


def dismiss_once(cls):
    original = cls.dismiss

    def dismiss(self, result=None) -> AwaitComplete:
        if self.app.screen is not self or getattr(self, "_geneb_dismissed", False):
            return AwaitComplete()
        self._geneb_dismissed = True
        return original(self, result)

    dismiss.__doc__ = original.__doc__
    cls.dismiss = dismiss
    return cls


def rearm(screen) -> None:
    """`screen` (dismissed before) is about to be shown again: its next dismiss closes it."""
    screen._geneb_dismissed = False
