"""How robust is the recommendation? Its $/month advantage under +-X% inputs, and the volume where it flips.

Advantage = (cheapest eligible alternative's $/month) - (recommended option's $/month) at the same inputs;
> 0: the recommendation stays the better choice; <= 0, or the recommendation itself stops meeting the SLO
(or gets throttled): the decision flips. Eligible alternatives are the other options that meet the SLO and
are not throttled (all others when the recommendation misses the SLO to begin with), except a hybrid that
keeps 0 base replicas next to its own API (the same plan).

Each input is scaled by (1 - X) and (1 + X) alone (a tornado). GPU price, API price, efficiency and volume
re-run `decide` with `Overrides` (the roofline capacity included); the prompt and output token counts
re-run the economics through `costmodel.memo.volume` (first order, no override exists for them). The flip
volumes come from a sweep of `costmodel.memo.volume` (same economics as `decide`, checked by tests).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from costmodel.calibration import Calibration
from costmodel.decision import Overrides, decide
from costmodel.decision_types import Decision
from costmodel.memo.volume import CostModel, Scaling, same_plan, throttled, usd_per_month
from costmodel.scenario import HybridOption, Scenario

# (field, label, how): field of `Overrides` (how="decide") or of `Scaling` (how="economics").
FACTORS: tuple[tuple[str, str, str], ...] = (
    ("gpu_price", "GPU price ($/GPU-hour)", "decide"),
    ("api_price", "API price ($/M tokens)", "decide"),
    ("volume", "Volume (utilization at fixed replicas)", "decide"),
    ("efficiency", "Efficiency (eff_compute, eff_memory)", "decide"),
    ("prompt_tokens", "Prompt tokens per request", "economics"),
    ("output_tokens", "Output tokens per request", "economics"),
)
DEFAULT_FRACTION = 0.2  # +-20%
# Flip search: 1/100x .. 100x the scenario's volume, 10 points per decade, then bisection on the bracketing
# pair (self-host cost is a step function of volume, so the flip can sit on a jump).
FLIP_SEARCH_DECADES = 2.0
FLIP_GRID_PER_DECADE = 10
FLIP_BISECTIONS = 40


@dataclass(frozen=True)
class Advantage:
    """The recommendation's margin over its best alternative at one set of inputs."""

    usd_per_month: float  # alternative $/month - recommended $/month (inf: no eligible alternative)
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


def _hybrid_api(scenario: Scenario, name: str) -> str | None:
    option = scenario.option(name)
    return option.api if isinstance(option, HybridOption) else None


def decision_advantage(decision: Decision, scenario: Scenario, *, recommendation: str, strict: bool) -> Advantage:
    """Advantage of `recommendation` in a (re-)evaluated decision; strict: alternatives must meet the SLO."""
    chosen = decision.option(recommendation)
    best_name, best_usd = None, math.inf
    for option in decision.options:
        if option.name == recommendation or (strict and (not option.meets_slo or option.throttled)):
            continue
        if option.kind == "hybrid" and option.replicas == 0 and _hybrid_api(scenario, option.name) == recommendation:
            continue  # 0 base replicas: the same plan as the recommended API
        if chosen.kind == "hybrid" and chosen.replicas == 0 and _hybrid_api(scenario, recommendation) == option.name:
            continue
        if option.usd_per_month < best_usd:
            best_name, best_usd = option.name, option.usd_per_month
    fails = strict and (not chosen.meets_slo or chosen.throttled)
    return Advantage(best_usd - chosen.usd_per_month if best_name else math.inf, best_name, fails)


def model_advantage(model: CostModel, scaling: Scaling, *, strict: bool) -> Advantage:
    """Advantage of the model's recommendation under `scaling`, from the economics alone."""
    chosen = model.recommendation
    best_name, best_usd = None, math.inf
    for option in model.options:
        if option.name == chosen or same_plan(model, option.name, chosen, scaling):
            continue
        if strict and (not option.meets_slo or throttled(model, option.name, scaling)):
            continue
        usd = usd_per_month(model, option.name, scaling)
        if usd < best_usd:
            best_name, best_usd = option.name, usd
    fails = strict and throttled(model, chosen, scaling)
    chosen_usd = usd_per_month(model, chosen, scaling)
    return Advantage(best_usd - chosen_usd if best_name else math.inf, best_name, fails)


def first_volume(happens: Callable[[float], bool], *, upward: bool) -> float | None:
    """The volume multiple nearest 1 (above or below) at which `happens` turns true, within the search range;
    None if it is already true at 1 or never within the range."""
    if happens(1.0):
        return None
    steps = int(FLIP_SEARCH_DECADES * FLIP_GRID_PER_DECADE)
    exponents = np.linspace(0.0, FLIP_SEARCH_DECADES if upward else -FLIP_SEARCH_DECADES, steps + 1)
    scales = [float(10.0**e) for e in exponents]
    for holds, scale in itertools.pairwise(scales):
        if happens(scale):
            flipped = scale
            for _ in range(FLIP_BISECTIONS):
                middle = math.sqrt(holds * flipped)
                holds, flipped = (holds, middle) if happens(middle) else (middle, flipped)
            return flipped
    return None


def _flip(model: CostModel, *, strict: bool, upward: bool) -> FlipVolume | None:
    scale = first_volume(lambda s: model_advantage(model, Scaling(volume=s), strict=strict).flips, upward=upward)
    if scale is None:
        return None
    after = model_advantage(model, Scaling(volume=scale), strict=strict)
    return FlipVolume("above" if upward else "below", scale, scale * model.tokens_per_month, after.alternative)


def overtakes_at(model: CostModel, name: str, *, against: str) -> float | None:
    """Smallest volume multiple above 1 at which option `name` costs no more than `against` (None: not by 100x)."""
    return first_volume(
        lambda s: usd_per_month(model, name, Scaling(volume=s)) <= usd_per_month(model, against, Scaling(volume=s)),
        upward=True,
    )


def sensitivity(
    scenario: Scenario,
    decision: Decision,
    model: CostModel,
    *,
    calibration: Calibration | None = None,
    today: dt.date | None = None,
    fraction: float = DEFAULT_FRACTION,
) -> Sensitivity:
    """The tornado at +-`fraction` and the flip volumes within 1/100x .. 100x (see module docstring)."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    recommendation = decision.recommendation
    chosen = decision.option(recommendation)
    strict = chosen.meets_slo and not chosen.throttled
    bars = []
    for field, label, method in FACTORS:
        ends = []
        for scale in (1.0 - fraction, 1.0 + fraction):
            if method == "decide":
                again = decide(scenario, calibration=calibration, today=today,
                               overrides=replace(Overrides(), **{field: scale}))
                ends.append(decision_advantage(again, scenario, recommendation=recommendation, strict=strict))
            else:
                ends.append(model_advantage(model, replace(Scaling(), **{field: scale}), strict=strict))
        bars.append(SensitivityBar(field, label, method, 1.0 - fraction, 1.0 + fraction, ends[0], ends[1]))
    order = sorted(range(len(bars)), key=lambda i: (-bars[i].swing_usd_per_month, i))
    return Sensitivity(
        recommendation=recommendation,
        fraction=fraction,
        base=decision_advantage(decision, scenario, recommendation=recommendation, strict=strict),
        bars=tuple(bars[i] for i in order),
        flip_below=_flip(model, strict=strict, upward=False),
        flip_above=_flip(model, strict=strict, upward=True),
    )
