"""Calibrate an endpoint from a sweep: fit the step model, check it on a held-out level, and find the
request rate the endpoint sustains within the SLO (10-90% range by bootstrap over requests and refits).

Held-out level: the highest load (the question asked is how far the load can grow). Its p50 TTFT, p50
TPOT and output throughput are predicted by simulating that level (closed loop with the same clients,
or the same measured send times) and compared with what was measured.
Capacity: the highest Poisson rate at which the simulated p90 TTFT and TPOT meet the SLO and the server
keeps up (completions at >= KEEP_UP_FRACTION of the arrival rate), found by bisection.
"""

from __future__ import annotations

import random
from typing import Literal

import numpy as np
from pydantic import Field

from costmodel.errors import CostmodelError
from costmodel.measurements.endpoint_fit import Measured, check_level, design, peak_in_flight, solve, usable
from costmodel.measurements.endpoint_stepsim import StepModel, simulate
from costmodel.measurements.endpoint_sweep import EndpointSweep
from costmodel.strict import StrictModel
from costmodel.units import counted

# Held-out relative error allowed on p50 TTFT, p50 TPOT and throughput (our choice: a model off by more than
# a third at a load it did not see cannot place a capacity), with an absolute floor for latencies, since
# loopback timings of a few ms carry ~1 ms of thread-scheduling jitter on a shared host.
HOLDOUT_RELATIVE_ERROR_BOUND = 0.35
HOLDOUT_ABSOLUTE_FLOOR_SECONDS = 0.002
KEEP_UP_FRACTION = 0.9
CAPACITY_REQUESTS = 200  # simulated Poisson requests per tried rate
BISECTION_STEPS = 14

BindingLimit = Literal["ttft_p90_slo", "tpot_p90_slo", "max_num_seqs", "throughput"]
ServerScheduling = Literal["one_at_a_time", "continuous_batching"]


class HeldOutLevel(StrictModel):
    """Measured vs predicted at one held-out level."""

    value: float
    ttft_p50_measured_seconds: float
    ttft_p50_predicted_seconds: float
    ttft_p90_measured_seconds: float
    ttft_p90_predicted_seconds: float
    tpot_p50_measured_seconds: float
    tpot_p50_predicted_seconds: float
    tpot_p90_measured_seconds: float
    tpot_p90_predicted_seconds: float
    throughput_measured_tokens_per_second: float
    throughput_predicted_tokens_per_second: float


class EndpointCalibration(StrictModel):
    """The `calibrate-endpoint` result; the `--json` object and the CAL.json file."""

    kind: Literal["endpoint_calibration"] = "endpoint_calibration"
    base_url: str
    model: str
    forced: bool = Field(False, description="written with --force despite the problems listed")
    problems: list[str] = Field(default_factory=list)
    overhead_seconds: float
    prefill_token_seconds: float
    decode_sequence_seconds: float
    context_token_seconds: float
    request_fixed_seconds: float
    concurrency_limit: int | None = Field(description="most sequences the server ran at once; None: not reached")
    server_scheduling: ServerScheduling | None = Field(
        default=None, description="what the fit found the server to be: one_at_a_time (it never ran two "
        "sequences at once while the client had more in flight) or continuous_batching (None: a file written "
        "before this field)")
    levels_fit: list[float]
    levels_held_out: list[float]
    held_out: list[HeldOutLevel]
    holdout_ttft_p50_abs_error: float = Field(description="seconds, worst held-out level")
    holdout_tpot_p50_abs_error: float = Field(description="seconds, worst held-out level")
    holdout_throughput_abs_error: float = Field(description="output tokens/s, worst held-out level")
    holdout_relative_error_bound: float
    slo_ttft_p90_seconds: float | None
    slo_tpot_p90_seconds: float | None
    what_if: dict[str, int] = Field(default_factory=dict)
    capacity_requests_per_second: float
    capacity_p10: float
    capacity_p90: float
    binding_limit: BindingLimit
    ttft_p90_at_capacity_seconds: float
    tpot_p90_at_capacity_seconds: float
    bootstrap_samples: int


def server_scheduling_of(concurrency_limit: int | None) -> ServerScheduling:
    """One sequence at a time when the most ever seen running at once, with more in flight, was 1 (e.g.
    llama-cpp-python's server); else continuous batching (up to the limit, or none reached)."""
    return "one_at_a_time" if concurrency_limit == 1 else "continuous_batching"


def _metrics(prompt: list[int], output: list[int], *, model: StepModel, mode: str, value: float,
             sent: list[float]) -> tuple[float, float, float, float, float]:
    load = simulate(model, prompt_tokens=prompt, output_tokens=output,
                    sent_seconds=sent if mode == "rate" else None, clients=int(value), first_sends_seconds=sent)
    return (load.percentile("ttft", 50), load.percentile("ttft", 90), load.percentile("tpot", 50),
            load.percentile("tpot", 90), load.output_tokens_per_second)


def _measured_metrics(rows: list[Measured], wall_seconds: float) -> tuple[float, float, float, float, float]:
    ttft = [m.first - m.sent for m in rows]
    tpot = [(m.last - m.first) / (m.output - 1) for m in rows if m.output >= 2] or [0.0]
    wall = max(wall_seconds, max(m.last for m in rows))
    return (float(np.percentile(ttft, 50)), float(np.percentile(ttft, 90)), float(np.percentile(tpot, 50)),
            float(np.percentile(tpot, 90)), sum(m.output for m in rows) / wall)


def _meets(model: StepModel, rate: float, *, prompt: int, output: int, slo_ttft: float | None,
           slo_tpot: float | None, seed: int) -> BindingLimit | None:
    """None when the rate is sustained within the SLO, else the limit that failed first."""
    sent = _poisson(rate, seed)
    load = simulate(model, prompt_tokens=[prompt] * CAPACITY_REQUESTS, output_tokens=[output] * CAPACITY_REQUESTS,
                    sent_seconds=sent)
    if slo_ttft is not None and load.percentile("ttft", 90) > slo_ttft:
        return "ttft_p90_slo"
    if slo_tpot is not None and load.percentile("tpot", 90) > slo_tpot:
        return "tpot_p90_slo"
    achieved = CAPACITY_REQUESTS / (max(load.done_seconds) - sent[0])
    if achieved < KEEP_UP_FRACTION * rate:
        limited = model.max_num_seqs is not None and load.peak_running >= model.max_num_seqs
        return "max_num_seqs" if limited else "throughput"
    return None


def capacity(model: StepModel, *, prompt: int, output: int, slo_ttft: float | None, slo_tpot: float | None,
             replicas: int = 1, seed: int = 0) -> tuple[float, BindingLimit]:
    """Highest sustained Poisson rate (requests/s, all replicas; routing splits a Poisson stream into
    Poisson streams of rate/replicas) and the limit that binds just above it."""
    single = model.step_seconds(prefill_tokens=prompt, decoding=0, context_tokens=0) + output * model.step_seconds(
        prefill_tokens=0, decoding=1, context_tokens=prompt + output / 2)
    low, high = 0.0, 2.0 / max(single, 1e-9)
    for _ in range(40):  # grow until it fails
        if _meets(model, high, prompt=prompt, output=output, slo_ttft=slo_ttft, slo_tpot=slo_tpot, seed=seed):
            break
        low, high = high, high * 2
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        if _meets(model, middle, prompt=prompt, output=output, slo_ttft=slo_ttft, slo_tpot=slo_tpot, seed=seed):
            high = middle
        else:
            low = middle
    binding = _meets(model, high, prompt=prompt, output=output, slo_ttft=slo_ttft, slo_tpot=slo_tpot, seed=seed)
    return low * replicas, binding or "throughput"


def _held_out(model: StepModel, rows: list[Measured], *, mode: str, value: float, wall: float) -> HeldOutLevel:
    ordered = sorted(rows, key=lambda m: m.sent)
    predicted = _metrics([m.prompt for m in ordered], [m.output for m in ordered], model=model, mode=mode,
                         value=value, sent=[m.sent for m in ordered])
    measured = _measured_metrics(rows, wall)
    return HeldOutLevel(
        value=value,
        ttft_p50_measured_seconds=measured[0], ttft_p50_predicted_seconds=predicted[0],
        ttft_p90_measured_seconds=measured[1], ttft_p90_predicted_seconds=predicted[1],
        tpot_p50_measured_seconds=measured[2], tpot_p50_predicted_seconds=predicted[2],
        tpot_p90_measured_seconds=measured[3], tpot_p90_predicted_seconds=predicted[3],
        throughput_measured_tokens_per_second=measured[4], throughput_predicted_tokens_per_second=predicted[4],
    )


def _holdout_problems(level: HeldOutLevel, bound: float) -> list[str]:
    problems = []
    pairs = (("TTFT p50", level.ttft_p50_measured_seconds, level.ttft_p50_predicted_seconds, True),
             ("TPOT p50", level.tpot_p50_measured_seconds, level.tpot_p50_predicted_seconds, True),
             ("throughput", level.throughput_measured_tokens_per_second,
              level.throughput_predicted_tokens_per_second, False))
    for name, measured, predicted, is_latency in pairs:
        error = abs(predicted - measured)
        allowed = bound * measured + (HOLDOUT_ABSOLUTE_FLOOR_SECONDS if is_latency else 0.0)
        if error > allowed:
            problems.append(f"held-out level {level.value:g}: {name} predicted {predicted:.4g}, measured "
                            f"{measured:.4g} (error {error / measured if measured else float('inf'):.0%}, bound "
                            f"{bound:.0%})")
    return problems


def calibrate(
    sweep: EndpointSweep,
    *,
    slo_ttft_p90_seconds: float | None,
    slo_tpot_p90_seconds: float | None,
    what_if: dict[str, int],
    bootstrap_samples: int = 16,
    holdout_bound: float = HOLDOUT_RELATIVE_ERROR_BOUND,
    seed: int = 0,
) -> EndpointCalibration:
    """Fit, check on the held-out level, then capacity with its bootstrap range. Problems that forbid
    writing the calibration (held-out error above the bound) are listed in `problems`; input that cannot
    be calibrated at all (one level, a level with no success, a mid-level change) raises CostmodelError."""
    levels = sweep.levels
    if len(levels) < 2:
        raise CostmodelError(f"the sweep has {counted(len(levels), 'level')}; calibration holds one out, so it needs at "
                             "least 2 (e.g. probe-endpoint --concurrency 1,2,4,8)")
    prompt_default = sweep.settings.prompt_tokens
    rows = [usable(level, prompt_tokens_default=prompt_default) for level in levels]
    for level, level_rows in zip(levels, rows, strict=True):
        check_level(level, level_rows)
    held = max(range(len(levels)), key=lambda k: levels[k].value)
    fit_index = [k for k in range(len(levels)) if k != held]
    client_peak = max(peak_in_flight(rows[k]) for k in fit_index)
    equations = design([rows[k] for k in fit_index], client_peak=client_peak)
    model = solve(equations)
    if "max_num_seqs" in what_if:
        model = StepModel(**{**model.__dict__, "max_num_seqs": what_if["max_num_seqs"]})
    held_out = _held_out(model, rows[held], mode=sweep.settings.mode, value=levels[held].value,
                         wall=levels[held].wall_seconds)
    problems = _holdout_problems(held_out, holdout_bound)
    everything = [m for level_rows in rows for m in level_rows]
    prompt = int(np.median([m.prompt for m in everything]))
    output = int(np.median([m.output for m in everything]))
    replicas = what_if.get("replicas", 1)
    point, binding = capacity(model, prompt=prompt, output=output, slo_ttft=slo_ttft_p90_seconds,
                              slo_tpot=slo_tpot_p90_seconds, replicas=replicas, seed=seed)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap_samples):  # resample the requests' equations, refit, recompute
        refit = solve(equations.resampled(rng))
        if "max_num_seqs" in what_if:
            refit = StepModel(**{**refit.__dict__, "max_num_seqs": what_if["max_num_seqs"]})
        samples.append(capacity(refit, prompt=prompt, output=output, slo_ttft=slo_ttft_p90_seconds,
                                slo_tpot=slo_tpot_p90_seconds, replicas=replicas, seed=seed)[0])
    p10, p90 = (float(np.percentile(samples, q)) for q in (10, 90)) if samples else (point, point)
    at_capacity = _metrics([prompt] * CAPACITY_REQUESTS, [output] * CAPACITY_REQUESTS, model=model, mode="rate",
                           value=point, sent=_poisson(point / replicas, seed))
    return EndpointCalibration(
        base_url=sweep.settings.base_url, model=sweep.settings.model, problems=problems,
        overhead_seconds=model.overhead_seconds, prefill_token_seconds=model.prefill_token_seconds,
        decode_sequence_seconds=model.decode_sequence_seconds, context_token_seconds=model.context_token_seconds,
        request_fixed_seconds=model.request_fixed_seconds, concurrency_limit=model.max_num_seqs,
        server_scheduling=server_scheduling_of(model.max_num_seqs),
        levels_fit=[levels[k].value for k in fit_index], levels_held_out=[levels[held].value], held_out=[held_out],
        holdout_ttft_p50_abs_error=abs(held_out.ttft_p50_predicted_seconds - held_out.ttft_p50_measured_seconds),
        holdout_tpot_p50_abs_error=abs(held_out.tpot_p50_predicted_seconds - held_out.tpot_p50_measured_seconds),
        holdout_throughput_abs_error=abs(held_out.throughput_predicted_tokens_per_second
                                         - held_out.throughput_measured_tokens_per_second),
        holdout_relative_error_bound=holdout_bound,
        slo_ttft_p90_seconds=slo_ttft_p90_seconds, slo_tpot_p90_seconds=slo_tpot_p90_seconds, what_if=what_if,
        capacity_requests_per_second=point, capacity_p10=p10, capacity_p90=p90,
        binding_limit=binding, ttft_p90_at_capacity_seconds=at_capacity[1],
        tpot_p90_at_capacity_seconds=at_capacity[3], bootstrap_samples=bootstrap_samples,
    )


def _poisson(rate: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    sent, now = [], 0.0
    for _ in range(CAPACITY_REQUESTS):
        now += rng.expovariate(max(rate, 1e-9))
        sent.append(now)
    return sent


def level_predictions(sweep: EndpointSweep, calibration: EndpointCalibration) -> list[HeldOutLevel]:
    """Measured vs predicted (p50/p90 TTFT and TPOT, throughput) at every level of the sweep, with the
    calibration's fitted model: the fit levels show how well it fits, the held-out ones how well it predicts."""
    model = StepModel(
        overhead_seconds=calibration.overhead_seconds, prefill_token_seconds=calibration.prefill_token_seconds,
        decode_sequence_seconds=calibration.decode_sequence_seconds,
        context_token_seconds=calibration.context_token_seconds,
        request_fixed_seconds=calibration.request_fixed_seconds, max_num_seqs=calibration.concurrency_limit)
    rows = [usable(level, prompt_tokens_default=sweep.settings.prompt_tokens) for level in sweep.levels]
    return [_held_out(model, level_rows, mode=sweep.settings.mode, value=level.value, wall=level.wall_seconds)
            for level, level_rows in zip(sweep.levels, rows, strict=True) if level_rows]


def latency_at_capacity(calibration: EndpointCalibration) -> tuple[float, float]:
    """(TTFT p90, TPOT p90) in seconds the endpoint showed at its calibrated capacity: what an API option
    carries as its measured latency."""
    return calibration.ttft_p90_at_capacity_seconds, calibration.tpot_p90_at_capacity_seconds
