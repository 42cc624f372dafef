"""Simulation results: per-request trace, latency percentiles, throughput, goodput, queue over time.

TTFT = first token - arrival; TPOT = (E2E - TTFT) / (output - 1), requests with one output token left
out (vLLM's convention); E2E = last token - arrival. Percentiles use numpy's linear interpolation, as
vLLM's benchmark_serving does. Goodput counts requests meeting every SLO limit (each request against the
limit values), per second of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from costmodel.scenario.slo import SloLimit, SloMetric
from costmodel.serving.confidence import Interval, percentile_intervals
from costmodel.serving.engine_itl import StepGroupLists, groups_array
from costmodel.serving.itl import itl_mean_seconds, itl_percentiles

if TYPE_CHECKING:
    from costmodel.serving.breakdown import LatencyBreakdown
    from costmodel.serving.replica import Replica


@dataclass(frozen=True)
class LatencySummary:
    """Percentiles and mean of one latency over the requests it applies to (s; NaN when none), each
    percentile with its 95% batch-means interval (`confidence.py`; NaN bounds under 20 samples)."""

    p50_seconds: float
    p90_seconds: float
    p99_seconds: float
    mean_seconds: float
    p50_ci: Interval = field(default_factory=Interval.unknown)
    p90_ci: Interval = field(default_factory=Interval.unknown)
    p99_ci: Interval = field(default_factory=Interval.unknown)

    @classmethod
    def of(cls, values: np.ndarray) -> LatencySummary:
        """From per-request values in arrival order (the batches of the intervals are contiguous)."""
        if values.size == 0:
            return cls(float("nan"), float("nan"), float("nan"), float("nan"))
        p50, p90, p99 = (float(v) for v in np.percentile(values, [50, 90, 99]))
        ci50, ci90, ci99 = percentile_intervals(values, (50, 90, 99), estimates=(p50, p90, p99))
        return cls(p50, p90, p99, float(values.mean()), p50_ci=ci50, p90_ci=ci90, p99_ci=ci99)

    @classmethod
    def of_gaps(cls, groups: np.ndarray, *, chunk_tokens: int = 1) -> LatencySummary:
        """ITL: the pooled gaps between streamed chunks of `chunk_tokens` tokens from the engine's step
        groups (`itl.py`)."""
        (p50, ci50), (p90, ci90), (p99, ci99) = itl_percentiles(groups, (50.0, 90.0, 99.0), chunk_tokens=chunk_tokens)
        return cls(p50, p90, p99, itl_mean_seconds(groups, chunk_tokens=chunk_tokens), p50_ci=ci50, p90_ci=ci90,
                   p99_ci=ci99)


@dataclass(frozen=True)
class RequestTrace:
    """Arrays over requests in arrival order (times in s from the start; NaN where it never happened)."""

    arrival_seconds: np.ndarray
    admitted_seconds: np.ndarray
    first_token_seconds: np.ndarray
    finish_seconds: np.ndarray
    prompt_tokens: np.ndarray
    cached_tokens: np.ndarray
    output_tokens: np.ndarray
    rejected: np.ndarray  # bool: could never fit in KV memory / the model's context

    @property
    def completed(self) -> np.ndarray:
        return ~self.rejected

    def values(self, metric: SloMetric) -> np.ndarray:
        """Per completed request: TTFT, TPOT (output > 1 only) or E2E seconds."""
        done = self.completed
        ttft = self.first_token_seconds[done] - self.arrival_seconds[done]
        e2e = self.finish_seconds[done] - self.arrival_seconds[done]
        if metric == "ttft":
            return ttft
        if metric == "e2e":
            return e2e
        outputs = self.output_tokens[done]
        many = outputs > 1
        return (e2e[many] - ttft[many]) / (outputs[many] - 1)

    def at_percentile(self, limit: SloLimit) -> float:
        """The limit's metric at its percentile, a rejected request counting as an infinite latency."""
        rejected = self.rejected if limit.metric != "tpot" else self.rejected & (self.output_tokens > 1)
        values = np.concatenate((self.values(limit.metric), np.full(int(rejected.sum()), np.inf)))
        if not values.size:
            return 0.0
        with np.errstate(invalid="ignore"):  # interpolating between two infinities gives NaN: a miss
            value = float(np.percentile(values, limit.percentile))
        return np.inf if np.isnan(value) else value

    def queue_seconds(self) -> np.ndarray:
        """Per completed request: arrival to first scheduled step."""
        done = self.completed
        return self.admitted_seconds[done] - self.arrival_seconds[done]

    def meets(self, limits: Sequence[SloLimit]) -> np.ndarray:
        """Bool per request: completed and within every limit value (TPOT n/a for one-token outputs)."""
        ok = self.completed.copy()
        ttft = self.first_token_seconds - self.arrival_seconds
        e2e = self.finish_seconds - self.arrival_seconds
        with np.errstate(invalid="ignore", divide="ignore"):
            tpot = np.where(self.output_tokens > 1, (e2e - ttft) / (self.output_tokens - 1), 0.0)
        per_metric = {"ttft": ttft, "tpot": tpot, "e2e": e2e}
        for limit in limits:
            ok &= per_metric[limit.metric] <= limit.limit_seconds
        return ok


@dataclass(frozen=True)
class QueueSeries:
    """Requests waiting for admission and sequences running, sampled at every engine event.

    Kept as the engine loop's lists; the arrays are built on first use: most runs (every capacity
    search's) never read them, and converting these three lists and the four of the ITL step groups
    (~2.3 entries per request each) cost ~5% of a 100,000-request run (`python -m bench bench_serving`
    prints the first-use costs).
    """

    seconds_by_event: list[float] = field(repr=False)
    waiting_by_event: list[int] = field(repr=False)
    running_by_event: list[int] = field(repr=False)

    @cached_property
    def seconds(self) -> np.ndarray:
        """Event times (s)."""
        return np.fromiter(self.seconds_by_event, dtype=np.float64, count=len(self.seconds_by_event))

    @cached_property
    def waiting(self) -> np.ndarray:
        """Requests waiting at each event."""
        return np.fromiter(self.waiting_by_event, dtype=np.int64, count=len(self.waiting_by_event))

    @cached_property
    def running(self) -> np.ndarray:
        """Sequences running at each event."""
        return np.fromiter(self.running_by_event, dtype=np.int64, count=len(self.running_by_event))

    def time_average(self, *, end_seconds: float) -> tuple[float, float]:
        """(mean waiting, mean running) over [first event, end], holding each sample until the next."""
        if self.seconds.size == 0:
            return 0.0, 0.0
        edges = np.append(self.seconds, max(end_seconds, float(self.seconds[-1])))
        widths = np.diff(edges)
        span = float(edges[-1] - edges[0]) or 1.0
        return float(np.dot(widths, self.waiting) / span), float(np.dot(widths, self.running) / span)


@dataclass(frozen=True)
class SimulationResult:
    """One replica serving one request stream."""

    model_id: str
    hardware_id: str
    gpus: int
    weight_dtype: str
    kv_dtype: str
    kv_policy: str
    rate_per_second: float | None  # offered arrival rate (None for a replayed trace)
    requests: int
    completed: int
    rejected: int
    duration_seconds: float  # first arrival to last token
    ttft: LatencySummary
    tpot: LatencySummary
    e2e: LatencySummary
    queue: LatencySummary  # arrival to admission
    output_tokens_per_second: float
    total_tokens_per_second: float  # prompt + output tokens
    requests_per_second: float
    slo_limits: tuple[SloLimit, ...]
    goodput_requests_per_second: float | None  # None without SLO limits
    slo_attainment: float | None  # share of requests meeting every limit
    meets_slo: bool | None  # every limit holds at its percentile
    preemptions: int
    steps: int
    events: int
    mean_batch: float  # running sequences, time-weighted over busy time
    max_running: int
    kv_capacity_tokens: int
    trace: RequestTrace
    series: QueueSeries
    # The engine's step groups as its four lists (`engine_itl.py`); `itl_groups` is their array
    step_groups: StepGroupLists = field(default=((), (), (), ()), repr=False)

    @cached_property
    def itl_groups(self) -> np.ndarray:
        """(n, 4) rows (a seconds, b seconds, steps, sequences) of the engine's step groups (itl.py), built
        on first use like `series`."""
        return groups_array(self.step_groups)

    @cached_property
    def itl(self) -> LatencySummary:
        """Inter-token gaps pooled over every token, on first use (one sort of every step: ~0.1-0.2 s at
        100,000 requests, printed by `python -m bench bench_serving`)."""
        return LatencySummary.of_gaps(self.itl_groups, chunk_tokens=self.stream_chunk_tokens)
    engine: str = "generic"  # engine profile id (catalog/engines)
    replica: Replica | None = field(default=None, repr=False, compare=False)  # for breakdowns on demand
    _breakdowns: dict[tuple[str, float], LatencyBreakdown | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    concurrency: int | None = None  # closed loop: requests kept in flight (None: arrivals at a rate or replayed)
    stream_chunk_tokens: int = 1  # tokens per streamed chunk after the first (ITL is the gap between chunks)

    @property
    def output_tokens_per_second_per_gpu(self) -> float:
        """Output tokens/s of the replica over its GPUs."""
        return self.output_tokens_per_second / self.gpus

    @property
    def output_tokens_per_second_per_user(self) -> float:
        """Interactivity: 1 / mean TPOT (DESIGN.md), NaN without a TPOT."""
        tpot = self.tpot.mean_seconds
        return 1.0 / tpot if tpot > 0 else float("nan")

    def breakdown(self, metric: str, percentile: float) -> LatencyBreakdown | None:
        """The `metric` ("ttft"/"tpot") breakdown at `percentile` (serving.breakdown), computed on first
        use (capacity searches run many simulations and read none); None without a replica or data."""
        key = (metric, percentile)
        if key not in self._breakdowns:
            from costmodel.serving.breakdown import result_breakdown  # imports this module

            self._breakdowns[key] = result_breakdown(self, metric=metric, percentile=percentile)
        return self._breakdowns[key]

    def percentile(self, metric: SloMetric, percentile: float) -> float:
        """Any percentile of ttft, tpot or e2e, in seconds."""
        values = self.trace.values(metric)
        return float(np.percentile(values, percentile)) if values.size else float("nan")

    def failed_limits(self) -> tuple[tuple[SloLimit, float], ...]:
        """The limits that do not hold, with the simulated value."""
        return tuple(
            (limit, value) for limit in self.slo_limits if not (value := self.trace.at_percentile(limit)) <= limit.limit_seconds
        )

    def contract(self) -> dict[str, float | int | bool | str | None]:
        """The `costmodel simulate --json` keys (DESIGN.md) plus context."""
        payload: dict[str, float | int | bool | str | None] = {
            "model": self.model_id,
            "hardware": self.hardware_id,
            "gpus": self.gpus,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "kv_policy": self.kv_policy,
            "engine": self.engine,
            "rate_per_second": self.rate_per_second,
            "concurrency": self.concurrency,
            "requests": self.requests,
            "completed": self.completed,
            "rejected": self.rejected,
            "duration_seconds": self.duration_seconds,
        }
        summaries = (("ttft", self.ttft), ("tpot", self.tpot), ("e2e", self.e2e), ("queue", self.queue), ("itl", self.itl))
        for name, summary in summaries:
            payload[f"{name}_p50_seconds"] = summary.p50_seconds
            payload[f"{name}_p90_seconds"] = summary.p90_seconds
            payload[f"{name}_p99_seconds"] = summary.p99_seconds
            payload[f"{name}_mean_seconds"] = summary.mean_seconds
        payload.update(
            output_tokens_per_second=self.output_tokens_per_second,
            output_tokens_per_second_per_gpu=self.output_tokens_per_second_per_gpu,
            output_tokens_per_second_per_user=self.output_tokens_per_second_per_user,
            stream_chunk_tokens=self.stream_chunk_tokens,
            total_tokens_per_second=self.total_tokens_per_second,
            requests_per_second=self.requests_per_second,
            goodput_requests_per_second=self.goodput_requests_per_second,
            slo_attainment=self.slo_attainment,
            meets_slo=self.meets_slo,
            preemptions=self.preemptions,
            mean_batch=self.mean_batch,
            max_running=self.max_running,
            kv_capacity_tokens=self.kv_capacity_tokens,
            steps=self.steps,
        )
        for limit in self.slo_limits:
            payload[f"slo_{limit.key}"] = limit.limit_seconds
        for name, summary in summaries:  # 95% batch-means intervals (NaN: too few samples)
            for q, interval in (("p50", summary.p50_ci), ("p90", summary.p90_ci), ("p99", summary.p99_ci)):
                payload[f"{name}_{q}_seconds_ci_low"] = interval.low
                payload[f"{name}_{q}_seconds_ci_high"] = interval.high
        return payload
