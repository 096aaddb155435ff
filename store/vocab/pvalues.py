"""How a p-value is shown: one wording for `report`, the site, the dashboard and any figure that
prints one (standard library only)."""

from __future__ import annotations

SMALLEST = "1e-300"   # what a p-value of 0.0 stands for: below what a float holds (an underflow)


def p_text(p: float | None) -> str:
    """A p-value in two significant digits, in exponent form below 1e-4 ('0.049', '3.2e-12');
    an underflowed 0.0 as '< 1e-300', never '0' or '0.00'; '—' (the sign for missing) for
    none (None or NaN)."""
    if p is None or p != p:
        return "—"
    if p == 0:
        return f"< {SMALLEST}"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def p_is(p: float, name: str = "p") -> str:
    """`name` and the p-value as a clause: 'p = 0.049', 'p < 1e-300'."""
    text = p_text(p)
    return f"{name} {text}" if text.startswith("<") else f"{name} = {text}"
