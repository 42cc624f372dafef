"""Capacity at SLO: the highest arrival rate per replica whose latency percentiles meet every limit.

Method: one set of requests (seeded lengths and unit-rate arrival gaps) is reused at every rate, so the
only thing that changes between runs is how fast the same requests arrive. (1) Zero load: each request
alone (one sequence at a time) gives the physical minimum of every latency; a limit below it is
infeasible at any load, and the reason names the prefill or decode step that breaks it. (2) Saturation:
all requests at t = 0 give the most requests/s the replica completes; no higher rate is sustainable.
(3) Bisection over [0, saturation) on "every percentile meets its limit", to `rate_tolerance` relative.
The saturation rate itself counts as failing: its queue grows without bound in steady state, even when a
finite run from an empty start still looks fine there. Every rate the search sees fail (the saturation rate
first) is an upper bound on the answer, so a caller that only needs capacities above some rate (the search,
which needs only those that can still enter its top K) passes `give_up`, and the search stops, raising
`CapacityNotNeeded`, as soon as `give_up(that bound)` is true (`upper_bound_requests_per_second` is the bound
it would last have been asked about).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.measurements.calibration import Calibration
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.roofline import Efficiency
from costmodel.scenario.distributions import TokenDistribution
from costmodel.scenario.slo import Slo, SloLimit
from costmodel.serving.early_stop import unless_missed
from costmodel.serving.engine_io import KvPolicy
from costmodel.serving.profile import EngineSettings
from costmodel.serving.replica import MAX_NUM_SEQS, Replica, build_replica
from costmodel.serving.results import SimulationResult
from costmodel.serving.simulation import draw_lengths, run_requests, slo_limits, unit_gaps
from costmodel.serving.summary import FinishedRun
from costmodel.serving.zero_load import (
    ZERO_LOAD_REQUESTS,
    zero_load_reason,
    zero_load_result,
    zero_load_seconds,
)

DEFAULT_REQUESTS = 2000
CONVERGED_HALF_WIDTH = 0.05  # issue 17: the capacity's interval within 5%
MAX_CONVERGE_REQUESTS = 8000  # bound on work of `converged_capacity`: 1,000 -> 2,000 -> 4,000 -> 8,000 requests
REPLICATIONS = 5
# What the decision, `compare`, the memo and the app's Latency page use, so that they print one capacity per
# option: start at 1,000 requests per simulation, bisect to 5% (capacity under-stated by < 5%).
CONVERGE_START_REQUESTS = 1000
CONVERGE_RATE_TOLERANCE = 0.05
# Student t 0.975 quantile at 4 degrees of freedom: 2.776 (NIST/SEMATECH e-Handbook of Statistical Methods,
# table 1.3.6.7.2, https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm).
T_975_4_DOF = 2.776
MAX_BISECTIONS = 30
GiveUp = Callable[[float], bool]  # given an upper bound on the capacity (requests/s): is no capacity under it needed?


class CapacityNotNeeded(Exception):
    """Raised by `capacity_for_replica` when `give_up` says its capacity, below the bound it reached, is not needed."""


@dataclass(frozen=True, kw_only=True)
class CapacitySearch:
    """The settings of one capacity search, shared by `capacity_for_replica` and `converged_capacity`: the
    workload's token lengths, the SLO, the requests simulated (the start of the doubling when converging),
    the seed, arrival burstiness (1 = Poisson), the engine's KV policy and batch cap, and the bisection's
    relative tolerance on the rate."""

    prompt_tokens: TokenDistribution
    output_tokens: TokenDistribution
    slo: Slo | Sequence[SloLimit]
    prefix_cached_fraction: float = 0.0
    seed: int = 0
    requests: int = DEFAULT_REQUESTS
    burstiness: float = 1.0
    kv_policy: KvPolicy = "preempt"
    max_num_seqs: int = MAX_NUM_SEQS
    rate_tolerance: float = 0.02


@dataclass(frozen=True)
class CapacityResult:
    """Capacity of one replica at an SLO. Rates in requests/s, throughputs in output tokens/s."""

    feasible: bool
    reason: str  # why not, when infeasible ("" when feasible)
    max_rate_requests_per_second: float  # 0 when infeasible
    output_tokens_per_second: float  # per replica, at that rate
    output_tokens_per_second_per_gpu: float
    gpus: int
    slo_limits: tuple[SloLimit, ...]
    at_capacity: SimulationResult | None  # the run at the max rate: all percentiles, goodput, queue
    saturation_rate_requests_per_second: float  # most requests/s completed with every request at t = 0
    saturation_bound: bool  # the SLO holds to within the tolerance of saturation: throughput-bound, not latency
    zero_load_seconds: dict[str, float]  # each limit's metric at its percentile with no queueing, by key
    simulations: int
    requests_per_simulation: int
    # 95% interval of the capacity (requests/s) over independent replications (`converged_capacity`; NaN
    # from one search); converged: its half-width is within CONVERGED_HALF_WIDTH of the capacity
    capacity_ci_low: float = math.nan
    capacity_ci_high: float = math.nan
    converged: bool = False
    # The lowest rate the bisection saw fail (or the saturation rate): the capacity lies in
    # [max_rate_requests_per_second, this), so an interval never claims more precision than the search had.
    failing_rate_requests_per_second: float = math.nan
    # The last bound `give_up` would have been asked about (the saturation rate, then each failing rate while
    # giving up is allowed): the capacity lies below it; inf when the search never got that far.
    upper_bound_requests_per_second: float = math.inf

    @property
    def ttft_p90_seconds(self) -> float:
        return self.at_capacity.ttft.p90_seconds if self.at_capacity else float("nan")

    @property
    def tpot_p90_seconds(self) -> float:
        return self.at_capacity.tpot.p90_seconds if self.at_capacity else float("nan")


def _not_needed(give_up: GiveUp | None, upper: float) -> None:
    """Raise `CapacityNotNeeded` when `give_up` holds at this upper bound on the capacity."""
    if give_up is not None and give_up(upper):
        raise CapacityNotNeeded(f"capacity below {upper:.4g} requests/s is not needed")


def capacity_for_replica(replica: Replica, search: CapacitySearch, *, give_up: GiveUp | None = None,
                         give_up_before_a_pass: bool = True) -> CapacityResult:
    """`capacity_at_slo` for an already built replica (reuse it across calls) with the settings of `search`.

    `give_up` (module docstring) is asked after the saturation run and after each bisection step; with
    `give_up_before_a_pass` False only at the saturation rate until a rate has passed (a caller that retries
    an infeasible answer at looser limits: their capacity is below the same saturation rate, not below a rate
    that failed the tighter limits)."""
    limits = slo_limits(search.slo)
    requests, rate_tolerance, kv_policy = search.requests, search.rate_tolerance, search.kv_policy
    prefix_cached_fraction = search.prefix_cached_fraction
    runs = 0
    bound = math.inf

    def verdict(*, reason: str = "", best: SimulationResult | None = None, rate: float = 0.0,
                saturation: float = 0.0, zero_load: dict[str, float] | None = None,
                failing: float = math.nan) -> CapacityResult:
        """The result after `runs` simulations: feasible at `rate` when `best` (the run there) is given."""
        tokens_per_second = best.output_tokens_per_second if best is not None else 0.0
        return CapacityResult(
            feasible=best is not None, reason=reason, max_rate_requests_per_second=rate,
            output_tokens_per_second=tokens_per_second, output_tokens_per_second_per_gpu=tokens_per_second / replica.gpus,
            gpus=replica.gpus, slo_limits=limits, at_capacity=best, saturation_rate_requests_per_second=saturation,
            saturation_bound=best is not None and rate >= (1.0 - 2.0 * rate_tolerance) * saturation,
            zero_load_seconds=zero_load or {}, simulations=runs, requests_per_simulation=requests,
            failing_rate_requests_per_second=failing, upper_bound_requests_per_second=bound,
        )

    def ask(upper: float) -> None:
        nonlocal bound
        bound = upper
        _not_needed(give_up, upper)

    if not limits:
        raise ValueError("capacity_at_slo needs at least one SLO limit")
    if not replica.fits:
        return verdict(reason=replica.memory.message)
    prompts, outputs = draw_lengths(prompt_tokens=search.prompt_tokens, output_tokens=search.output_tokens,
                                    requests=requests, seed=search.seed)
    gaps = unit_gaps(requests=requests, burstiness=search.burstiness, seed=search.seed)
    unit_arrivals = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    # Every run below simulates the same requests; only their arrival times (and the rate label) change.
    simulate = partial(run_requests, replica, prompt_tokens=prompts, output_tokens=outputs,
                       prefix_cached_fraction=prefix_cached_fraction, slo=limits, kv_policy=kv_policy,
                       max_num_seqs=replica.running_cap(search.max_num_seqs))

    # Zero-load latency percentiles need no more than a few hundred requests (each runs alone, so this
    # run costs as many steps as all its tokens): the first ZERO_LOAD_REQUESTS of the same draw.
    sample = slice(0, min(requests, ZERO_LOAD_REQUESTS))
    alone = zero_load_result(replica, prompts=prompts[sample], outputs=outputs[sample],
                             prefix_cached_fraction=prefix_cached_fraction, kv_policy=kv_policy)
    runs += 1
    minimum = {limit.key: zero_load_seconds(alone, limit) for limit in limits}
    reason = zero_load_reason(replica, limits, minimum, alone, prompts=prompts, outputs=outputs)
    if reason:
        return verdict(reason=reason, zero_load=minimum)

    # `give_up` holds below any bound where it holds: at a bound on the flood's rate, as `ask` would after it
    flood = simulate(arrival_seconds=np.zeros(requests), on_rate_bound=give_up and partial(_not_needed, give_up))
    runs += 1
    saturation = flood.requests_per_second
    ask(saturation)

    def run(rate: float) -> FinishedRun | None:
        """The run at `rate`, None when it misses the SLO: only its verdict is read, so it stops once certain."""
        nonlocal runs
        runs += 1
        return unless_missed(partial(simulate, arrival_seconds=unit_arrivals / rate, rate_per_second=rate,
                                     stop_on_miss=True))

    # At the saturation rate the queue grows without bound in steady state (utilization 1), even when a
    # finite run from an empty start still looks fine: it counts as failing, and the search stays below it.
    # Only the last passing run is summarized (`FinishedRun.summary`): the others' summaries are never read.
    best: FinishedRun | None = None
    lo, hi = 0.0, saturation
    while runs < MAX_BISECTIONS + 2 and (best is None or hi - lo > rate_tolerance * lo):
        mid = 0.5 * (lo + hi)
        result = run(mid)
        if result is not None and result.meets_slo:
            lo, best = mid, result
        else:
            hi = mid
        if best is not None or give_up_before_a_pass:
            ask(hi)
    if best is None:
        return verdict(reason=f"even {hi:.3g} requests/s misses the SLO, though each request alone meets it: the limits "
                              "sit at the zero-load latency, so any queueing or batching breaks them",
                       zero_load=minimum, saturation=saturation)
    return verdict(best=best.summary(), rate=lo, saturation=saturation, zero_load=minimum, failing=hi)


def converged_capacity(replica: Replica, search: CapacitySearch, *,
                       max_requests: int = MAX_CONVERGE_REQUESTS) -> CapacityResult:
    """Capacity with a 95% interval from REPLICATIONS independent searches (seeds search.seed * REPLICATIONS + k),
    the request count doubled from `search.requests` until the interval's half-width is within 5% of the mean
    (`converged`) or `max_requests` is reached (the bound on work; `converged` False then).

    Independent replications, not batch means within one run: near the capacity the queue's correlation
    time is long (it grows like 1 / (1 - utilization)^2), so batches of one run are not independent and
    their interval comes out too narrow; whole runs from an empty start are, and they are what a finite
    simulation's capacity varies over. The capacity is the replications' mean; `at_capacity` is the run of
    the replication closest to it.
    """
    count = search.requests
    while True:
        runs = [capacity_for_replica(replica, replace(search, seed=search.seed * REPLICATIONS + k, requests=count))
                for k in range(REPLICATIONS)]
        rates = np.array([r.max_rate_requests_per_second for r in runs])
        mean = float(rates.mean())
        half = T_975_4_DOF * float(rates.std(ddof=1)) / math.sqrt(REPLICATIONS)
        # Each replication's capacity lies in [its rate, its failing rate): the interval covers the mean
        # bracket too, so replications that agree exactly still carry the search's resolution.
        failing = float(np.mean([r.failing_rate_requests_per_second for r in runs]))
        low, high = max(mean - half, 0.0), max(mean + half, failing) if math.isfinite(failing) else mean + half
        converged = all(r.feasible for r in runs) and 0.5 * (high - low) <= CONVERGED_HALF_WIDTH * mean
        if converged or count * 2 > max_requests:
            return _combined(runs, mean=mean, interval=(low, high), converged=converged)
        count *= 2


def _combined(runs: list[CapacityResult], *, mean: float, interval: tuple[float, float],
              converged: bool) -> CapacityResult:
    """One result for the replications: their mean capacity and interval, the closest run's details."""
    feasible = [r for r in runs if r.feasible]
    if len(feasible) < len(runs):  # some replication finds no load that meets the SLO: report that one
        worst = next(r for r in runs if not r.feasible)
        return replace(worst, simulations=sum(r.simulations for r in runs), capacity_ci_low=0.0,
                       capacity_ci_high=max(interval[1], 0.0), converged=False)
    closest = min(runs, key=lambda r: abs(r.max_rate_requests_per_second - mean))
    scale = mean / closest.max_rate_requests_per_second
    saturation = float(np.mean([r.saturation_rate_requests_per_second for r in runs]))
    return replace(
        closest, max_rate_requests_per_second=mean, output_tokens_per_second=closest.output_tokens_per_second * scale,
        output_tokens_per_second_per_gpu=closest.output_tokens_per_second_per_gpu * scale,
        saturation_rate_requests_per_second=saturation, saturation_bound=all(r.saturation_bound for r in runs),
        simulations=sum(r.simulations for r in runs), capacity_ci_low=interval[0], capacity_ci_high=interval[1],
        converged=converged,
        failing_rate_requests_per_second=float(np.mean([r.failing_rate_requests_per_second for r in runs])),
    )


def capacity_at_slo(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    prompt_tokens: TokenDistribution,
    output_tokens: TokenDistribution,
    slo: Slo | Sequence[SloLimit],
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    efficiency: Efficiency | None = None,
    calibration: Calibration | None = None,
    prefix_cached_fraction: float = 0.0,
    seed: int = 0,
    requests: int = DEFAULT_REQUESTS,
    burstiness: float = 1.0,
    kv_policy: KvPolicy = "preempt",
    max_num_seqs: int = MAX_NUM_SEQS,
    max_batched_tokens: int = MAX_BATCHED_TOKENS,
    rate_tolerance: float = 0.02,
    engine: EngineSettings | None = None,
) -> CapacityResult:
    """Highest Poisson (or gamma, `burstiness`) arrival rate per replica meeting every SLO limit.

    `engine` (serving.profile) replaces `kv_policy`, `max_num_seqs` and `max_batched_tokens` with its own.
    """
    if engine is not None:
        kv_policy, max_num_seqs, max_batched_tokens = engine.kv_policy, engine.max_num_seqs, engine.max_batched_tokens
    replica = build_replica(model, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            efficiency=efficiency, calibration=calibration, max_batched_tokens=max_batched_tokens,
                            engine=engine)
    return capacity_for_replica(replica, CapacitySearch(
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, slo=slo,
        prefix_cached_fraction=prefix_cached_fraction, seed=seed, requests=requests, burstiness=burstiness,
        kv_policy=kv_policy, max_num_seqs=max_num_seqs, rate_tolerance=rate_tolerance,
    ))
