"""A plain-text capture of the current screen (the dashboard tests)."""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App


def screen_text(app: App) -> str:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=False,
                      color_system=None, record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return "\n".join(line.rstrip() for line in console.export_text(styles=False).splitlines())
