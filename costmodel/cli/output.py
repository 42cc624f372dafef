"""What the CLI prints: one JSON object (--json) or text, NaN/inf as null; shared argument types.

Only `costmodel.cli` prints; the library returns typed results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
from collections.abc import Callable
from typing import Any

from costmodel.errors import UnwrittenOutputError
from costmodel.units import printable


def parse_date(text: str) -> dt.date:
    """argparse type for `--date YYYY-MM-DD` (one "as of" date for retirements, price ages and memos)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a date; use YYYY-MM-DD, e.g. 2026-12-01") from None


def json_safe(value: Any) -> Any:
    """Replace NaN/inf (not valid JSON) by None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def emit(payload: dict[str, Any], *, as_json: bool, text: str) -> None:
    """Print one JSON object (--json) or the human-readable text."""
    if as_json:
        sys.stdout.write(json.dumps(json_safe(payload), indent=2, default=str, allow_nan=False) + "\n")
    else:  # text may echo outside text (server bodies, model names): no control or bidi characters
        sys.stdout.write(printable(text.rstrip("\n"), keep_newlines=True) + "\n")


def emit_unwritten(error: UnwrittenOutputError, *, as_json: bool) -> None:
    """The content of an output file that could not be written: as it is, or with --json inside one object
    {"written": false, "path", "error", "content"}."""
    if as_json:
        payload = {"written": False, "path": error.path, "error": str(error), "content": error.content}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.stdout.write(printable(error.content.rstrip("\n"), keep_newlines=True) + "\n")


def error_line(message: str) -> None:
    """'costmodel: error: ...' on stderr, control and bidi characters stripped."""
    sys.stderr.write(f"costmodel: error: {printable(message, keep_newlines=True)}\n")


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """Library warnings (e.g. a skipped model file) as one 'costmodel: warning:' line on stderr."""
    sys.stderr.write(f"costmodel: warning: {printable(str(message), keep_newlines=True)}\n")


def bounded_int(low: int | None, high: int) -> Callable[[str], int]:
    """argparse type: an integer in [low, high] (low None: checked later, with the library's message);
    anything else exits 2 naming the flag and the range."""

    def parse(text: str) -> int:
        span = f"{low:,}..{high:,}" if low is not None else f"at most {high:,}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer; give one {span}") from None
        if value > high or (low is not None and value < low):
            raise argparse.ArgumentTypeError(f"{value:,} is out of range; give an integer {span}")
        return value

    return parse


def bounded_float(low: float | None, high: float) -> Callable[[str], float]:
    """argparse type: a finite number in [low, high] (no nan/inf; low None: checked later, with the
    library's message); anything else exits 2 with the range."""

    def parse(text: str) -> float:
        span = f"in {low:g}..{high:g}" if low is not None else f"at most {high:g}"
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number; give one {span}") from None
        if not math.isfinite(value) or value > high or (low is not None and value < low):
            raise argparse.ArgumentTypeError(f"{text} is out of range; give a finite number {span}")
        return value

    return parse


def finite_float(text: str) -> float:
    """argparse type: any finite number (nan/inf exit 2); the range is checked where the value is used."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number")
    return value
