"""The `costmodel` command. Every subcommand takes --json; errors go to stderr with exit code 2.

Subcommands living in other modules register themselves through a `register(subparsers)` function
listed in SUBCOMMAND_MODULES; probe commands import `probes` lazily inside their handlers. What is
printed goes through `costmodel.cli.output` (the only place that writes to stdout/stderr).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from costmodel.cli.output import emit, emit_unwritten, error_line, json_safe, parse_date, show_warning
from costmodel.errors import CostmodelError, UnwrittenOutputError

__all__ = ["build_parser", "emit", "json_safe", "main", "parse_date"]

SUBCOMMAND_MODULES = (
    "costmodel.cli.catalog",
    "costmodel.cli.prices",
    "costmodel.cli.simulate",
    "costmodel.cli.compare",
    "costmodel.cli.search",
    "costmodel.cli.probe",
    "costmodel.cli.endpoint",
    "costmodel.cli.endpoint_calibrate",
    "costmodel.cli.memo",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage + exits 2; keep that, name the fix
        self.print_usage(sys.stderr)
        error_line(f"{message} (see --help)")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered subcommand."""
    parser = _Parser(prog="costmodel", description="API vs self-hosted LLM serving: latency, memory and cost.")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMAND_MODULES:  # explicit registration: each module adds its subcommand(s)
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            result = args.handler(args)
    except UnwrittenOutputError as exc:  # the work is done: print it rather than lose it
        emit_unwritten(exc, as_json=bool(getattr(args, "json", False)))
        error_line(str(exc))
        return 2
    except CostmodelError as exc:
        error_line(str(exc))
        return 2
    except OSError as exc:  # a file the command reads or writes failed underneath it (disk full, I/O error)
        where = f" {exc.filename}" if exc.filename else ""
        error_line(f"file error{where}: {exc.strerror or exc}; check the path and free space")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("costmodel: interrupted\n")
        return 130
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
