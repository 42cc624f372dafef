"""`costmodel calibrate-endpoint SWEEP.json --out CAL.json`: fit the step-time model to a load sweep,
check it on a held-out level, and report the capacity at the SLO with a 10-90% range.

Exit codes: 0 calibration written; 2 bad input (one level, a level where every request failed, a server
that changed behaviour mid-sweep, a held-out error above the bound: nothing written unless --force, and a
forced file says `forced: true` with its problems).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from costmodel.cli.output import emit
from costmodel.errors import CostmodelError
from costmodel.fileio import atomic_write_text, load_json_model, write_problem
from costmodel.measurements.endpoint_calibration import EndpointCalibration, calibrate
from costmodel.measurements.endpoint_result import MAX_CONCURRENCY
from costmodel.measurements.endpoint_sweep import EndpointSweep
from costmodel.units import fmt_seconds

WHAT_IF_KEYS = {"replicas": 1024, "max_num_seqs": MAX_CONCURRENCY}  # key -> largest value accepted
MAX_BOOTSTRAP = 1000


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `calibrate-endpoint` subcommand."""
    parser = subparsers.add_parser("calibrate-endpoint", help="fit a step-time model to a probe-endpoint sweep")
    parser.add_argument("sweep", type=Path, help="sweep JSON written by probe-endpoint --concurrency/--rates")
    parser.add_argument("--out", type=Path, required=True, help="calibration JSON to write (atomic)")
    parser.add_argument("--slo-ttft-p90", type=float, help="p90 TTFT objective, seconds")
    parser.add_argument("--slo-tpot-p90", type=float, help="p90 TPOT objective, seconds")
    parser.add_argument("--what-if", action="append", default=[], help="replicas=N or max_num_seqs=N (repeatable)")
    parser.add_argument("--bootstrap", type=int, default=16, help="bootstrap refits for the 10-90%% range")
    parser.add_argument("--force", action="store_true", help="write even when the held-out check fails")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_calibrate_endpoint)


def parse_what_if(items: list[str]) -> dict[str, int]:
    """`key=N` pairs with key in WHAT_IF_KEYS and 1 <= N <= its limit."""
    result: dict[str, int] = {}
    for item in items:
        key, _, text = item.partition("=")
        key = key.strip()
        if key not in WHAT_IF_KEYS:
            raise CostmodelError(f"--what-if {item!r}: give replicas=N or max_num_seqs=N")
        try:
            value = int(text)
        except ValueError:
            raise CostmodelError(f"--what-if {item!r}: {key} must be a whole number") from None
        if not 1 <= value <= WHAT_IF_KEYS[key]:
            raise CostmodelError(f"--what-if {key} must be between 1 and {WHAT_IF_KEYS[key]:,}, got {value}")
        result[key] = value
    return result


def _slo(value: float | None, flag: str) -> float | None:
    if value is not None and (not math.isfinite(value) or value <= 0 or value > 3600):
        raise CostmodelError(f"{flag} must be a finite number of seconds in (0, 3600], got {value}")
    return value


def run_calibrate_endpoint(args: argparse.Namespace) -> int:
    """Handler of `costmodel calibrate-endpoint`; returns the exit code."""
    slo_ttft, slo_tpot = _slo(args.slo_ttft_p90, "--slo-ttft-p90"), _slo(args.slo_tpot_p90, "--slo-tpot-p90")
    what_if = parse_what_if(args.what_if)
    if not 0 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise CostmodelError(f"--bootstrap must be between 0 and {MAX_BOOTSTRAP}, got {args.bootstrap}")
    problem = write_problem(args.out)
    if problem is not None:
        raise CostmodelError(f"--out {args.out}: cannot write there ({problem}); give a writable file path")
    sweep = load_json_model(args.sweep, EndpointSweep, what="sweep")
    result = calibrate(sweep, slo_ttft_p90_seconds=slo_ttft, slo_tpot_p90_seconds=slo_tpot, what_if=what_if,
                       bootstrap_samples=args.bootstrap)
    if result.problems and not args.force:
        raise CostmodelError("calibration not written: " + "; ".join(result.problems)
                             + ". Probe more levels or longer, or pass --force (the file is then marked forced)")
    if result.problems:
        result = result.model_copy(update={"forced": True})
    atomic_write_text(args.out, result.model_dump_json(indent=2) + "\n")
    emit(result.model_dump(mode="json"), as_json=args.json, text=format_calibration(result))
    return 0


def format_calibration(cal: EndpointCalibration) -> str:
    """Step model, held-out check and capacity, one line each."""
    held = cal.held_out[0]
    limit = f"{cal.concurrency_limit} sequences" if cal.concurrency_limit else "not reached"
    found = {"one_at_a_time": "; the server runs one request at a time",
             "continuous_batching": "; the server batches requests continuously"}.get(cal.server_scheduling or "", "")
    lines = [
        f"calibrate-endpoint {cal.base_url}  model {cal.model}{'  FORCED: ' + '; '.join(cal.problems) if cal.forced else ''}",
        f"  step model  {fmt_seconds(cal.overhead_seconds)} per step + {cal.prefill_token_seconds:.3g} s/prefill token"
        f" + {cal.decode_sequence_seconds:.3g} s/sequence + {cal.context_token_seconds:.3g} s/context token; "
        f"{fmt_seconds(cal.request_fixed_seconds)} per request; concurrency limit {limit}{found}",
        f"  fit on levels {', '.join(f'{v:g}' for v in cal.levels_fit)}; held out {held.value:g}: "
        f"TTFT p50 {fmt_seconds(held.ttft_p50_predicted_seconds)} vs {fmt_seconds(held.ttft_p50_measured_seconds)}, "
        f"TPOT p50 {fmt_seconds(held.tpot_p50_predicted_seconds)} vs {fmt_seconds(held.tpot_p50_measured_seconds)}, "
        f"throughput {held.throughput_predicted_tokens_per_second:.1f} vs "
        f"{held.throughput_measured_tokens_per_second:.1f} tokens/s (predicted vs measured)",
        f"  capacity    {cal.capacity_requests_per_second:.3g} requests/s (10-90%: {cal.capacity_p10:.3g}-"
        f"{cal.capacity_p90:.3g}), bound by {cal.binding_limit}"
        + (f"; what-if {cal.what_if}" if cal.what_if else ""),
    ]
    return "\n".join(lines)
