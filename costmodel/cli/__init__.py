"""The `costmodel` command. Every subcommand takes --json; errors go to stderr with exit code 2.

Subcommands living in other modules register themselves through a `register(subparsers)` function
listed in SUBCOMMAND_MODULES; probe commands import `probes` lazily inside their handlers. What is
printed goes through `costmodel.cli.output` (the only place that writes to stdout/stderr).

Start-up imports only the module of the subcommand being run: `SUBCOMMANDS` names each subcommand, its
module and its one-line help, so `costmodel --help` lists them all without importing any, and `costmodel
estimate ...` never imports the decision, the search or the simulator (tests/test_cli_lazy.py checks the
table against the modules' own registrations).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import warnings
from collections.abc import Collection, Sequence
from typing import Any

from costmodel.cli.output import emit, emit_unwritten, error_line, json_safe, parse_date, show_warning
from costmodel.errors import CostmodelError, UnwrittenOutputError

__all__ = ["build_parser", "emit", "json_safe", "main", "parse_date"]

# (subcommand, the module whose register() adds it, its --help line), in the order `--help` lists them.
SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("estimate", "costmodel.cli.catalog", "prefill/decode latency and memory of one configuration"),
    ("models", "costmodel.cli.catalog", "the model catalog"),
    ("hardware", "costmodel.cli.catalog", "the accelerator catalog"),
    ("prices", "costmodel.cli.prices", "API and GPU-hour price sheets"),
    ("simulate", "costmodel.cli.simulate", "continuous-batching simulation: TTFT/TPOT/E2E percentiles, goodput"),
    ("capacity", "costmodel.cli.simulate", "highest arrival rate per replica meeting the SLO"),
    ("compare", "costmodel.cli.compare", "compare the options of scenario file(s): cost, SLO, break-even"),
    ("search", "costmodel.cli.search", "search models x GPUs x TP x precision for the cheapest configuration "
                                       "meeting the SLO, and the Pareto front"),
    ("probe", "costmodel.cli.probe", "time prefill/decode of a catalog model on this machine"),
    ("calibrate", "costmodel.cli.probe", "fit eff_compute, eff_memory and overhead to a probe result"),
    ("probe-endpoint", "costmodel.cli.endpoint",
     "TTFT/TPOT/ITL/E2E percentiles of an OpenAI-compatible streaming endpoint"),
    ("calibrate-endpoint", "costmodel.cli.endpoint_calibrate", "fit a step-time model to a probe-endpoint sweep"),
    ("memo", "costmodel.cli.memo", "write the PDF design-review memo for a scenario"),
)
SUBCOMMAND_MODULES = tuple(dict.fromkeys(module for _, module, _ in SUBCOMMANDS))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage + exits 2; keep that, name the fix
        self.print_usage(sys.stderr)
        error_line(f"{message} (see --help)")
        raise SystemExit(2)


def build_parser(*, only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser. By default every subcommand is registered by its module (all of them imported); with
    `only` the modules of those subcommands only, the others listed by name and help line (what `main`
    builds: `only=()` imports none, enough for `costmodel --help` and for naming a bad choice)."""
    parser = _Parser(prog="costmodel", description="API vs self-hosted LLM serving: latency, memory and cost.")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    wanted = {module for name, module, _ in SUBCOMMANDS if only is None or name in only}
    registered: set[str] = set()
    for name, module, help_text in SUBCOMMANDS:
        if module not in wanted:
            subparsers.add_parser(name, help=help_text)  # listed only; its module is not imported
        elif module not in registered:  # explicit registration: the module adds all of its subcommands
            importlib.import_module(module).register(subparsers)
            registered.add(module)
    return parser


def _command_name(argv: Sequence[str]) -> str | None:
    """The subcommand in argv (its first word not starting with '-'; the top level has no valued option)."""
    names = {name for name, _, _ in SUBCOMMANDS}
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in names else None


def _imported_parser(command: str | None) -> argparse.ArgumentParser:
    """`build_parser` for `command` with the cyclic garbage collector off while it imports the subcommand's
    modules, whose objects (modules, classes, functions, pydantic schemas) then move to the collector's
    permanent generation (`gc.freeze`, https://docs.python.org/3/library/gc.html#gc.freeze), once per process.

    They live as long as the process, so collecting them frees nothing; but the collections the imports
    triggered, and each full collection later in the run, walked all of them: `compare
    examples/chat-assistant.yaml --json`, gc.callbacks, 0.05 s of collections during the imports and a 0.03 s
    full collection during the run, of ~0.6 s CPU. Frozen once (the first call), so a process that calls
    `main` again does not freeze the garbage of its earlier calls.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser = build_parser(only=() if command is None else (command,))
        if not _FROZEN:
            gc.freeze()
            _FROZEN.append(True)
    finally:
        if collecting:
            gc.enable()
    return parser


_FROZEN: list[bool] = []  # [True] once `_imported_parser` has frozen the imports


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = _command_name(words)
    parser = _imported_parser(command)
    args = parser.parse_args(words)
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
