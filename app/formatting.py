"""Table cells as people read them: never a raw None, nan or Infinity; units on every figure; thousands
separators; TPOT always in ms. Pure functions of one value each (the pages build their tables with them)."""

from __future__ import annotations

import math

MISSING = "-"


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def ms(seconds: float | None) -> str:
    """Seconds shown in milliseconds: '503 ms', '56.7 ms' (one decimal below 100 ms)."""
    if not _finite(seconds):
        return MISSING
    assert seconds is not None
    value = seconds * 1e3
    return f"{value:,.1f} ms" if value < 100 else f"{value:,.0f} ms"


def percent(fraction: float | None) -> str:
    """'37%' from 0.37."""
    return f"{fraction * 100:,.0f}%" if _finite(fraction) and fraction is not None else MISSING


def break_even_utilization(fraction: float | None) -> str:
    """Above 100% utilization cannot be reached: 'never at this size' instead of '253%'."""
    if not _finite(fraction) or fraction is None:
        return MISSING
    return "never at this size" if fraction > 1.0 else percent(fraction)


def billions_per_month(tokens: float | None, *, applies: bool) -> str:
    """A break-even volume: '24.85B tokens/month'; 'never' for a self-host option without one."""
    if not applies:
        return MISSING
    if not _finite(tokens) or tokens is None:
        return "never"
    return f"{tokens / 1e9:,.2f}B tokens/month"


def count(value: float | int | None) -> str:
    """'12,345'."""
    return f"{value:,.0f}" if value is not None and _finite(float(value)) else MISSING


def _tick_text(value: float, *, prefix: str) -> str:
    if value >= 1:
        return f"{prefix}{value:,.0f}"
    return f"{prefix}{value:.2f}" if value >= 0.01 else f"{prefix}{value:.2g}"


def log_ticks(low: float, high: float, *, prefix: str = "") -> tuple[list[float], list[str]]:
    """Tick values 1-2-5 per decade from `low` to `high` with full labels ('$0.50', '$2', '$1,000'), for a
    plotly log axis (its own minor labels read '5, 2' for 0.5 and 0.2)."""
    if not (_finite(low) and _finite(high)) or low <= 0 or high <= 0:
        return [], []
    low, high = min(low, high), max(low, high)
    values: list[float] = []
    decade = 10.0 ** math.floor(math.log10(low))
    while decade <= high * 10:
        for step in (1.0, 2.0, 5.0):
            value = step * decade
            if low / 1.0001 <= value <= high * 1.0001:
                values.append(value)
        decade *= 10
    if len(values) > 12:  # many decades: powers of ten only
        values = [v for v in values if math.isclose(10 ** round(math.log10(v)), v)]
    return values, [_tick_text(v, prefix=prefix) for v in values]


def usd(value: float | None, *, digits: int = 3) -> str:
    """'$0.150' (USD, fixed decimals); '-' when missing."""
    return f"${value:,.{digits}f}" if _finite(value) and value is not None else MISSING


def text(value: object) -> str:
    """Any optional cell as text: '' stays '', None is '-', dates in ISO form."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    return str(value)


def figure(value: float | None) -> str:
    """A measured or modelled figure with sensible precision: '80,531', '879.7', '12.3', '1.23', '0.0456'."""
    if not _finite(value) or value is None:
        return MISSING
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"
