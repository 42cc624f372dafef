"""`simulate` and `capacity` with `--calibration CAL.json` from `calibrate-endpoint`: the deployment's own
fitted step-time model (costmodel.measurements.endpoint_stepsim) runs instead of the roofline replica, and
every figure is labelled latency_source "measured" (a forced calibration says so in the JSON and the text).

The `simulate --json` / `capacity --json` keys are kept; what the step model does not give (ITL, queue,
KV capacity, GPUs) is None.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from costmodel.cli.output import emit
from costmodel.decision.measured_capacity import step_model
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration_files import describe
from costmodel.measurements.endpoint_calibration import CAPACITY_REQUESTS, EndpointCalibration, capacity
from costmodel.measurements.endpoint_stepsim import SimulatedLoad, StepModel, simulate
from costmodel.scenario.distributions import TokenDistribution
from costmodel.scenario.slo import SloLimit
from costmodel.serving.simulation import arrival_times, draw_lengths
from costmodel.units import fmt_seconds

MAX_MEASURED_REQUESTS = 50_000  # the step simulator is plain Python: ~1 s per few thousand requests


def _model(args: argparse.Namespace, calibration: EndpointCalibration) -> StepModel:
    model = step_model(calibration)
    if args.max_num_seqs is not None:  # the what-if on the measured deployment
        model = StepModel(**{**model.__dict__, "max_num_seqs": args.max_num_seqs})
    return model


def _header(calibration: EndpointCalibration) -> dict[str, Any]:
    return {"model": calibration.model, "hardware": None, "gpus": None, "engine": "measured",
            "latency_source": "measured", "calibration": describe(calibration),
            "calibration_forced": calibration.forced, "base_url": calibration.base_url}


def _summary(load: SimulatedLoad, prompts: list[int]) -> dict[str, Any]:
    e2e = [done - sent for done, sent in zip(load.done_seconds, load.sent_seconds, strict=True)]
    payload: dict[str, Any] = {}
    for name, values in (("ttft", load.ttft_seconds), ("tpot", load.tpot_seconds), ("e2e", e2e)):
        for q in (50, 90, 99):
            payload[f"{name}_p{q}_seconds"] = float(np.percentile(values, q)) if values else None
        payload[f"{name}_mean_seconds"] = float(np.mean(values)) if values else None
    for name in ("queue", "itl"):  # not modelled by the fitted step model
        payload.update({f"{name}_{stat}_seconds": None for stat in ("p50", "p90", "p99", "mean")})
    duration = max(load.done_seconds) - min(load.sent_seconds) if load.done_seconds else 0.0
    payload.update(duration_seconds=duration, output_tokens_per_second=load.output_tokens_per_second,
                   total_tokens_per_second=load.output_tokens_per_second + (sum(prompts) / duration if duration else 0.0),
                   requests_per_second=len(e2e) / duration if duration else 0.0, max_running=load.peak_running,
                   kv_capacity_tokens=None, preemptions=None, mean_batch=None, steps=None)
    return payload


def _check_requests(requests: int) -> None:
    if not 1 <= requests <= MAX_MEASURED_REQUESTS:
        raise CostmodelError(f"--requests must be between 1 and {MAX_MEASURED_REQUESTS:,} with an endpoint "
                             f"calibration (got {requests})")


def _forced_line(calibration: EndpointCalibration) -> list[str]:
    if not calibration.forced:
        return []
    return ["  FORCED calibration: written past its held-out check (" + "; ".join(calibration.problems) + ")"]


def run_measured_simulate(args: argparse.Namespace, calibration: EndpointCalibration, *, prompt: TokenDistribution,
                          output: TokenDistribution, limits: list[SloLimit], replay: list[float] | None) -> int:
    """`simulate --calibration CAL.json`: the measured step model under the given arrivals."""
    _check_requests(args.requests)
    requests = len(replay) if replay is not None else args.requests
    prompts, outputs = draw_lengths(prompt_tokens=prompt, output_tokens=output, requests=requests, seed=args.seed)
    sent = arrival_times(requests=requests, rate_per_second=args.rate, burstiness=args.burstiness, seed=args.seed,
                         replay_seconds=replay)
    prompt_list, output_list = [int(p) for p in prompts], [int(o) for o in outputs]
    load = simulate(_model(args, calibration), prompt_tokens=prompt_list, output_tokens=output_list,
                    sent_seconds=[float(t) for t in sent])
    payload = {**_header(calibration), "rate_per_second": args.rate, "requests": requests, "completed": requests,
               "rejected": 0, **_summary(load, prompt_list)}
    met = [payload[lim.key] is not None and payload[lim.key] <= lim.limit_seconds for lim in limits]
    payload.update(meets_slo=all(met) if limits else None, goodput_requests_per_second=None, slo_attainment=None,
                   **{f"slo_{lim.key}": lim.limit_seconds for lim in limits})
    lines = [f"measured step-time model of {calibration.base_url} ({calibration.model}): {requests} requests"
             + (f" at {args.rate:g} req/s" if replay is None else " replayed"),
             *_forced_line(calibration)]
    for name in ("ttft", "tpot", "e2e"):
        cells = [payload[f"{name}_p{q}_seconds"] for q in (50, 90, 99)]
        lines.append(f"  {name.upper():5s} p50/p90/p99 " + " / ".join(fmt_seconds(c) if c is not None else "n/a"
                                                                      for c in cells))
    lines.append(f"  throughput {load.output_tokens_per_second:,.0f} output tokens/s; at most {load.peak_running} "
                 "running" + ("" if not limits else f"; SLO {'met' if payload['meets_slo'] else 'NOT met'}"))
    emit(payload, as_json=args.json, text="\n".join(lines))
    return 0


def run_measured_capacity(args: argparse.Namespace, calibration: EndpointCalibration, *,
                          limits: list[SloLimit]) -> int:
    """`capacity --calibration CAL.json`: the highest Poisson rate the measured deployment sustains within
    the SLO at the mean lengths (fixed; the fit's capacity search uses one prompt and output length)."""
    slo = {lim.metric: lim.limit_seconds for lim in limits}
    model = _model(args, calibration)
    prompt, output = args.prompt_tokens, args.output_tokens
    rate, binding = capacity(model, prompt=prompt, output=output, slo_ttft=slo.get("ttft"), slo_tpot=slo.get("tpot"),
                             seed=args.seed)
    rng = np.random.default_rng(args.seed)
    sent = np.cumsum(rng.exponential(1.0 / max(rate, 1e-9), size=CAPACITY_REQUESTS)).tolist()
    load = simulate(model, prompt_tokens=[prompt] * CAPACITY_REQUESTS, output_tokens=[output] * CAPACITY_REQUESTS,
                    sent_seconds=sent)
    summary = _summary(load, [prompt] * CAPACITY_REQUESTS)
    feasible = rate > 0 and all(summary[lim.key] is not None and summary[lim.key] <= lim.limit_seconds
                                for lim in limits if lim.key in summary)
    reason = (f"binding limit {binding}" if feasible else
              f"even a near-idle deployment misses the SLO (binding limit {binding})")
    payload: dict[str, Any] = {
        **_header(calibration), "feasible": feasible, "reason": reason, "binding_limit": binding,
        "max_rate_requests_per_second": rate if feasible else 0.0,
        "output_tokens_per_second": rate * output if feasible else 0.0, "output_tokens_per_second_per_gpu": None,
        "saturation_rate_requests_per_second": None, "saturation_bound": binding in ("throughput", "max_num_seqs"),
        "simulations": None, "requests_per_simulation": CAPACITY_REQUESTS, "capacity_ci_low": None,
        "capacity_ci_high": None, "converged": None,
        "calibration_capacity_p10": calibration.capacity_p10, "calibration_capacity_p90": calibration.capacity_p90,
        **{f"slo_{lim.key}": lim.limit_seconds for lim in limits},
        **{k: v for k, v in summary.items() if k.split("_")[0] in ("ttft", "tpot", "e2e") and "mean" not in k},
    }
    lines = [f"measured step-time model of {calibration.base_url} ({calibration.model}), prompt {prompt}, output "
             f"{output} tokens", *_forced_line(calibration)]
    if feasible:
        lines += [f"  capacity   {rate:.3g} requests/s per replica ({reason})",
                  f"  there      TTFT p90 {fmt_seconds(summary['ttft_p90_seconds'])}, TPOT p90 "
                  f"{fmt_seconds(summary['tpot_p90_seconds'])}",
                  f"  the calibration's own 10-90% range at its SLO: {calibration.capacity_p10:.3g}-"
                  f"{calibration.capacity_p90:.3g} requests/s"]
    else:
        lines.append(f"  infeasible: {reason}")
    emit(payload, as_json=args.json, text="\n".join(lines))
    return 0
