"""Damaged store files met while reading: each reported once per process, naming the file and
what it held, which reads as missing (`store.db` leaves such files out of a snapshot, and
`store.tables.catalogs` a catalog it cannot read). The CLIs print them when a command ends."""

from __future__ import annotations

_DAMAGE: dict[str, str] = {}   # what was found damaged (file -> message), once per process
REPAIR = "run `geneb-engine doctor --repair`"


def damage() -> list[str]:
    """Every damage message this process met so far, once each."""
    return list(_DAMAGE.values())


def note(key: str, message: str) -> None:
    """Record the damage `key` (its file) once, with its message."""
    _DAMAGE.setdefault(key, message)
