"""Capacity at the SLO of a disaggregated deployment, and the xPyD ratio that serves a request cheapest.

`disaggregated_capacity`: the highest total arrival rate whose TTFT/TPOT percentiles meet every limit, by
bisection as `capacity.capacity_for_replica` does (one seeded set of requests reused at every rate). The
bracket's top is the slower pool's saturation, each pool flooded on its own as an aggregated replica is (its
share of the requests at t = 0; decode with the prompts in its KV cache): x times a prefill instance's rate, y
times a decode instance's. Flooding the composed deployment instead would stagger the decode pool's arrivals
behind the prefill pool and understate it. As for an aggregated replica the saturation counts as failing, and
with long outputs and few requests a finite flood's rate is set by its drain: raise the request count there.

`best_ratio`: each pool alone first. A prefill instance's capacity c_p at the TTFT limit less the p90 KV
transfer (requests with one output token) and a decode instance's c_d at the TPOT limit (prompts already in
its KV cache) come from `capacity_for_replica`; x prefill and y decode instances then carry about
min(x c_p, y c_d) (each pool sees 1/x or 1/y of the requests), and the cheapest layout per request is the one
with the fewest GPUs per unit of that rate. The chosen layout is then simulated whole
(`disaggregated_capacity`), so the figure reported is the composed simulation's, not the estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from costmodel.scenario.distributions import FixedTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving.capacity import MAX_BISECTIONS, CapacitySearch, capacity_for_replica
from costmodel.serving.disaggregated import (
    DisaggregatedLayout,
    DisaggregatedResult,
    decode_pool_replica,
    simulate_disaggregated,
)
from costmodel.serving.replica import Replica
from costmodel.serving.simulation import draw_lengths, simulate_requests, slo_limits, unit_gaps


@dataclass(frozen=True, kw_only=True)
class DisaggregatedCapacity:
    """Capacity of one xPyD layout at an SLO (requests/s and output tokens/s for the whole deployment)."""

    layout: DisaggregatedLayout
    feasible: bool
    reason: str
    max_rate_requests_per_second: float
    output_tokens_per_second: float
    output_tokens_per_second_per_gpu: float
    saturation_rate_requests_per_second: float
    at_capacity: DisaggregatedResult | None
    simulations: int


def _saturation(layout: DisaggregatedLayout, search: CapacitySearch, prompts: np.ndarray, outputs: np.ndarray) -> float:
    """Requests/s of the slower pool, each flooded on its own with its round-robin share (module docstring)."""
    def flood(replica: Replica, instances: int, *, prompt: np.ndarray, output: np.ndarray, cached: float) -> float:
        share = slice(0, max(len(prompt) // instances, 1))
        run = simulate_requests(replica, arrival_seconds=np.zeros(len(prompt[share])), prompt_tokens=prompt[share],
                                output_tokens=output[share], prefix_cached_fraction=cached, kv_policy=search.kv_policy,
                                max_num_seqs=search.max_num_seqs)
        return instances * run.requests_per_second

    prefill = flood(layout.prefill, layout.prefill_instances, prompt=prompts, output=np.ones_like(outputs),
                    cached=search.prefix_cached_fraction)
    decoding = outputs > 1
    if not decoding.any():
        return prefill
    decode = flood(decode_pool_replica(layout.decode, prompts[decoding]), layout.decode_instances,
                   prompt=prompts[decoding], output=outputs[decoding] - 1, cached=1.0)
    return min(prefill, decode)


def disaggregated_capacity(layout: DisaggregatedLayout, search: CapacitySearch) -> DisaggregatedCapacity:
    """Highest Poisson (or gamma) rate into the deployment meeting every limit of `search.slo`."""
    for pool in (layout.prefill, layout.decode):
        if not pool.fits:
            return DisaggregatedCapacity(layout=layout, feasible=False, reason=pool.memory.message,
                                         max_rate_requests_per_second=0.0, output_tokens_per_second=0.0,
                                         output_tokens_per_second_per_gpu=0.0, saturation_rate_requests_per_second=0.0,
                                         at_capacity=None, simulations=0)
    limits = slo_limits(search.slo)
    prompts, outputs = draw_lengths(prompt_tokens=search.prompt_tokens, output_tokens=search.output_tokens,
                                    requests=search.requests, seed=search.seed)
    gaps = unit_gaps(requests=search.requests, burstiness=search.burstiness, seed=search.seed)
    unit = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    saturation = _saturation(layout, search, prompts, outputs)
    runs = 1

    def run(rate: float) -> DisaggregatedResult:
        return simulate_disaggregated(layout, arrival_seconds=unit / rate, prompt_tokens=prompts, output_tokens=outputs,
                                      slo=limits, kv_policy=search.kv_policy, max_num_seqs=search.max_num_seqs,
                                      prefix_cached_fraction=search.prefix_cached_fraction, rate_per_second=rate)

    best: DisaggregatedResult | None = None
    lo, hi = 0.0, saturation
    while runs < MAX_BISECTIONS + 1 and (best is None or hi - lo > search.rate_tolerance * lo):
        mid = 0.5 * (lo + hi)
        result = run(mid)
        runs += 1
        if result.meets_slo:
            lo, best = mid, result
        else:
            hi = mid
    tokens = best.output_tokens_per_second if best is not None else 0.0
    return DisaggregatedCapacity(
        layout=layout, feasible=best is not None,
        reason="" if best is not None else f"even {hi:.3g} requests/s misses the SLO on {layout.name}",
        max_rate_requests_per_second=lo, output_tokens_per_second=tokens,
        output_tokens_per_second_per_gpu=tokens / layout.gpus, saturation_rate_requests_per_second=saturation,
        at_capacity=best, simulations=runs,
    )


@dataclass(frozen=True, kw_only=True)
class RatioOption:
    """One xPyD layout in the ratio search: its estimated rate from the pools' own capacities."""

    prefill_instances: int
    decode_instances: int
    gpus: int
    estimated_rate_requests_per_second: float

    @property
    def gpus_per_request_per_second(self) -> float:
        """GPUs per request/s carried: what a request costs at a fixed price per GPU-hour."""
        rate = self.estimated_rate_requests_per_second
        return self.gpus / rate if rate > 0 else math.inf


@dataclass(frozen=True, kw_only=True)
class RatioSearch:
    """Per-instance pool capacities, every layout tried (cheapest first) and the best one simulated whole."""

    prefill_rate_per_instance: float
    decode_rate_per_instance: float
    options: tuple[RatioOption, ...]
    best: DisaggregatedCapacity | None


def pool_rates(layout: DisaggregatedLayout, search: CapacitySearch) -> tuple[float, float]:
    """(c_p, c_d): one prefill instance's capacity at the TTFT limit less the p90 transfer, one decode
    instance's at the TPOT limit (module docstring); a pool with no limit of its own gets inf."""
    limits = slo_limits(search.slo)
    prompts, _ = draw_lengths(prompt_tokens=search.prompt_tokens, output_tokens=search.output_tokens,
                              requests=search.requests, seed=search.seed)
    transfer_p90 = float(np.percentile(layout.transfer_seconds(prompts), 90))
    ttft = [replace(lim, limit_seconds=lim.limit_seconds - transfer_p90) for lim in limits if lim.metric == "ttft"]
    tpot = [lim for lim in limits if lim.metric == "tpot"]
    c_p = c_d = math.inf
    if ttft:
        prefill_search = replace(search, output_tokens=FixedTokens(tokens=1), slo=tuple(ttft))
        c_p = capacity_for_replica(layout.prefill, prefill_search).max_rate_requests_per_second
    if tpot:
        decode_search = replace(search, slo=tuple(tpot), prefix_cached_fraction=1.0)
        c_d = capacity_for_replica(decode_pool_replica(layout.decode, prompts), decode_search).max_rate_requests_per_second
    return c_p, c_d


def best_ratio(layout: DisaggregatedLayout, search: CapacitySearch, *, max_instances: int) -> RatioSearch:
    """Try every x, y in 1..max_instances on the layout's instance sizes; simulate the cheapest whole."""
    c_p, c_d = pool_rates(layout, search)
    options = []
    for x in range(1, max_instances + 1):
        for y in range(1, max_instances + 1):
            rate = min(x * c_p, y * c_d)
            gpus = x * layout.prefill.gpus + y * layout.decode.gpus
            options.append(RatioOption(prefill_instances=x, decode_instances=y, gpus=gpus,
                                       estimated_rate_requests_per_second=rate if math.isfinite(rate) else 0.0))
    options.sort(key=lambda o: (o.gpus_per_request_per_second, o.gpus))
    best = None
    if options and options[0].estimated_rate_requests_per_second > 0:
        top = options[0]
        chosen = replace(layout, prefill_instances=top.prefill_instances, decode_instances=top.decode_instances)
        best = disaggregated_capacity(chosen, search)
    return RatioSearch(prefill_rate_per_instance=c_p, decode_rate_per_instance=c_d, options=tuple(options), best=best)


def limits_text(limits: tuple[SloLimit, ...]) -> str:
    """'TTFT p90 <= 1 s, TPOT p90 <= 0.05 s' for reports."""
    return ", ".join(f"{lim.metric.upper()} p{lim.percentile} <= {lim.limit_seconds:g} s" for lim in limits)
