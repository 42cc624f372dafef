"""`costmodel simulate` (latency percentiles, throughput, goodput) and `costmodel capacity` (rate at SLO)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from costmodel.catalog import load_model
from costmodel.cli import progress
from costmodel.cli.calibration_args import calibrated_hardware, serving_calibration_file
from costmodel.cli.catalog import add_config_flags
from costmodel.cli.disaggregated import run_disaggregated_capacity, run_disaggregated_simulate
from costmodel.cli.measured_serving import run_measured_capacity, run_measured_simulate
from costmodel.cli.mode_args import (
    add_mode_flags,
    mode_line,
    mode_payload,
    refuse_modes_with_measured,
    with_speculation,
)
from costmodel.cli.output import bounded_float, bounded_int, emit, finite_float
from costmodel.cli.progress import add_quiet_flag
from costmodel.errors import CostmodelError
from costmodel.estimate import check_config
from costmodel.fileio import read_user_text
from costmodel.measurements.calibration import Calibration
from costmodel.measurements.endpoint_calibration import EndpointCalibration
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.scenario.distributions import FixedTokens, LognormalTokens, TokenDistribution
from costmodel.scenario.limits import (
    MAX_LATENCY_SECONDS,
    MAX_TOKENS_PER_REQUEST,
)
from costmodel.scenario.slo import SloLimit
from costmodel.serving import MAX_NUM_SEQS, Replica, SimulationResult, build_replica, simulate
from costmodel.serving.capacity import (
    MAX_CONVERGE_REQUESTS,
    CapacityResult,
    CapacitySearch,
    converged_capacity,
    zero_load_result,
    zero_load_seconds,
)
from costmodel.serving.closed_loop import MAX_CONCURRENCY
from costmodel.serving.curve import CurvePoint, throughput_interactivity_curve
from costmodel.serving.profile import MAX_SCHEDULER_STEPS, EngineSettings, engine_settings
from costmodel.serving.simulation import draw_lengths
from costmodel.units import fmt_seconds

MAX_SIMULATED_REQUESTS = 10_000_000  # ~100 s of simulation at the engine's speed; more is a typo
MAX_RATE = 1e6  # requests/s: beyond any single replica (the minimum is checked by the simulator)
MAX_ARRIVAL_SECONDS = 365.25 * 86_400.0  # a replayed trace of up to a year


def _serving_flags(parser: argparse.ArgumentParser, *, requests: int) -> None:
    add_config_flags(parser, with_batch=False)
    add_quiet_flag(parser)
    parser.add_argument("--prompt-sigma", type=finite_float, default=0.0,
                        help="lognormal sigma of prompt lengths around --prompt-tokens (mean); 0 = fixed")
    parser.add_argument("--output-sigma", type=finite_float, default=0.0,
                        help="lognormal sigma of output lengths around --output-tokens (mean); 0 = fixed")
    parser.add_argument("--requests", type=bounded_int(None, MAX_SIMULATED_REQUESTS), default=requests, help="requests to simulate")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0, help="random seed, 0..2^32-1")
    parser.add_argument("--burstiness", type=bounded_float(0.01, 100.0), default=1.0, help="gamma shape of arrival gaps (1 = Poisson)")
    parser.add_argument("--prefix-cached-fraction", type=bounded_float(0.0, 1.0), default=0.0,
                        help="share of each prompt already in the KV cache (shared prefix), 0..1 (the last token is always computed)")
    parser.add_argument("--slo-ttft-p90", type=bounded_float(None, MAX_LATENCY_SECONDS), help="p90 TTFT limit, s")
    parser.add_argument("--slo-tpot-p90", type=bounded_float(None, MAX_LATENCY_SECONDS), help="p90 TPOT limit, s")
    parser.add_argument("--max-num-seqs", type=bounded_int(None, 100_000), default=None,
                        help=f"running sequences at most (default: the engine's; generic {MAX_NUM_SEQS})")
    parser.add_argument("--max-batched-tokens", type=bounded_int(None, MAX_TOKENS_PER_REQUEST), default=None,
                        help=f"token budget per step (default: the engine's; generic {MAX_BATCHED_TOKENS})")
    parser.add_argument("--kv-policy", choices=("preempt", "reserve"), default=None,
                        help="KV full: preempt and recompute (vLLM) or reserve prompt+output at admission (TRT-LLM);"
                             " default: the engine's")
    parser.add_argument("--scheduler-steps", type=bounded_int(None, MAX_SCHEDULER_STEPS), default=None,
                        help="multi-step scheduling (vLLM v0.6 --num-scheduler-steps): the scheduler runs once per"
                             " this many decode steps and streams that many tokens per chunk; default 1")
    parser.add_argument("--gpu-memory-utilization", type=bounded_float(0.05, 1.0), default=None,
                        help="the engine's KV memory fraction under its own rule: vLLM's share of all HBM, "
                             "TensorRT-LLM's free_gpu_memory_fraction of what the weights leave; default the engine's (0.9)")
    add_mode_flags(parser)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `simulate` and `capacity`."""
    sim = subparsers.add_parser("simulate", help="continuous-batching simulation: TTFT/TPOT/E2E percentiles, goodput")
    _serving_flags(sim, requests=1000)
    sim.add_argument("--rate", type=bounded_float(None, MAX_RATE), help="arrival rate, requests/s (Poisson, or gamma with --burstiness)")
    sim.add_argument("--arrivals", type=Path, help="replay arrival times: a JSON list or one number (s) per line")
    sim.add_argument("--concurrency", type=bounded_int(None, MAX_CONCURRENCY), default=None,
                     help="closed loop instead of a rate: keep N requests in flight (a client sends its next request"
                          " when its last finishes, like vLLM bench --max-concurrency); reports tokens/s per GPU and per user")
    sim.set_defaults(handler=run_simulate)

    cap = subparsers.add_parser("capacity", help="highest arrival rate per replica meeting the SLO")
    _serving_flags(cap, requests=2000)
    cap.add_argument("--curve", action="store_true", help="add the throughput-vs-interactivity curve")
    cap.set_defaults(handler=run_capacity)


def _distribution(flag: str, mean: int, sigma: float) -> TokenDistribution:
    if mean < 1:
        raise CostmodelError(f"{flag} must be >= 1 token (got {mean})")
    try:
        return FixedTokens(tokens=mean) if sigma == 0 else LognormalTokens(mean_tokens=mean, sigma=sigma)
    except ValidationError as exc:
        raise CostmodelError(f"{flag.replace('tokens', 'sigma')} {sigma}: must be in (0, 3] ({exc.errors()[0]['msg']})") from exc


def _limits(args: argparse.Namespace) -> list[SloLimit]:
    limits = []
    for metric, value in (("ttft", args.slo_ttft_p90), ("tpot", args.slo_tpot_p90)):
        if value is None:
            continue
        if not (math.isfinite(value) and value > 0):
            raise CostmodelError(f"--slo-{metric}-p90 must be a positive number of seconds (got {value})")
        limits.append(SloLimit(metric, 90, value))  # type: ignore[arg-type]
    return limits


def _settings(args: argparse.Namespace) -> EngineSettings:
    """The --engine profile's scheduler settings, with --max-num-seqs/--max-batched-tokens/--kv-policy/
    --scheduler-steps/--gpu-memory-utilization over them."""
    settings = engine_settings(args.engine, longest_prompt_tokens=args.prompt_tokens, max_num_seqs=args.max_num_seqs,
                               max_batched_tokens=args.max_batched_tokens, kv_policy=args.kv_policy,
                               scheduler_steps=args.scheduler_steps, gpu_memory_utilization=args.gpu_memory_utilization)
    args.max_num_seqs, args.max_batched_tokens, args.kv_policy = (
        settings.max_num_seqs, settings.max_batched_tokens, settings.kv_policy)
    return settings


def _replica(args: argparse.Namespace) -> Replica:
    file = serving_calibration_file(args)
    calibration = file if isinstance(file, Calibration) else None
    # The mean lengths must fit the model's context window (longer draws are rejected by the simulator).
    check_config(load_model(args.model), gpus=args.gpus, weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype,
                 batch=1, prompt_tokens=args.prompt_tokens, output_tokens=args.output_tokens)
    settings = _settings(args)
    replica = build_replica(args.model, calibrated_hardware(args, file), gpus=args.gpus, weight_dtype=args.weight_dtype,
                            kv_dtype=args.kv_dtype, calibration=calibration, max_batched_tokens=args.max_batched_tokens,
                            engine=settings)
    return with_speculation(replica, args)


def _read_arrivals(path: Path) -> list[float]:
    text = read_user_text(path, what="--arrivals file")
    try:
        values = json.loads(text) if text.lstrip().startswith("[") else [float(x) for x in text.split()]
        arrivals = [float(v) for v in values]
    except (ValueError, TypeError, RecursionError) as exc:
        raise CostmodelError(f"--arrivals {path}: expected a JSON list of seconds or one number per line") from exc
    if not all(math.isfinite(t) and 0.0 <= t <= MAX_ARRIVAL_SECONDS for t in arrivals):
        raise CostmodelError(f"--arrivals {path}: every arrival time must be finite, in 0..{MAX_ARRIVAL_SECONDS:g} s")
    return arrivals


def check_slo_physical(replica: Replica, args: argparse.Namespace, limits: list[SloLimit], prompt: TokenDistribution,
                       output: TokenDistribution) -> None:
    """Refuse a limit below what the replica does with no queueing at all (each request alone)."""
    prompts, outputs = draw_lengths(prompt_tokens=prompt, output_tokens=output, requests=min(args.requests, 2000),
                                    seed=args.seed)
    alone = zero_load_result(replica, prompts=prompts, outputs=outputs,
                             prefix_cached_fraction=args.prefix_cached_fraction, kv_policy=args.kv_policy)
    for limit in limits:
        minimum = zero_load_seconds(alone, limit)
        if minimum > limit.limit_seconds:
            what = "a prefill" if limit.metric == "ttft" else "a decode step"
            raise CostmodelError(
                f"--slo-{limit.metric}-p90 {limit.limit_seconds:g} s is below the physical minimum: with no queueing "
                f"at all, p90 {limit.metric.upper()} is {minimum:.4g} s ({what} at batch 1 on {replica.gpus} x "
                f"{replica.hardware_id}); raise the limit, shorten the prompts, or use more/faster GPUs"
            )


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
    prompt = _distribution("--prompt-tokens", args.prompt_tokens, args.prompt_sigma)
    output = _distribution("--output-tokens", args.output_tokens, args.output_sigma)
    limits = _limits(args)
    replay = _read_arrivals(args.arrivals) if args.arrivals else None
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
        _settings(args)
        return run_disaggregated_simulate(args, _replica, prompt=prompt, output=output, limits=limits, replay=replay)
    replica = _replica(args)
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
    prompt = _distribution("--prompt-tokens", args.prompt_tokens, args.prompt_sigma)
    output = _distribution("--output-tokens", args.output_tokens, args.output_sigma)
    limits = _limits(args)
    if not limits:
        raise CostmodelError("give at least one of --slo-ttft-p90 S and --slo-tpot-p90 S")
    if not 1 <= args.requests <= 200_000:
        raise CostmodelError(f"--requests must be between 1 and 200,000 for capacity (got {args.requests})")
    measured = serving_calibration_file(args)
    if isinstance(measured, EndpointCalibration):
        refuse_modes_with_measured(args)
        return run_measured_capacity(args, measured, limits=limits)
    if args.mode == "disaggregated":
        _settings(args)
        return run_disaggregated_capacity(args, _replica, search=CapacitySearch(
            prompt_tokens=prompt, output_tokens=output, slo=limits, seed=args.seed, requests=args.requests,
            prefix_cached_fraction=args.prefix_cached_fraction, burstiness=args.burstiness, kv_policy=args.kv_policy,
            max_num_seqs=args.max_num_seqs, rate_tolerance=0.02))
    replica = _replica(args)
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
