"""Where a result row comes from: its `source` column (`store.tables.schema`).

`LOCAL` rows were computed by this tool (`geneb-engine fill`); every other source is the
provenance of an imported official submission. The catalog's model provenances add `baseline`
(the weight-free k-mer models) to these.
"""

from __future__ import annotations

LOCAL = "local"
SUBMISSION_PROVENANCES: tuple[str, ...] = ("official", "verified", "reproduced", "self-reported")
"""An official submission's `meta.provenance` (schema 1.0), and the source of its imported rows."""
DEFAULT_PROVENANCE = "self-reported"
"""The provenance of a submission whose `meta` states none, of a leaderboard_tasks.json row of a
model the benchmark authors did not curate, and of this tool's exports unless told otherwise (the
official tools' default)."""
SOURCES: tuple[str, ...] = (LOCAL, *SUBMISSION_PROVENANCES)
"""Every source a result row may have, local first."""
BOARD_PREFERENCE: tuple[str, ...] = (*SUBMISSION_PROVENANCES, LOCAL)
"""The sources a leaderboard takes a model's row from by default, preferred first (the store's
other sources after them: `store.official.leaderboard.source_order`)."""

BADGES: dict[str, str] = {LOCAL: "Local", "official": "Official", "verified": "Verified",
                          "reproduced": "Reproduced", "self-reported": "Self-reported"}
"""How a source is named on a web page (the official leaderboard's provenance badges, and
Local for this tool's own rows)."""
