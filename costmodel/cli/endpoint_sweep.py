"""`costmodel probe-endpoint` with several levels: the load sweep (closed loop or open-loop Poisson).

Progress goes to stderr one line per finished level; the sweep file (--out, required) is rewritten
atomically after each level, so Ctrl-C keeps the finished ones (`complete: false`). Exit codes: 0 when
every request succeeded, 1 when some failed (still written), 2 for bad flags.
"""

from __future__ import annotations

import argparse
import sys

from costmodel.cli.output import emit
from costmodel.cli.progress import wanted
from costmodel.errors import CostmodelError
from costmodel.fileio import write_problem
from costmodel.measurements.endpoint_result import MAX_CONCURRENCY, endpoint_settings
from costmodel.measurements.endpoint_sweep import EndpointSweep, SweepLevel, SweepSettings
from costmodel.units import fmt_seconds

# Open-loop rates above this are beyond any single endpoint a client thread pool can drive (requests/s).
MAX_RATE_PER_SECOND = 10_000.0
MAX_LEVELS = 64


def sweep_settings(args: argparse.Namespace, *, concurrency_values: list[float]) -> SweepSettings:
    """Check the sweep flags (each level as a single probe's flags would be) and build the settings."""
    from costmodel.cli.endpoint import parse_levels

    if args.rates is not None:
        if args.concurrency != "1":
            raise CostmodelError("give either --concurrency LIST (closed loop) or --rates LIST (open loop), not both")
        mode, levels = "rate", parse_levels(args.rates, flag="--rates", integer=False)
        for rate in levels:
            if rate > MAX_RATE_PER_SECOND:
                raise CostmodelError(f"--rates must be at most {MAX_RATE_PER_SECOND:,.0f} requests/s, got {rate:.3g}")
    else:
        mode, levels = "concurrency", concurrency_values
    if len(levels) > MAX_LEVELS:
        raise CostmodelError(f"a sweep has at most {MAX_LEVELS} levels, got {len(levels)}")
    base = None
    for value in levels:  # same checks and messages as a single probe
        base = endpoint_settings(
            base_url=args.url, model=args.model,
            concurrency=int(value) if mode == "concurrency" else min(MAX_CONCURRENCY, args.requests),
            requests_total=args.requests, prompt_tokens=args.prompt_tokens, max_tokens=args.max_tokens,
            timeout_seconds=args.timeout, api_key_env=args.api_key_env,
        )
    assert base is not None
    if args.out is None:
        raise CostmodelError("a sweep needs --out SWEEP.json (it is written level by level)")
    problem = write_problem(args.out)
    if problem is not None:
        raise CostmodelError(f"--out {args.out}: cannot write there ({problem}); give a writable file path "
                             "such as sweep.json")
    return SweepSettings(
        base_url=base.base_url, model=base.model, mode=mode, levels_planned=[float(v) for v in levels],
        requests_per_level=base.requests_total, prompt_tokens=base.prompt_tokens, max_tokens=base.max_tokens,
        timeout_seconds=base.timeout_seconds, api_key_env=base.api_key_env, arrival_seed=args.seed,
    )


def run_sweep_command(args: argparse.Namespace, *, concurrency_values: list[float]) -> int:
    """Handler of a multi-level `probe-endpoint`; returns the exit code (see module docstring)."""
    from costmodel.cli.endpoint import read_api_key

    settings = sweep_settings(args, concurrency_values=concurrency_values)
    api_key = read_api_key(env_name=args.api_key_env, ask=args.ask_key)

    from probes.sweep import run_sweep  # lazy: costmodel must not import probes at module level

    sweep = run_sweep(settings, api_key=api_key, out=args.out, on_level=_print_level if wanted(args) else None)
    emit(sweep.model_dump(mode="json"), as_json=args.json, text=format_sweep(sweep))
    return 0 if all(level.requests_failed == 0 for level in sweep.levels) else 1


def _level_line(level: SweepLevel) -> str:
    unit = "in flight" if level.mode == "concurrency" else "requests/s"

    def cell(value: float | None) -> str:
        return fmt_seconds(value) if value is not None else "-"

    return (f"{level.value:g} {unit}: {level.requests_ok} ok, {level.requests_failed} failed, "
            f"TTFT p50 {cell(level.ttft_p50_seconds)} p90 {cell(level.ttft_p90_seconds)}, "
            f"TPOT p50 {cell(level.tpot_p50_seconds)} p90 {cell(level.tpot_p90_seconds)}, "
            f"{level.output_tokens_per_second:.1f} tokens/s")


def _print_level(level: SweepLevel, position: int, total: int) -> None:
    sys.stderr.write(f"probe-endpoint: level {position + 1}/{total} done: {_level_line(level)}\n")
    sys.stderr.flush()


def format_sweep(sweep: EndpointSweep) -> str:
    """One line per level."""
    settings = sweep.settings
    lines = [f"probe-endpoint sweep {settings.base_url}  model {settings.model}  {settings.mode} mode, "
             f"{settings.requests_per_level} requests per level"]
    lines.extend(f"  {_level_line(level)}" for level in sweep.levels)
    return "\n".join(lines)
