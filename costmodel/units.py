"""Formatting for people (tables, CLI text, app, memo): SI quantities, and outside text made safe to echo."""

from __future__ import annotations

import unicodedata

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


def fmt_usd(usd: float) -> str:
    """'$1,234', '$0.42'."""
    return f"${usd:,.0f}" if abs(usd) >= 100 else f"${usd:,.2f}"
