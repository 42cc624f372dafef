"""The `costmodel` command. Every subcommand takes --json; errors go to stderr with exit code 2.

Subcommands living in other modules register themselves through a `register(subparsers)` function
listed in SUBCOMMAND_MODULES; probe commands import `probes` lazily inside their handlers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import math
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from costmodel.errors import CostmodelError
from costmodel.units import printable

SUBCOMMAND_MODULES = (
    "costmodel.cli_catalog",
    "costmodel.cli_prices",
    "costmodel.cli_simulate",
    "costmodel.cli_compare",
    "costmodel.cli_probe",
    "costmodel.cli_endpoint",
    "costmodel.cli_memo",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage + exits 2; keep that, name the fix
        self.print_usage(sys.stderr)
        sys.stderr.write(f"costmodel: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered subcommand."""
    parser = _Parser(prog="costmodel", description="API vs self-hosted LLM serving: latency, memory and cost.")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # subcommand not built yet in this checkout
            raise
        module.register(subparsers)
    return parser


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


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Library warnings (e.g. a skipped model file) as one 'costmodel: warning:' line on stderr."""
    sys.stderr.write(f"costmodel: warning: {printable(str(message), keep_newlines=True)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            result = args.handler(args)
    except CostmodelError as exc:
        sys.stderr.write(f"costmodel: error: {printable(str(exc), keep_newlines=True)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("costmodel: interrupted\n")
        return 130
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
