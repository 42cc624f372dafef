"""How robust is the recommendation? Its $/month advantage under +-X% inputs, and the volume where it flips.

Advantage = (cheapest eligible alternative's $/month) - (recommended option's $/month) at the same inputs;
> 0: the recommendation stays the better choice; <= 0, or the recommendation itself stops meeting the SLO
(or gets throttled): the decision flips. Eligible alternatives are the other options that meet the SLO and
are not throttled (all others when the recommendation misses the SLO to begin with), except a hybrid that
keeps 0 base replicas next to its own API (the same plan) and the recommendation's equivalents
(decision/equivalents.py: the same cost and verdict, e.g. a searched twin at another MTP depth): reordering those
is no flip, so the advantage is over the next option that is materially different.

Each input is scaled by (1 - X) and (1 + X) alone (a tornado). GPU price, API price and volume re-run
`decide` with `Overrides`. Efficiency and the prompt and output token counts re-run the economics through
`costmodel.decision.volume` (first order): efficiency scales each self-hosted option's capacity at the SLO by
the ratio of its roofline capacities (`decision.self_host_capacity(method="roofline")`) at the scaled and
the given efficiencies, 0 when the roofline says the SLO can no longer be met (re-running the simulator
for each end would cost about a second); token counts scale API cost by its prompt/output price split
and capacity by the prefill/decode time split. The flip volumes come from a sweep of
`costmodel.decision.volume`, which re-costs each option's plan with the decision's own `plan_cost`
(decision/plan.py), so the sweep and `decide` agree by construction (tests check it still).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection
from dataclasses import dataclass, replace

from costmodel.decision.capacity import CapacityCache, self_host_capacity
from costmodel.decision.crossing import FLIP_SEARCH_DECADES, first_volume
from costmodel.decision.equivalents import equivalents
from costmodel.decision.rank import Overrides, decide
from costmodel.decision.results import Decision
from costmodel.decision.volume import (
    CostModel,
    Scaling,
    same_plan,
    serves,
    step_volumes,
    throttled,
)
from costmodel.decision.volume_horizon import ranked_usd
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import HybridOption, Scenario, SelfHostOption

# (field, label, how): field of `Overrides` (how="decide") or of `Scaling` (how="economics").
FACTORS: tuple[tuple[str, str, str], ...] = (
    ("gpu_price", "GPU price ($/GPU-hour)", "decide"),
    ("api_price", "API price ($/M tokens)", "decide"),
    ("volume", "Volume (utilization at fixed replicas)", "decide"),
    ("efficiency", "Efficiency (eff_compute, eff_memory)", "economics"),
    ("prompt_tokens", "Prompt tokens per request", "economics"),
    ("output_tokens", "Output tokens per request", "economics"),
)
DEFAULT_FRACTION = 0.2  # +-20%
SIMPLICITY = {"api": 0, "self-host": 1, "hybrid": 2}


@dataclass(frozen=True)
class Advantage:
    """The recommendation's margin over its best alternative at one set of inputs."""

    # alternative's cost - recommended's (inf: no eligible alternative), on the ranking's basis: $/month, or the
    # horizon total with commitments (decision/volume_horizon.py)
    usd_per_month: float
    alternative: str | None  # the cheapest eligible alternative
    recommendation_fails: bool = False  # the recommendation stops meeting the SLO or gets throttled

    @property
    def flips(self) -> bool:
        """True when the recommendation would no longer be chosen."""
        return self.recommendation_fails or self.usd_per_month <= 0


@dataclass(frozen=True)
class SensitivityBar:
    """One input scaled down and up by the same fraction."""

    factor: str
    label: str
    method: str  # "decide" (full re-evaluation) | "economics" (first order)
    low_scale: float
    high_scale: float
    low: Advantage
    high: Advantage

    @property
    def swing_usd_per_month(self) -> float:
        """|high - low| advantage (the bar's length; 0 when either end is unbounded)."""
        if not (math.isfinite(self.low.usd_per_month) and math.isfinite(self.high.usd_per_month)):
            return 0.0
        return abs(self.high.usd_per_month - self.low.usd_per_month)


@dataclass(frozen=True)
class FlipVolume:
    """The nearest volume (below or above the scenario's) at which another option takes over."""

    direction: str  # "below" | "above"
    volume_scale: float  # x the scenario's volume
    tokens_per_month: float
    new_choice: str | None  # None: the recommendation fails (throttled) with no alternative named


@dataclass(frozen=True)
class Sensitivity:
    """Tornado bars (largest swing first), the base advantage, and the flip volumes."""

    recommendation: str
    fraction: float
    base: Advantage
    bars: tuple[SensitivityBar, ...]
    flip_below: FlipVolume | None
    flip_above: FlipVolume | None
    # The recommendation's equivalents (decision/equivalents.py): same cost and verdict, set aside as alternatives.
    equivalents: tuple[str, ...] = ()
    ranking_basis: str = "usd_per_month"  # what the advantages compare (the decision's ranking basis)


def _hybrid_api(scenario: Scenario, name: str) -> str | None:
    option = scenario.option(name)
    return option.api if isinstance(option, HybridOption) else None


def decision_advantage(decision: Decision, scenario: Scenario, *, recommendation: str, strict: bool,
                       skip: Collection[str] = ()) -> Advantage:
    """Advantage of `recommendation` in a (re-)evaluated decision; strict: alternatives must meet the SLO;
    `skip`: its equivalents (decision/equivalents.py), never its alternative."""
    chosen = decision.option(recommendation)
    best_name, best_usd = None, math.inf
    for option in decision.usable_options:
        if option.name == recommendation or option.name in skip or (strict and (not option.meets_slo or option.throttled)):
            continue
        if option.kind == "hybrid" and option.replicas == 0 and _hybrid_api(scenario, option.name) == recommendation:
            continue  # 0 base replicas: the same plan as the recommended API
        if chosen.kind == "hybrid" and chosen.replicas == 0 and _hybrid_api(scenario, recommendation) == option.name:
            continue
        if option.ranking_usd < best_usd:  # on the ranking's basis: $/month, or the horizon total with commitments
            best_name, best_usd = option.name, option.ranking_usd
    fails = strict and (not chosen.meets_slo or chosen.throttled)
    return Advantage(best_usd - chosen.ranking_usd if best_name else math.inf, best_name, fails)


def model_advantage(model: CostModel, scaling: Scaling, *, strict: bool, skip: Collection[str] = ()) -> Advantage:
    """Advantage of the model's recommendation under `scaling`, from the economics alone (`skip`: its equivalents)."""
    chosen = model.recommendation
    best_name, best_key, best_usd = None, (math.inf, 0), math.inf
    for option in model.options:
        if option.name == chosen or option.name in skip or same_plan(model, option.name, chosen, scaling):
            continue
        if strict and (not option.meets_slo or throttled(model, option.name, scaling)
                       or not serves(model, option.name, scaling)):
            continue
        usd = ranked_usd(model, option.name, scaling)
        key = (round(usd, 2), SIMPLICITY[option.kind])  # ties go to the simpler option, as `decide` ranks
        if key < best_key:
            best_name, best_key, best_usd = option.name, key, usd
    fails = strict and (throttled(model, chosen, scaling) or not serves(model, chosen, scaling))
    chosen_usd = ranked_usd(model, chosen, scaling)
    return Advantage(best_usd - chosen_usd if best_name else math.inf, best_name, fails)


def _flip(model: CostModel, *, strict: bool, upward: bool, skip: Collection[str] = ()) -> FlipVolume | None:
    scale = first_volume(lambda s: model_advantage(model, Scaling(volume=s), strict=strict, skip=skip).flips,
                         upward=upward, steps=step_volumes(model, up_to=10.0**FLIP_SEARCH_DECADES))
    if scale is None:
        return None
    after = model_advantage(model, Scaling(volume=scale), strict=strict, skip=skip)
    return FlipVolume("above" if upward else "below", scale, scale * model.tokens_per_month, after.alternative)


def overtakes_at(model: CostModel, name: str, *, against: str) -> float | None:
    """Smallest volume multiple above 1 at which option `name` costs no more than `against` (None: not by 100x)."""
    return first_volume(
        lambda s: ranked_usd(model, name, Scaling(volume=s)) <= ranked_usd(model, against, Scaling(volume=s)),
        upward=True, steps=step_volumes(model, up_to=10.0**FLIP_SEARCH_DECADES),
    )


def efficiency_factors(scenario: Scenario, decision: Decision, *, scale: float,
                       calibration: Calibration | None) -> tuple[tuple[str, float], ...]:
    """Per self-hosted option: roofline capacity at `scale` x efficiency over roofline capacity as given."""
    factors = []
    for option in scenario.options:
        if not isinstance(option, SelfHostOption) or not decision.option(option.name).capacity_requests_per_second:
            continue
        base, _ = self_host_capacity(scenario, option, calibration=calibration, method="roofline")
        scaled, _ = self_host_capacity(scenario, option, calibration=calibration, method="roofline",
                                       efficiency_scale=scale)
        ratio = scaled.requests_per_second / base.requests_per_second if base.requests_per_second > 0 else 1.0
        factors.append((option.name, ratio if scaled.feasible else 0.0))
    return tuple(factors)


def sensitivity(
    scenario: Scenario,
    decision: Decision,
    model: CostModel,
    *,
    calibration: Calibration | None = None,
    today: dt.date | None = None,
    fraction: float = DEFAULT_FRACTION,
    capacity_cache: CapacityCache | None = None,
) -> Sensitivity:
    """The tornado at +-`fraction` and the flip volumes within 1/100x .. 100x (see module docstring).
    Pass the `capacity_cache` the decision was made with so unchanged capacities are not simulated again."""
    cache = capacity_cache if capacity_cache is not None else CapacityCache()
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    recommendation = decision.chosen_name()
    chosen = decision.option(recommendation)
    strict = chosen.meets_slo and not chosen.throttled
    twins = equivalents(decision.usable_options, chosen)  # reordering these is no flip: compare with the next different one
    bars = []
    for field, label, method in FACTORS:
        ends = []
        for scale in (1.0 - fraction, 1.0 + fraction):
            if method == "decide":
                again = decide(scenario, calibration=calibration, today=today, capacity_cache=cache,
                               overrides=replace(Overrides(), **{field: scale}))
                ends.append(decision_advantage(again, scenario, recommendation=recommendation, strict=strict,
                                               skip=twins))
            elif field == "efficiency":
                factors = efficiency_factors(scenario, decision, scale=scale, calibration=calibration)
                ends.append(model_advantage(model, Scaling(capacity_factors=factors), strict=strict, skip=twins))
            else:
                tokens = Scaling(prompt_tokens=scale) if field == "prompt_tokens" else Scaling(output_tokens=scale)
                ends.append(model_advantage(model, tokens, strict=strict, skip=twins))
        bars.append(SensitivityBar(field, label, method, 1.0 - fraction, 1.0 + fraction, ends[0], ends[1]))
    order = sorted(range(len(bars)), key=lambda i: (-bars[i].swing_usd_per_month, i))
    return Sensitivity(
        recommendation=recommendation,
        fraction=fraction,
        base=decision_advantage(decision, scenario, recommendation=recommendation, strict=strict, skip=twins),
        bars=tuple(bars[i] for i in order),
        flip_below=_flip(model, strict=strict, upward=False, skip=twins),
        flip_above=_flip(model, strict=strict, upward=True, skip=twins),
        equivalents=twins,
        ranking_basis=decision.ranking_basis,
    )
