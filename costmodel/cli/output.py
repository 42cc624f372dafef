"""What the CLI prints: one JSON object (--json) or text, NaN/inf as null; shared argument types.

Only `costmodel.cli` prints; the library returns typed results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
from typing import Any


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
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")
