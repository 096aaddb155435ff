"""Python's garbage collection moved to when the user pauses (UI-free; the app starts it).

The dashboard holds about 150,000-200,000 tracked objects once a store is loaded (snapshot,
views, widgets), and a full collection over them takes 60-160 ms on two cores: one that lands
in a key press puts that interaction over its 100 ms budget. So when the user has paused
(`geneb_tui.app.IDLE_S`), `collect_now` runs a full collection and then freezes what survives
(`gc.freeze`: the collector no longer scans those objects), so that collections during the
next interactions scan only the objects made since. The next pause unfreezes, collects and
freezes again, so garbage among frozen objects waits at most until then.

Measured with bench/tui_startup.py's interactions, collecting in the pauses between them
(`--runs 3`, one run each way, same machine): help 125 to 67 ms, the task view 209 to 111 ms
(filled 244 to 113), missing 202 to 161, compare 257 to 205 (filled 347 to 253).
"""

from __future__ import annotations

import gc


def collect_now() -> None:
    """A full collection of everything, then what survives frozen (see the module)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
