"""Formatting of SI quantities for people (tables, CLI text, app, memo)."""

from __future__ import annotations


def fmt_seconds(seconds: float) -> str:
    """'12.3 ms', '1.20 s', '450 us'."""
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def fmt_bytes(num_bytes: float) -> str:
    """Decimal units, as datasheets use: '16.1 GB', '131 kB'."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(num_bytes) >= scale:
            return f"{num_bytes / scale:.1f} {unit}"
    return f"{num_bytes:.0f} B"


def fmt_usd(usd: float) -> str:
    """'$1,234', '$0.42'."""
    return f"${usd:,.0f}" if abs(usd) >= 100 else f"${usd:,.2f}"
