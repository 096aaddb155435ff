"""A guard for a crash of Textual 8.2 that keys pressed quickly reach (found by the monkey test).

`OptionList._move_page` (PgUp / PgDn) indexes the list's laid-out lines, which do not exist yet
right after the list got its options: Ctrl+P then PgUp, or Enter on a filter's drop-down then
PgDn, in one burst, raised KeyError and ended the app. The key is ignored instead (the next one
works). Imported once by the app.
"""

from __future__ import annotations

from textual.widgets import OptionList

_move_page = OptionList._move_page


def _move_page_when_laid_out(self, direction) -> None:
    try:
        _move_page(self, direction)
    except (KeyError, IndexError):
        pass


if not getattr(OptionList, "_geneb_guarded", False):
    OptionList._move_page = _move_page_when_laid_out
    OptionList._geneb_guarded = True
