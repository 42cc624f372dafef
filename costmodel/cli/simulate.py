"""`costmodel simulate` (latency percentiles, throughput, goodput) and `costmodel capacity` (rate at SLO): the two
commands and their reports; the inputs they share are read in `costmodel.cli.serving_args`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from costmodel.cli import progress
from costmodel.cli.calibration_args import serving_calibration_file
from costmodel.cli.disaggregated import run_disaggregated_capacity, run_disaggregated_simulate
from costmodel.cli.measured_serving import run_measured_capacity, run_measured_simulate
from costmodel.cli.mode_args import (
    mode_line,
    mode_payload,
    refuse_modes_with_measured,
)
from costmodel.cli.output import bounded_float, bounded_int, emit
from costmodel.cli.serving_args import MAX_ARRIVAL_SECONDS as MAX_ARRIVAL_SECONDS
from costmodel.cli.serving_args import MAX_SIMULATED_REQUESTS as MAX_SIMULATED_REQUESTS
from costmodel.cli.serving_args import (
    add_serving_flags,
    check_slo_physical,
    cli_replica,
    read_arrivals,
    scheduler_settings,
    slo_limits,
    token_distribution,
)
from costmodel.errors import CostmodelError
from costmodel.measurements.endpoint_calibration import EndpointCalibration
from costmodel.serving import SimulationResult, simulate
from costmodel.serving.capacity import (
    MAX_CONVERGE_REQUESTS,
    CapacityResult,
    CapacitySearch,
    converged_capacity,
)
from costmodel.serving.closed_loop import MAX_CONCURRENCY
from costmodel.serving.curve import CurvePoint, throughput_interactivity_curve
from costmodel.units import fmt_seconds

MAX_RATE = 1e6  # requests/s: beyond any single replica (the minimum is checked by the simulator)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `simulate` and `capacity`."""
    sim = subparsers.add_parser("simulate", help="continuous-batching simulation: TTFT/TPOT/E2E percentiles, goodput")
    add_serving_flags(sim, requests=1000)
    sim.add_argument("--rate", type=bounded_float(None, MAX_RATE), help="arrival rate, requests/s (Poisson, or gamma with --burstiness)")
    sim.add_argument("--arrivals", type=Path, help="replay arrival times: a JSON list or one number (s) per line")
    sim.add_argument("--concurrency", type=bounded_int(None, MAX_CONCURRENCY), default=None,
                     help="closed loop instead of a rate: keep N requests in flight (a client sends its next request"
                          " when its last finishes, like vLLM bench --max-concurrency); reports tokens/s per GPU and per user")
    sim.set_defaults(handler=run_simulate)

    cap = subparsers.add_parser("capacity", help="highest arrival rate per replica meeting the SLO")
    add_serving_flags(cap, requests=2000)
    cap.add_argument("--curve", action="store_true", help="add the throughput-vs-interactivity curve")
    cap.set_defaults(handler=run_capacity)


def _arrivals_text(args: argparse.Namespace, replay: list[float] | None) -> str:
    if args.concurrency is not None:
        return f"in a closed loop of {args.concurrency} in flight"
    if replay is not None:
        return f"replayed from {args.arrivals}"
    text = f"at {args.rate:g} req/s"
    return text + (f" (gamma, burstiness {args.burstiness:g})" if args.burstiness != 1.0 else "")


def _describe(tokens: int, sigma: float) -> str:
    return str(tokens) if sigma == 0 else f"mean {tokens} (lognormal sigma {sigma:g})"


def _table(result: SimulationResult) -> list[str]:
    lines = [f"  {'':8s}{'p50':>11s}{'p90':>11s}{'p99':>11s}{'mean':>11s}"]
    rows = (("TTFT", result.ttft), ("TPOT", result.tpot), ("ITL", result.itl), ("E2E", result.e2e), ("queue", result.queue))
    for name, summary in rows:
        cells = [summary.p50_seconds, summary.p90_seconds, summary.p99_seconds, summary.mean_seconds]
        lines.append(f"  {name:8s}" + "".join(f"{fmt_seconds(v) if np.isfinite(v) else 'n/a':>11s}" for v in cells))
    return lines


def run_simulate(args: argparse.Namespace) -> int:
    prompt = token_distribution("--prompt-tokens", args.prompt_tokens, args.prompt_sigma)
    output = token_distribution("--output-tokens", args.output_tokens, args.output_sigma)
    limits = slo_limits(args)
    replay = read_arrivals(args.arrivals) if args.arrivals else None
    given = [flag for flag, value in (("--rate", args.rate), ("--arrivals", replay), ("--concurrency", args.concurrency))
             if value is not None]
    if len(given) != 1:
        raise CostmodelError("give --rate R (requests/s), --arrivals FILE or --concurrency N, exactly one "
                             f"(got {', '.join(given) or 'none'})")
    measured = serving_calibration_file(args)
    if isinstance(measured, EndpointCalibration) and args.concurrency is not None:
        raise CostmodelError("--concurrency runs the roofline simulator; a calibrate-endpoint file takes --rate or --arrivals")
    if isinstance(measured, EndpointCalibration):
        refuse_modes_with_measured(args)
        return run_measured_simulate(args, measured, prompt=prompt, output=output, limits=limits, replay=replay)
    if args.mode == "disaggregated":
        scheduler_settings(args)
        return run_disaggregated_simulate(args, cli_replica, prompt=prompt, output=output, limits=limits, replay=replay)
    replica = cli_replica(args)
    if limits and replica.fits:
        check_slo_physical(replica, args, limits, prompt, output)
    with progress.bar(args, total=1, desc=f"simulating {args.requests:,} requests"):
        result = simulate(
            replica, prompt_tokens=prompt, output_tokens=output, rate_per_second=args.rate, requests=args.requests,
            seed=args.seed, burstiness=args.burstiness, replay_seconds=replay,
            prefix_cached_fraction=args.prefix_cached_fraction, slo=limits, kv_policy=args.kv_policy,
            max_num_seqs=replica.running_cap(args.max_num_seqs), concurrency=args.concurrency,
        )
    arrivals = _arrivals_text(args, replay)
    lines = [
        f"{result.model_id} on {result.gpus} x {result.hardware_id}  weights {result.weight_dtype}, KV {result.kv_dtype},"
        f" engine {result.engine};"
        f" {result.requests} requests {arrivals}, prompt {_describe(args.prompt_tokens, args.prompt_sigma)},"
        f" output {_describe(args.output_tokens, args.output_sigma)} tokens",
        *_table(result),
        f"  throughput {result.output_tokens_per_second:,.0f} output tokens/s ({result.total_tokens_per_second:,.0f} total),"
        f" {result.requests_per_second:.3g} requests/s over {result.duration_seconds:,.1f} s",
        f"  batch      mean {result.mean_batch:.1f} running, max {result.max_running}; preemptions {result.preemptions};"
        f" rejected {result.rejected}; KV holds {result.kv_capacity_tokens:,} tokens",
    ]
    if args.concurrency is not None:
        lines.append(f"  closed loop {args.concurrency} in flight: {result.output_tokens_per_second_per_gpu:,.0f} output "
                     f"tokens/s per GPU, {result.output_tokens_per_second_per_user:.1f} tokens/s per user (1 / mean TPOT)")
    if limits and result.goodput_requests_per_second is not None:
        verdict = "met" if result.meets_slo else "NOT met"
        names = ", ".join(f"{lim.metric.upper()} p90 <= {fmt_seconds(lim.limit_seconds)}" for lim in limits)
        lines.append(f"  goodput    {result.goodput_requests_per_second:.3g} requests/s within {names}"
                     f" ({result.slo_attainment:.1%} of requests); SLO {verdict}")
    payload: dict[str, object] = {**result.contract(), **mode_payload(replica)}
    lines += [line for line in (mode_line(replica),) if line]
    for metric in ("ttft", "tpot"):
        part = result.breakdown(metric, 50.0)
        payload[f"{metric}_breakdown_seconds"] = None if part is None else part.as_dict()
        lines.append(_owner_line(result, metric))
    emit(payload, as_json=args.json, text="\n".join(lines))
    return 0


def _owner_line(result: SimulationResult, metric: str) -> str:
    part = result.breakdown(metric, 50.0)
    if part is None:
        return f"  {metric.upper():5s}      p50 breakdown n/a"
    cells = ", ".join(f"{name} {fmt_seconds(seconds)}" for name, seconds in part.parts_seconds if seconds > 0)
    return f"  {metric.upper()} p50 = {cells}"


def capacity_payload(result: CapacityResult, curve: tuple[CurvePoint, ...]) -> dict[str, Any]:
    """The `costmodel capacity --json` object."""
    run = result.at_capacity
    payload: dict[str, Any] = {
        "feasible": result.feasible,
        "reason": result.reason,
        "max_rate_requests_per_second": result.max_rate_requests_per_second,
        "output_tokens_per_second": result.output_tokens_per_second,
        "output_tokens_per_second_per_gpu": result.output_tokens_per_second_per_gpu,
        "gpus": result.gpus,
        "saturation_rate_requests_per_second": result.saturation_rate_requests_per_second,
        "saturation_bound": result.saturation_bound,
        "simulations": result.simulations,
        "requests_per_simulation": result.requests_per_simulation,
        "capacity_ci_low": result.capacity_ci_low,
        "capacity_ci_high": result.capacity_ci_high,
        "converged": result.converged,
        **{f"zero_load_{key}": value for key, value in result.zero_load_seconds.items()},
        **{f"slo_{lim.key}": lim.limit_seconds for lim in result.slo_limits},
    }
    if run is not None:
        for name in ("ttft", "tpot", "e2e"):
            for pct in (50, 90, 99):
                payload[f"{name}_p{pct}_seconds"] = getattr(getattr(run, name), f"p{pct}_seconds")
        payload["goodput_requests_per_second"] = run.goodput_requests_per_second
    if curve:
        payload["curve"] = [vars(point) for point in curve]
    return payload


def run_capacity(args: argparse.Namespace) -> int:
    prompt = token_distribution("--prompt-tokens", args.prompt_tokens, args.prompt_sigma)
    output = token_distribution("--output-tokens", args.output_tokens, args.output_sigma)
    limits = slo_limits(args)
    if not limits:
        raise CostmodelError("give at least one of --slo-ttft-p90 S and --slo-tpot-p90 S")
    if not 1 <= args.requests <= 200_000:
        raise CostmodelError(f"--requests must be between 1 and 200,000 for capacity (got {args.requests})")
    measured = serving_calibration_file(args)
    if isinstance(measured, EndpointCalibration):
        refuse_modes_with_measured(args)
        return run_measured_capacity(args, measured, limits=limits)
    if args.mode == "disaggregated":
        scheduler_settings(args)
        return run_disaggregated_capacity(args, cli_replica, search=CapacitySearch(
            prompt_tokens=prompt, output_tokens=output, slo=limits, seed=args.seed, requests=args.requests,
            prefix_cached_fraction=args.prefix_cached_fraction, burstiness=args.burstiness, kv_policy=args.kv_policy,
            max_num_seqs=args.max_num_seqs, rate_tolerance=0.02))
    replica = cli_replica(args)
    # The request count doubles from --requests until the capacity's 95% interval is within 5% (or the bound).
    search = CapacitySearch(prompt_tokens=prompt, output_tokens=output, slo=limits, seed=args.seed, requests=args.requests,
                            prefix_cached_fraction=args.prefix_cached_fraction, burstiness=args.burstiness,
                            kv_policy=args.kv_policy, max_num_seqs=args.max_num_seqs, rate_tolerance=0.02)
    curve: tuple[CurvePoint, ...] = ()
    with progress.bar(args, total=2 if args.curve else 1, desc="capacity") as shown:
        shown.note("bisecting the arrival rate")
        result = converged_capacity(replica, search, max_requests=max(args.requests, MAX_CONVERGE_REQUESTS))
        shown.step("the throughput-vs-interactivity curve")
        if args.curve and replica.fits:
            curve = throughput_interactivity_curve(replica, prompt_tokens=prompt, output_tokens=output, seed=args.seed,
                                                   prefix_cached_fraction=args.prefix_cached_fraction,
                                                   kv_policy=args.kv_policy)
    head = f"{replica.model_id} on {replica.gpus} x {replica.hardware_id}  weights {replica.weight_dtype}, KV {replica.kv_dtype}"
    if not result.feasible:
        lines = [head, f"  infeasible: {result.reason}"]
    else:
        run = result.at_capacity
        assert run is not None
        bound = " (throughput-bound: the SLO holds up to saturation)" if result.saturation_bound else ""
        lines = [
            head,
            f"  capacity   {result.max_rate_requests_per_second:.3g} requests/s per replica{bound}; 95% interval"
            f" {result.capacity_ci_low:.3g}-{result.capacity_ci_high:.3g}"
            f" ({'converged' if result.converged else 'NOT converged within the work bound'})",
            f"  throughput {result.output_tokens_per_second:,.0f} output tokens/s per replica, "
            f"{result.output_tokens_per_second_per_gpu:,.0f} per GPU",
            f"  there      TTFT p90 {fmt_seconds(run.ttft.p90_seconds)}, TPOT p90 {fmt_seconds(run.tpot.p90_seconds)}"
            f" (saturation {result.saturation_rate_requests_per_second:.3g} requests/s; {result.simulations} simulations"
            f" of {result.requests_per_simulation} requests)",
        ]
    if curve:
        lines.append(f"  {'users':>6s} {'tok/s/GPU':>10s} {'tok/s/user':>11s} {'TPOT p50':>9s}")
        lines += [f"  {p.concurrency:6d} {p.output_tokens_per_second_per_gpu:10,.0f} {p.output_tokens_per_second_per_user:11.1f}"
                  f" {fmt_seconds(p.tpot_p50_seconds):>9s}" for p in curve]
    lines += [line for line in (mode_line(replica),) if line]
    emit({**capacity_payload(result, curve), **mode_payload(replica)}, as_json=args.json, text="\n".join(lines))
    return 0
