"""Each option's $/month (and eligibility) as a function of scaled inputs: volume, prices, throughput, tokens.

The memo's cost-vs-volume chart, the flip-volume search, the break-even and the token-mix bars of the tornado
re-cost every option from one evaluated `Decision` without re-running the roofline, so a sweep of a hundred
volumes stays fast. Self-host options are not rebuilt from their finished figures: each carries its plan
(`OptionResult.plan`, decision/plan.py) and the sweep calls the decision's own `plan_cost` at the scaled demand
and capacity (and `hybrid_cost` for a hybrid's base), so `decide` and the sweep cost the same plan the same way.
`tests/test_memo_volume.py` still checks the sweep against `decide(scenario, overrides=Overrides(...))`.

Per option, from its `OptionResult` (month 0):
- API: $/request = prompt share + output share (its input/output $/M split); $/month = requests x $/request.
  Throttled when the peak minute's requests or tokens pass the price row's limits (batch API: never).
- self-host: `plan_cost(plan, demand x volume, capacity)`: the fleet policy's replicas (fixed, autoscale or
  mixed), whole instances, ops, GPU prices x the scale; capacity scales with throughput (efficiency, first
  order) and inversely with GPU time per request, whose split between prompt and output tokens is the option's
  input/output cost split (prefill vs decode time).
- hybrid: `hybrid_cost` over the day's profile on the base option's plan and capacity and the API option's
  $/request; throttled when its API is and some requests overflow.
Long-context tiers and SLO verdicts are held at their month-0 state (first order in the token mix).
"""

from __future__ import annotations

import math
from collections.abc import Collection

from costmodel.decision.economics import HybridPlan
from costmodel.decision.fleet import replicas_by_hour
from costmodel.decision.plan import Demand, OptionPlan, PlanCost, hybrid_cost, peak_replicas, plan_cost
from costmodel.decision.volume_model import (  # re-exported: the sweep's callers import them here
    CostModel,
    OptionCost,
    Scaling,
    cost_model,
)
from costmodel.units import SECONDS_PER_MONTH

__all__ = ["CostModel", "OptionCost", "Scaling", "cost_model", "hybrid_plan", "plan_cost_at", "replicas_by_hour_at",
           "same_plan", "serves", "step_volumes", "throttled", "tokens_per_second_per_replica", "usd_per_month"]

AS_GIVEN = Scaling()  # every input at its month-0 value
MAX_STEPS = 400  # replica steps listed per option (beyond them the search falls back to its grid)


def _api_usd_per_request(option: OptionCost, scaling: Scaling) -> float:
    return scaling.api_usd_per_mtok * (option.api_usd_per_request_prompt * scaling.prompt_tokens
                                       + option.api_usd_per_request_output * scaling.output_tokens)


def _capacity(option: OptionCost, scaling: Scaling) -> float:
    """Requests/s per replica: throughput scale over the GPU time per request relative to month 0."""
    time_per_request = (option.prefill_time_fraction * scaling.prompt_tokens
                        + (1.0 - option.prefill_time_fraction) * scaling.output_tokens)
    factor = dict(scaling.capacity_factors).get(option.base or option.name, 1.0)
    return option.capacity_requests_per_second * scaling.throughput * factor / time_per_request


def serves(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> bool:
    """False when a self-hosted option's capacity at the SLO is 0 under `scaling` (it cannot meet the SLO)."""
    option = model.option(name)
    return option.kind != "self-host" or _capacity(option, scaling) > 0


def _demand(model: CostModel, scaling: Scaling) -> Demand:
    """Month 0's demand with the volume (and the output length) scaled."""
    mean = model.mean_requests_per_second * scaling.volume
    return Demand(mean_requests_per_second=mean, peak_requests_per_second=model.peak_requests_per_second * scaling.volume,
                  hourly_requests_per_second=tuple(mean * w for w in model.hourly_profile),
                  mean_output_tokens=model.mean_output_tokens * scaling.output_tokens)


def _plan(option: OptionCost) -> OptionPlan:
    assert option.plan is not None, f"{option.name} has no self-host plan"
    return option.plan


def plan_cost_at(model: CostModel, name: str, scaling: Scaling = AS_GIVEN, *,
                 base_replicas: int | None = None) -> PlanCost:
    """A self-host option's (or a hybrid's base's) plan costed at the scaled inputs (decision/plan.py; a mixed
    fleet's base pinned at `base_replicas` when given, as the horizon holds a committed base)."""
    option = model.option(name)
    return plan_cost(_plan(option), _demand(model, scaling), capacity_requests_per_second=_capacity(option, scaling),
                     ttft_p90_seconds=option.ttft_p90_seconds, tpot_p90_seconds=option.tpot_p90_seconds,
                     gpu_price_scale=scaling.usd_per_gpu_hour, base_replicas=base_replicas)


def hybrid_plan(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> HybridPlan:
    """The hybrid option's plan (base replicas, overflow) under `scaling` (0 base replicas if the base is infeasible)."""
    option = model.option(name)
    assert option.kind == "hybrid" and option.api is not None
    capacity = _capacity(option, scaling)
    return hybrid_cost(
        _plan(option), mean_requests_per_second=model.mean_requests_per_second * scaling.volume,
        hourly_profile=model.hourly_profile, capacity_requests_per_second=capacity,
        api_usd_per_request=_api_usd_per_request(model.option(option.api), scaling),
        max_base_replicas=plan_cost_at(model, name, scaling).replicas if capacity > 0 else 0,
        gpu_price_scale=scaling.usd_per_gpu_hour)


def usd_per_month(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> float:
    """$/month of option `name` with the month-0 inputs scaled."""
    option = model.option(name)
    if option.kind == "api":
        requests_per_month = model.mean_requests_per_second * scaling.volume * SECONDS_PER_MONTH
        return requests_per_month * _api_usd_per_request(option, scaling) + option.ops_usd_per_month
    if option.kind == "hybrid":
        return hybrid_plan(model, name, scaling).usd_per_month
    return plan_cost_at(model, name, scaling).usd_per_month


def replicas_by_hour_at(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> tuple[int, ...]:
    """A self-host option's replicas in each hour at the scaled inputs, by its fleet policy (a fixed fleet:
    the peak hour's count all day; an hourly fleet: each hour's demand, capped at max_replicas, a mixed
    fleet's base taken as no more than the demand needs); () when it cannot meet the SLO."""
    option = model.option(name)
    capacity = _capacity(option, scaling)
    if capacity <= 0:
        return ()
    plan, demand = _plan(option), _demand(model, scaling)
    if not plan.fleet.hourly:
        return (peak_replicas(plan, demand, capacity_requests_per_second=capacity),) * len(model.hourly_profile)
    fleet = plan.fleet
    wanted = replicas_by_hour(hourly_requests_per_second=demand.hourly_requests_per_second,
                              capacity_requests_per_second=capacity,
                              target_peak_utilization=fleet.target_peak_utilization,
                              min_replicas=fleet.floor, spare_replicas=fleet.spare_replicas)
    return tuple(min(r, fleet.max_replicas) for r in wanted)


def tokens_per_second_per_replica(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> float:
    """Prompt + output tokens/s one replica serves at the SLO under `scaling` (capacity x tokens per request)."""
    option = model.option(name)
    tokens = model.mean_prompt_tokens * scaling.prompt_tokens + model.mean_output_tokens * scaling.output_tokens
    return _capacity(option, scaling) * tokens


def throttled(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> bool:
    """True when the option's API traffic passes the per-minute limits at this volume and token mix."""
    option = model.option(name)
    if option.kind == "self-host":
        return False
    if option.kind == "hybrid":
        assert option.api is not None
        return throttled(model, option.api, scaling) and hybrid_plan(model, name, scaling).overflow_fraction > 0
    tokens_scale = option.prompt_token_share * scaling.prompt_tokens + (1 - option.prompt_token_share) * scaling.output_tokens
    # Requests/min scale with volume; tokens/min with volume x tokens per request (check_rate_limits: demand > limit).
    return (scaling.volume > option.requests_limit_volume_scale
            or scaling.volume * tokens_scale > option.tokens_limit_volume_scale)


def step_volumes(model: CostModel, *, up_to: float, names: Collection[str] | None = None) -> tuple[float, ...]:
    """Volume multiples (<= up_to) where some option's cost or eligibility jumps: a self-hosted replica is
    added (k x capacity / peak) or an API's per-minute limit is reached. Between them every option's $/month
    is continuous in volume, so a search that samples both sides of each step misses no crossing. `names`:
    only these options' steps (a break-even between two options needs no other option's)."""
    steps: set[float] = set()
    for option in (o for o in model.options if names is None or o.name in names):
        if option.kind == "api":
            steps.update(s for s in (option.requests_limit_volume_scale, option.tokens_limit_volume_scale) if s <= up_to)
        elif option.capacity_requests_per_second > 0 and option.kind == "self-host" and option.plan is not None:
            steps.update(_replica_steps(model, option, up_to=up_to))
    return tuple(sorted(steps))


def _replica_steps(model: CostModel, option: OptionCost, *, up_to: float) -> list[float]:
    """Volumes where a replica is added: in the peak hour (fixed fleet), or in any hour of the day (autoscaled
    or mixed; the MAX_STEPS nearest to 1 in log scale, beyond them the search's grid)."""
    fleet = _plan(option).fleet
    demands = ([model.peak_requests_per_second] if not fleet.hourly
               else [model.mean_requests_per_second * w for w in sorted(set(model.hourly_profile))])
    found: list[float] = []
    # A replica is added where demand passes k x target x capacity (headroom) or, with N+k spares, k x capacity.
    loads = {fleet.target_peak_utilization, 1.0} if fleet.spare_replicas else {fleet.target_peak_utilization}
    for demand, load in ((d, u) for d in demands if d > 0 for u in loads):
        per_replica = option.capacity_requests_per_second * load / demand
        count = min(int(up_to / per_replica), MAX_STEPS)
        found += [k * per_replica for k in range(1, count + 1)]
    return sorted(found, key=lambda s: abs(math.log(s)))[:MAX_STEPS]


def same_plan(model: CostModel, first: str, second: str, scaling: Scaling = AS_GIVEN) -> bool:
    """True when one option is a hybrid that keeps 0 base replicas and so is just the other (its API)."""
    for hybrid, other in ((first, second), (second, first)):
        option = model.option(hybrid)
        if option.kind == "hybrid" and option.api == other and hybrid_plan(model, hybrid, scaling).base_replicas == 0:
            return True
    return False
