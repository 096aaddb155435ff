"""Heat shading: one red → yellow → green scale per column, over the range shown."""

from __future__ import annotations

_RED, _YELLOW, _GREEN = (0xD7, 0x5F, 0x5F), (0xD7, 0xC8, 0x5F), (0x5F, 0xAF, 0x6F)


def _mix(a, b, t):
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b, strict=True))


def heat_color(value: float, lo: float, hi: float) -> str:
    """`#rrggbb` for a value in [lo, hi] (a flat column is all yellow)."""
    t = 0.5 if hi <= lo else min(1.0, max(0.0, (value - lo) / (hi - lo)))
    rgb = _mix(_RED, _YELLOW, t * 2) if t < 0.5 else _mix(_YELLOW, _GREEN, (t - 0.5) * 2)
    return "#{:02x}{:02x}{:02x}".format(*rgb)
