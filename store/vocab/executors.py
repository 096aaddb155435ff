"""The executors `fill` offers and what names a Ray cluster (`fill --executor`, `--address`):
the one rule, for the engine's command line and the dashboard's runner."""

from __future__ import annotations

import re

IN_PROCESS = "local"   # this process and its `--jobs` workers; also the telemetry's worker name
RAY = "ray"
EXECUTORS: tuple[str, ...] = (IN_PROCESS, RAY)
_ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9._-]+:(\d{1,5})$")


def check_address(address: str) -> str:
    """`auto`, `HOST:PORT` or `ray://HOST:PORT` (port 1..65535); ValueError saying what is
    wrong otherwise."""
    m = _ADDRESS.match(address)
    if address != "auto" and (m is None or not 1 <= int(m.group(2)) <= 65535):
        raise ValueError(f"a Ray address is auto, HOST:PORT or ray://HOST:PORT, not {address!r}")
    return address
