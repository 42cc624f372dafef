"""Constants of time and tokens, the formatting of SI quantities for people, and outside text made safe
to echo, in one place.

Every module that converts months, hours or millions of tokens imports the constant from here; the CLI,
the app and the memo format numbers with these functions (one formatter per quantity).
"""

from __future__ import annotations

import math
import unicodedata

# A month is a Julian year / 12 (what cloud bills average to): 30.4375 days, 730.5 hours.
DAYS_PER_YEAR = 365.25
HOURS_PER_YEAR = DAYS_PER_YEAR * 24.0  # 8,766 h
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0  # 730.5 h
DAYS_PER_MONTH = DAYS_PER_YEAR / 12.0  # 30.4375 d
SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0
SECONDS_PER_MONTH = DAYS_PER_MONTH * SECONDS_PER_DAY  # 2,629,800 s
TOKENS_PER_MTOK = 1e6  # prices are quoted in USD per million tokens


# Unicode categories stripped from text we echo but did not write (server error bodies, model names from
# a config.json, file names): Cc control characters (ESC starts terminal escape sequences), Cf format
# characters (the bidi overrides U+202A-U+202E and isolates U+2066-U+2069 that reorder what a terminal
# shows, zero-width characters), Zl/Zp line and paragraph separators, Cs lone surrogates. Unicode
# Standard Annex #9 (bidi) and ECMA-48 (control functions).
_STRIPPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` without control, bidi-override and other invisible format characters (see above).

    Tabs become spaces; with `keep_newlines`, "\n" is kept (multi-line messages), else it becomes a space.
    """
    kept = []
    for char in text:
        if char == "\n" and keep_newlines:
            kept.append(char)
        elif char in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(char) not in _STRIPPED_CATEGORIES:
            kept.append(char)
    return "".join(kept)


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


def fmt_ms_column(seconds: float | None) -> str:
    """A latency for a narrow table column: '46ms' ('?' when unknown); whole hours as '24h' (a batch window)."""
    if seconds is not None and seconds >= 3600.0 and seconds % 3600.0 == 0:
        return f"{seconds / 3600.0:.0f}h"
    return "?" if seconds is None else f"{seconds * 1e3:.0f}ms"


def fmt_money(usd: float | None) -> str:
    """Whole dollars as `costmodel compare` prints them: '$2,952'; the sign before the dollar ('-$127');
    cents below $10 so tiny sums do not all read '$0' ('$0.42'); 'n/a' when not finite."""
    if usd is None or not math.isfinite(usd):
        return "n/a"
    sign = "-" if usd < 0 and round(abs(usd), 2) > 0 else ""
    magnitude = abs(usd)
    if 0 < magnitude < 10:
        return f"{sign}${magnitude:,.2f}"
    return f"{sign}${magnitude:,.0f}"


def fmt_per_mtok(usd: float | None) -> str:
    """USD per million tokens, three decimals as `costmodel compare` prints: '$0.262'."""
    return "n/a" if usd is None or not math.isfinite(usd) else f"${usd:,.3f}"


def fmt_pct(value: float | None) -> str:
    """'37%' ('-' when missing)."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.0%}"


def fmt_share(value: float) -> str:
    """A share such as a saving: '37%', with as many decimals (up to 2) as keep a partial share from reading
    '100%' or '0%' ('99.99%', '0.04%'; '>99.99%' / '<0.01%' beyond), so a saving short of the whole bill never
    reads as total."""
    if not math.isfinite(value):
        return "-"
    if value in (0.0, 1.0) or abs(value) >= 1.0:
        return f"{value:.0%}"
    for digits in range(3):
        if round(abs(value) * 100.0, digits) not in (0.0, 100.0):
            return f"{value:.{digits}%}"
    sign = "-" if value < 0 else ""
    return f"{sign}>99.99%" if abs(value) > 0.5 else f"{sign}<0.01%"


def fmt_count(count: float | None) -> str:
    """Token or request counts: '11.26B', '845.3M', '12.4k'."""
    if count is None or not math.isfinite(count):
        return "n/a"
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(count) >= scale:
            return f"{count / scale:,.2f}{unit}"
    return f"{count:,.0f}"


def counted(count: int, noun: str) -> str:
    """'1 replica', '3 replicas', '0 GPUs': the count with its noun in the right number, never a hedged '(s)'."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def fmt_latency(seconds: float | None) -> str:
    """'46 ms' below a second, '1.20 s' above ('?' when unknown)."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    return f"{seconds:.2f} s" if seconds >= 1.0 else f"{seconds * 1e3:.0f} ms"


def fmt_times(ratio: float) -> str:
    """A multiple: '2.1x', '0.45x', '12x'."""
    if ratio >= 10:
        return f"{ratio:,.0f}x"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"
