"""The fleet policy of one self-host option: headroom, redundancy and how the replicas follow the day.

replicas_h = max(min_replicas, ceil(demand_h / (target_peak_utilization x capacity))) (docs/economics.md,
"Headroom and redundancy"), and, for N+k redundancy, at least ceil(demand_h / capacity) + k replicas in every
hour with demand: with k replicas down the rest still carry that hour at no more than 100% of capacity.
Defaults depend on whether the workload is interactive (a workload is interactive unless `batch_allowed`):
- interactive: target 0.8, i.e. 20% headroom, the middle of the "keep ~15-20% headroom" rule this tool
  already warns about (decision/warnings.py), spare_replicas 1 (true N+1: one replica can fail or be
  drained for an upgrade while the rest carry the peak) and min_replicas 2;
- batch: target 1.0, spare_replicas 0 and min_replicas 1 (a batch job can wait out a restart; results are
  due within 24 h).
An option's own fields win over the scenario's `fleet:` section, which wins over these defaults. The scaling
mode (`fixed`, `autoscale`, `mixed`) and its parameters come from the option's `scaling:` section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from costmodel.scenario import Scenario, SelfHostOption

INTERACTIVE_TARGET_PEAK_UTILIZATION = 0.8
BATCH_TARGET_PEAK_UTILIZATION = 1.0
INTERACTIVE_MIN_REPLICAS = 2
BATCH_MIN_REPLICAS = 1
INTERACTIVE_SPARE_REPLICAS = 1  # N+1
BATCH_SPARE_REPLICAS = 0
MAX_AUTOSCALE_REPLICAS = 1_000_000  # no scaling.max_replicas: the fleet grows with the demand

ScalingMode = Literal["fixed", "autoscale", "mixed"]


@dataclass(frozen=True, kw_only=True)
class FleetPolicy:
    """The resolved fleet policy of one self-host option, with where each value comes from.

    Headroom and redundancy apply to every mode; the hourly fields (max_replicas .. base_replicas) only to
    `autoscale` and `mixed` fleets."""

    target_peak_utilization: float
    min_replicas: int  # the headroom policy's floor (a fixed fleet's; an hourly fleet's unless hourly_min_replicas)
    reason: str  # for people: which value came from where
    spare_replicas: int = 0  # N+k: replicas beyond ceil(demand / capacity) in every hour with demand
    scaling: ScalingMode = "fixed"
    hourly_min_replicas: int | None = None  # scaling.min_replicas: an hourly fleet's own floor (0: empty hours)
    max_replicas: int = MAX_AUTOSCALE_REPLICAS  # scaling.max_replicas: hours that need more miss the SLO
    warmup_minutes: float = 0.0  # per replica started, billed per hour (decision/fleet.py)
    interruptions_per_replica_hour: float = 0.0  # spot: autoscale on a spot row, or a mixed burst's spot share
    spot_share: float = 0.0  # mixed: share of the burst's replica-hours on spot
    base_replicas: int | None = None  # mixed: pinned by scaling.base_replicas; None = the cheapest base each day
    max_replicas_set: int | None = None  # scaling.max_replicas as given (None: no ceiling), for the reasons

    @property
    def hourly(self) -> bool:
        """True when the replicas follow the hourly demand (autoscale, or a mixed fleet's burst)."""
        return self.scaling != "fixed"

    @property
    def floor(self) -> int:
        """The replicas every hour keeps: an hourly fleet's scaling.min_replicas when set (else min_replicas, at
        least 1); a fixed fleet's min_replicas."""
        if not self.hourly:
            return self.min_replicas
        return self.hourly_min_replicas if self.hourly_min_replicas is not None else (self.min_replicas or 1)


def fleet_policy(option: SelfHostOption, scenario: Scenario) -> FleetPolicy:
    """The option's headroom, replica floor and scaling: its own fields, else the scenario's `fleet:`, else
    defaults (module docstring)."""
    batch = scenario.workload.batch_allowed
    default_target = BATCH_TARGET_PEAK_UTILIZATION if batch else INTERACTIVE_TARGET_PEAK_UTILIZATION
    default_min = BATCH_MIN_REPLICAS if batch else INTERACTIVE_MIN_REPLICAS
    why_default = ("default for a batch workload (batch_allowed)" if batch
                   else "default for an interactive workload (batch_allowed is false)")

    def pick(own: float | int | None, fleet: float | int | None) -> tuple[float | int | None, str]:
        if own is not None:
            return own, "set on the option"
        if fleet is not None:
            return fleet, "set in the scenario's fleet section"
        return None, why_default

    target, target_why = pick(option.target_peak_utilization, scenario.fleet.target_peak_utilization)
    floor, floor_why = pick(option.min_replicas, scenario.fleet.min_replicas)
    spare, spare_why = pick(option.spare_replicas, scenario.fleet.spare_replicas)
    target_value = float(target) if target is not None else default_target
    floor_value = int(floor) if floor is not None else default_min
    spare_value = int(spare) if spare is not None else (BATCH_SPARE_REPLICAS if batch else INTERACTIVE_SPARE_REPLICAS)
    sizing = policy_rule(target_peak_utilization=target_value, min_replicas=floor_value, spare_replicas=spare_value)
    whys = {target_why, floor_why, spare_why}
    reason = (f"{sizing}: {target_why}" if len(whys) == 1
              else f"{sizing}: target {target_why}, floor {floor_why}, spare {spare_why}")
    scaling = option.scaling
    return FleetPolicy(target_peak_utilization=target_value, min_replicas=floor_value, reason=reason,
                       spare_replicas=spare_value, scaling=scaling.mode, hourly_min_replicas=scaling.min_replicas,
                       max_replicas=scaling.max_replicas or MAX_AUTOSCALE_REPLICAS,
                       warmup_minutes=scaling.warmup_minutes or 0.0,
                       interruptions_per_replica_hour=scaling.interruption_rate_per_hour or 0.0,
                       spot_share=scaling.spot_share, base_replicas=scaling.base_replicas,
                       max_replicas_set=scaling.max_replicas)


def policy_rule(*, target_peak_utilization: float, min_replicas: int, spare_replicas: int) -> str:
    """The sizing rule in words, as every output that states the policy says it."""
    plural = "replica" if min_replicas == 1 else "replicas"
    rule = f"each hour at {target_peak_utilization:.0%} of capacity at the SLO, at least {min_replicas} {plural}"
    if spare_replicas:
        rule += (f", N+{spare_replicas} (with {spare_replicas} down the rest still carry the hour at no more "
                 "than capacity)")
    return rule
