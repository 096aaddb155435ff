"""Textual's command palette, with crashes of Textual 8.2 met by the monkey test guarded:

- two Enters in a burst dismiss it twice, and the second dismiss pops the screen below (or
  fails with ScreenStackError): `dismiss_once`;
- its command search finishing after it closed queries its removed list (NoMatches): ignored.
(PgUp / PgDn before its list is laid out: `components.compat`.)
"""

from __future__ import annotations

from textual.command import CommandPalette
from textual.css.query import NoMatches

from geneb_tui.components.once import dismiss_once


@dismiss_once
class Palette(CommandPalette):
    def _watch__list_visible(self) -> None:
        try:
            super()._watch__list_visible()
        except NoMatches:
            pass   # closed meanwhile
