"""A finished engine run before its summary, and the summary (`summarize`): percentiles, throughput, goodput
and the SLO verdict.

A capacity search asks most of its runs one question only (does the SLO hold? how many requests/s completed?)
and keeps one run's full summary, so `FinishedRun` answers those questions from the trace and summarizes on
request; each answer is the same expression `summarize` uses, so it equals the summary's field exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel.scenario.slo import SloLimit
from costmodel.serving.engine_io import EngineTrace
from costmodel.serving.replica import Replica
from costmodel.serving.results import LatencySummary, RequestTrace, SimulationResult


def run_seconds(trace: RequestTrace) -> float:
    """First arrival to last token (s; at least 1e-12)."""
    return max(float(np.nanmax(trace.finish_seconds)) - float(trace.arrival_seconds.min()), 1e-12)


def completed_per_second(trace: RequestTrace) -> float:
    """Completed requests per second of the run."""
    return float(trace.completed.sum()) / run_seconds(trace)


def slo_verdict(trace: RequestTrace, slo: tuple[SloLimit, ...]) -> bool | None:
    """Every limit holds at its percentile (None without limits)."""
    return all(trace.at_percentile(limit) <= limit.limit_seconds for limit in slo) if slo else None


@dataclass(frozen=True, kw_only=True)
class FinishedRun:
    """One engine run's trace and what `summarize` needs besides it."""

    replica: Replica
    trace: RequestTrace
    engine: EngineTrace
    slo: tuple[SloLimit, ...]
    kv_policy: str
    rate_per_second: float | None
    concurrency: int | None
    stream_chunk_tokens: int

    @property
    def meets_slo(self) -> bool | None:
        """`SimulationResult.meets_slo` of the summary, without summarizing."""
        return slo_verdict(self.trace, self.slo)

    @property
    def requests_per_second(self) -> float:
        """`SimulationResult.requests_per_second` of the summary, without summarizing."""
        return completed_per_second(self.trace)

    def summary(self) -> SimulationResult:
        """The run's `SimulationResult`."""
        return summarize(self.replica, trace=self.trace, engine=self.engine, slo=self.slo, kv_policy=self.kv_policy,
                         rate_per_second=self.rate_per_second, concurrency=self.concurrency,
                         stream_chunk_tokens=self.stream_chunk_tokens)


def summarize(
    replica: Replica, *, trace: RequestTrace, engine: EngineTrace, slo: tuple[SloLimit, ...], kv_policy: str,
    rate_per_second: float | None, concurrency: int | None = None, stream_chunk_tokens: int = 1,
) -> SimulationResult:
    """Percentiles, throughput, goodput and SLO verdict of a finished run."""
    done = trace.completed
    duration = run_seconds(trace)
    output_total = float(trace.output_tokens[done].sum())
    prompt_total = float(trace.prompt_tokens[done].sum())
    meets = trace.meets(slo) if slo else None
    summaries = {m: LatencySummary.of(trace.values(m)) for m in ("ttft", "tpot", "e2e")}
    return SimulationResult(
        model_id=replica.model_id, hardware_id=replica.hardware_id, gpus=replica.gpus,
        weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype, kv_policy=kv_policy, engine=replica.engine_id,
        rate_per_second=rate_per_second, requests=int(done.size), completed=int(done.sum()),
        rejected=int((~done).sum()), duration_seconds=duration,
        ttft=summaries["ttft"], tpot=summaries["tpot"], e2e=summaries["e2e"],
        queue=LatencySummary.of(trace.queue_seconds()),
        output_tokens_per_second=output_total / duration,
        total_tokens_per_second=(output_total + prompt_total) / duration,
        requests_per_second=completed_per_second(trace),
        slo_limits=slo,
        goodput_requests_per_second=None if meets is None else float(meets.sum()) / duration,
        slo_attainment=None if meets is None else float(meets.mean()),
        meets_slo=slo_verdict(trace, slo),
        preemptions=engine.preemptions, steps=engine.steps, events=engine.events,
        mean_batch=engine.sequence_seconds / engine.busy_seconds if engine.busy_seconds > 0 else 0.0,
        max_running=engine.max_running,
        kv_capacity_tokens=replica.kv_capacity_tokens,
        trace=trace,
        series=engine.series,
        step_groups=engine.step_groups,
        replica=replica,
        concurrency=concurrency,
        stream_chunk_tokens=stream_chunk_tokens,
    )
