"""Chart data for the fleet over the day and the cost over the horizon (app Compare page and memo).

Replicas by hour: each self-hosted or hybrid option's `OptionResult.replicas_by_hour` (what the fleet pays
in each hour of month 0, decision/fleet.py; a mixed fleet's split into its fixed base and on-demand burst,
decision/mixed.py) against the hourly demand (`Decision.hourly_profile` x the mean
request rate). Provisioned requests/s in hour h = replicas_h x capacity per replica at the SLO.
Cost by month: `OptionResult.usd_by_month` as the decision computed it (decision/horizon.py). When no option
carries it the chart says "horizon not computed": a flat line of $/month x months would claim a horizon
nobody evaluated (no growth, no re-sizing, no commitments). Pure data, no plotting.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.decision.results import Decision, OptionResult

HORIZON_NOT_COMPUTED = ("horizon not computed: this decision has no month-by-month cost (usd_by_month); "
                        "the cost by month is shown once the horizon is evaluated")


@dataclass(frozen=True)
class HourlyFleet:
    """One option's replicas in each hour of the day and the requests/s they sustain at the SLO."""

    name: str
    kind: str
    scaling: str | None  # "fixed" | "autoscale" | "mixed"
    replicas_by_hour: tuple[int, ...]
    requests_per_second_by_hour: tuple[float, ...]  # replicas_h x capacity per replica at the SLO
    base_replicas: int | None = None  # a mixed fleet's fixed base (reserved or owned), paid 24/7
    burst_replicas_by_hour: tuple[int, ...] | None = None  # a mixed fleet's on-demand burst above the base
    base_requests_per_second: float | None = None  # base_replicas x capacity per replica at the SLO

    @property
    def split(self) -> str:
        """'base 2 + burst 0..3' for a mixed fleet (its fixed base and the burst's range over the day), else ''."""
        if self.base_replicas is None or not self.burst_replicas_by_hour:
            return ""
        burst = self.burst_replicas_by_hour
        return f"base {self.base_replicas} + burst {min(burst)}..{max(burst)}"


@dataclass(frozen=True)
class FleetChart:
    """Hourly demand (month 0) against each option's fleet in that hour."""

    hours: tuple[int, ...]
    demand_requests_per_second: tuple[float, ...]
    fleets: tuple[HourlyFleet, ...]


@dataclass(frozen=True)
class MonthSeries:
    """USD paid in each month of the horizon by one option."""

    name: str
    kind: str
    usd_by_month: tuple[float, ...]
    usd_horizon_total: float | None
    usd_committed_after_horizon: float | None = None  # a reserved term's tail, still owed after the last month
    commitment_term_months: int | None = None


@dataclass(frozen=True)
class MonthsChart:
    """Cost by month for the options that carry it; `computed` False: draw nothing, say `note`."""

    horizon_months: int
    series: tuple[MonthSeries, ...]
    ranking_change_month: int | None
    computed: bool
    note: str  # HORIZON_NOT_COMPUTED when nothing was computed, else ""


def fleet_cell(result: OptionResult) -> str:
    """The table's fleet cell: 'mixed: base 2 + burst 0..3', 'autoscale: 0..5 by hour', 'fixed: 3', '' for an API."""
    hours = result.replicas_by_hour
    if result.kind == "api" or not hours:
        return ""
    burst = result.burst_replicas_by_hour
    if result.scaling == "mixed" and result.base_replicas is not None and burst:
        return f"mixed: base {result.base_replicas} + burst {min(burst)}..{max(burst)}"
    if result.scaling == "autoscale":
        return f"autoscale: {min(hours)}..{max(hours)} by hour"
    return f"fixed: {max(hours)}"


def fleet_chart(decision: Decision) -> FleetChart:
    """Replicas by hour of every usable self-host or hybrid option that keeps replicas, with the demand."""
    hours = len(decision.hourly_profile)
    fleets = []
    for result in decision.usable_options:
        per_replica = result.capacity_requests_per_second or 0.0
        by_hour = result.replicas_by_hour
        if result.kind == "api" or by_hour is None or len(by_hour) != hours or max(by_hour, default=0) <= 0:
            continue
        mixed = result.scaling == "mixed" and result.base_replicas is not None \
            and result.burst_replicas_by_hour is not None and len(result.burst_replicas_by_hour) == hours
        fleets.append(HourlyFleet(
            name=result.name, kind=result.kind, scaling=result.scaling, replicas_by_hour=tuple(by_hour),
            requests_per_second_by_hour=tuple(r * per_replica for r in by_hour),
            base_replicas=result.base_replicas if mixed else None,
            burst_replicas_by_hour=tuple(result.burst_replicas_by_hour or ()) if mixed else None,
            base_requests_per_second=(result.base_replicas or 0) * per_replica if mixed else None,
        ))
    return FleetChart(
        hours=tuple(range(hours)),
        demand_requests_per_second=tuple(f * decision.mean_requests_per_second for f in decision.hourly_profile),
        fleets=tuple(fleets),
    )


def months_chart(decision: Decision) -> MonthsChart:
    """Each usable option's `usd_by_month`; "horizon not computed" when none has it."""
    series = tuple(
        MonthSeries(name=o.name, kind=o.kind, usd_by_month=tuple(o.usd_by_month), usd_horizon_total=o.usd_horizon_total,
                    usd_committed_after_horizon=o.usd_committed_after_horizon,
                    commitment_term_months=o.commitment_term_months)
        for o in decision.usable_options if o.usd_by_month
    )
    return MonthsChart(
        horizon_months=decision.horizon_months, series=series, ranking_change_month=decision.ranking_change_month,
        computed=bool(series), note="" if series else HORIZON_NOT_COMPUTED,
    )
