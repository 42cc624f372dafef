"""The decision object: ranked options with SLO verdicts, costs, break-even and provenance.

This is what `costmodel compare --json`, the app's Compare page and the PDF memo render. Built by
`costmodel.decision.rank.decide(scenario)`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from costmodel.decision.quality import ResolvedFloor
from costmodel.decision.result_contract import cheaper_unverified_contract, decision_contract, option_contract
from costmodel.decision.result_parts import (  # re-exported: every face imports them here
    EXCLUSION_LABELS,
    CostBreakdown,
    PriceSource,
    SloStatus,
    exclusion_label,
)
from costmodel.errors import CostmodelError

if TYPE_CHECKING:  # decision/plan.py builds on the fleet modules, which import this one
    from costmodel.decision.plan import OptionPlan

OptionKind = Literal["api", "self-host", "hybrid"]
__all__ = ["EXCLUSION_LABELS", "CheaperUnverified", "CostBreakdown", "Decision", "OptionKind", "OptionResult",
           "PriceSource", "RankingBasis", "SloStatus", "exclusion_label"]


LatencySource = Literal["simulated", "measured", "published", "none"]
# What options are ranked by: $/month (no horizon set), or the horizon total with commitments (horizon_months set).
RankingBasis = Literal["usd_per_month", "usd_horizon_total_with_commitments"]


@dataclass(frozen=True, kw_only=True)
class OptionResult:
    """One option of the scenario, evaluated for its workload at month 0 (built with keywords only).

    Decisions read the typed fields (`slo_status`, `retired`, `throughput_bound`, `throttled`), never the
    text of `slo_reason` or `notes`, which are for people."""

    name: str
    kind: OptionKind
    usd_per_month: float
    usd_per_mtok: float  # blended over prompt + output tokens
    usd_per_mtok_input: float  # cost attributed to prompt tokens (self-host: by GPU time spent on prefill)
    usd_per_mtok_output: float
    meets_slo: bool
    slo_reason: str  # why it meets or misses (numbers), or why it cannot be verified
    breakdown: CostBreakdown
    price_sources: tuple[PriceSource, ...]
    slo_status: SloStatus = "meets"  # "unverified": no measured or published latency backs the verdict
    latency_source: LatencySource = "none"
    ttft_p90_seconds: float | None = None
    tpot_p90_seconds: float | None = None
    # The band around each p90 figure (decision/evidence.py): a probe's interval, a published median widened by a
    # sourced dispersion, or a simulation widened by its documented validation error; None: no figure.
    ttft_p90_seconds_low: float | None = None
    ttft_p90_seconds_high: float | None = None
    tpot_p90_seconds_low: float | None = None
    tpot_p90_seconds_high: float | None = None
    latency_basis: str = ""  # for people: what the band rests on
    engine: str | None = None  # self-host and hybrid: the serving engine profile the capacity was simulated with
    gpus: int = 0  # GPUs provisioned (0 for an API)
    replicas: int = 0
    utilization: float | None = None  # mean demand / provisioned capacity at the SLO (self-host, hybrid)
    break_even_utilization: float | None = None  # vs the reference API (self-host only)
    break_even_tokens_per_month: float | None = None  # volume where self-host $/month = reference API $/month
    break_even_against: str | None = None  # name of the reference API option
    throttled: bool = False  # API rate limits are below the peak minute's demand
    retired: bool = False  # the API row's model is retired at the evaluation date
    throughput_bound: bool = False  # sized next to saturation: the latency limits do not bind (no headroom)
    capacity_requests_per_second: float | None = None  # per replica at the SLO (self-host, hybrid's base)
    tokens_per_second_per_replica: float | None = None  # prompt + output tokens/s per replica at the SLO
    notes: tuple[str, ...] = ()
    model_id: str | None = None
    hardware_id: str | None = None
    gpus_per_replica: int | None = None
    usd_per_gpu_hour: float | None = None
    api_usd_per_request: float | None = None
    # API: priced through the provider's batch API (its window fits the SLO; pricing/batch_window.py); a
    # hybrid whose overflow goes to such an API carries its API part's flag.
    priced_via_batch_api: bool = False
    efficiency_source: str | None = None
    # Set when the option cannot be evaluated or cannot serve the workload (decision/validity.py): shown
    # with the reason, never ranked first, recommended or used as a reference. Costs are then NaN.
    excluded_reason: str | None = None
    excluded_kind: str | None = None
    excluded_kinds: tuple[str, ...] = ()  # every infeasibility kind found (excluded_kind is the first)
    latency_owner: str | None = None  # which part owns p90 TTFT/TPOT, with the lever (serving.breakdown)
    quality_score: float | None = None  # on the floor's benchmark (default lmarena-text); None: no published score
    retires_on: dt.date | None = None  # the API model's retirement date, when the sheet records one
    # Fleet policy and shape (self-host, hybrid; decision/fleet.py): headroom, replica floor, why.
    min_replicas: int | None = None
    target_peak_utilization: float | None = None
    spare_replicas: int = 0  # N+k: replicas beyond ceil(demand / capacity) in each hour with demand
    fleet_reason: str | None = None
    scaling: str | None = None  # "fixed" | "autoscale" | "mixed"
    replicas_by_hour: tuple[int, ...] | None = None  # replicas paid in each hour of the day, month 0
    gpu_hours_per_month: float | None = None
    capacity_method: str | None = None  # "simulator" | "roofline": how the replica's capacity at the SLO was found
    # Horizon (decision/horizon.py): USD paid in each month 0..horizon_months-1, growth applied, re-sized monthly.
    usd_by_month: tuple[float, ...] | None = None
    usd_horizon_total: float | None = None
    # Reserved terms (decision/horizon.py): USD still owed after the horizon's last month for replicas committed
    # within it, and the horizon total with that commitment added (what the plan signs for).
    usd_committed_after_horizon: float | None = None
    usd_horizon_total_with_commitments: float | None = None
    # What the ranking compares (decision/rank.py `rank_options` reads `ranking_usd`): $/month, or, when the
    # scenario sets horizon_months or a usable option commits past the horizon, the horizon total with commitments.
    ranking_basis: RankingBasis = "usd_per_month"
    commitment_term_months: int | None = None  # the reserved term in months (None: no commitment)
    # Measurement files the option uses (decision/attach.py), one line each; forced: one was written with
    # --force past its held-out check, and every face says so.
    calibrations: tuple[str, ...] = ()
    calibration_forced: bool = False
    # Mixed fleets (decision/mixed.py): replicas of the fixed base and the burst's replicas in each hour.
    base_replicas: int | None = None
    burst_replicas_by_hour: tuple[int, ...] | None = None
    burst_usd_per_gpu_hour: float | None = None  # mixed: the burst's on-demand and spot prices (the volume sweep)
    burst_spot_usd_per_gpu_hour: float | None = None
    ops_usd_per_gpu_month: float = 0.0  # the per-GPU part of ops (self-host, hybrid); the rest is fixed
    # Owned hardware whose host server (capex, power) has no sourced figure: its cost leaves the host out, so
    # the ranking puts it after every option with a complete cost (decision/rank.py); notes say so.
    host_not_counted: bool = False
    # Instances (decision/instances.py): the replicas packed into the offering's whole instances, billed whole.
    # Fixed fleet: its instances; hourly fleet: the busiest hour's (mixed: base + burst). None for an API.
    instances: int | None = None
    gpus_billed: int | None = None  # instances x GPUs per instance (>= gpus)
    gpus_per_instance: int | None = None  # of the offering (mixed: of the base); 1 = GPUs sold singly
    burst_gpus_per_instance: int | None = None  # mixed: of the on-demand burst offering
    burst_spot_gpus_per_instance: int | None = None  # mixed: of the spot burst offering
    # The self-host plan this result costs (decision/plan.py): the horizon, the volume sweep and sensitivity
    # re-cost it at other demands. None for an API and for an option that could not be evaluated.
    plan: OptionPlan | None = None

    @property
    def ranking_usd(self) -> float:
        """The cost the ranking compares: `usd_horizon_total_with_commitments` when ranking_basis says so and
        it is known, else usd_per_month."""
        if self.ranking_basis == "usd_horizon_total_with_commitments" and \
                self.usd_horizon_total_with_commitments is not None:
            return self.usd_horizon_total_with_commitments
        return self.usd_per_month

    @property
    def all_traffic_to_api(self) -> bool:
        """A hybrid that keeps 0 base replicas: the same plan as its API (listed, not ranked as its own row)."""
        return self.kind == "hybrid" and self.replicas == 0 and self.excluded_reason is None

    def contract(self) -> dict[str, object]:
        """DESIGN.md `compare --json` keys for one option, plus details."""
        return option_contract(self)


@dataclass(frozen=True, kw_only=True)
class CheaperUnverified:
    """A usable option cheaper than the recommendation whose latency is unverified: what verifying it would save."""

    option: str
    usd_per_month: float
    saving_usd_per_month: float  # recommendation's $/month - this option's
    saving_fraction: float  # saving / the recommendation's $/month
    check: str  # the exact `costmodel probe-endpoint` command that would settle it, with the scenario's SLO
    # The saving on the horizon total with commitments, when the options are ranked on it (else None).
    saving_usd_with_commitments: float | None = None

    def contract(self) -> dict[str, object]:
        """`compare --json` `cheaper_unverified` object."""
        return cheaper_unverified_contract(self)


@dataclass(frozen=True)
class Decision:
    """Options ranked (usable by $/month, excluded last), the recommendation and why."""

    scenario_name: str
    options: tuple[OptionResult, ...]  # ranked: usable by $/month, then excluded
    recommendation: str | None  # name of the chosen option; None when every option is excluded (reasons say why)
    recommendation_meets_slo: bool
    reasons: tuple[str, ...]  # sentences with the numbers that drive the choice
    warnings: tuple[str, ...]  # common mistakes this scenario is exposed to
    requests_per_month: float
    tokens_per_month: float  # prompt + output
    mean_prompt_tokens: float
    mean_output_tokens: float
    mean_requests_per_second: float
    peak_requests_per_second: float
    hourly_profile: tuple[float, ...]  # 24 factors, mean 1
    efficiency_source: str  # datasheet defaults, or the calibration used
    calibration_source: str | None = None
    as_of: dt.date | None = None  # the evaluation date: retirements and price ages count to it
    horizon_months: int = 12  # months the decision is evaluated over
    quality_floor: ResolvedFloor | None = None  # None: no floor, the options are treated as substitutes
    retiring_soon: tuple[tuple[str, dt.date], ...] = ()  # (option, date) retiring within 90 days of as_of
    ranking_change_month: int | None = None  # first month (0-based) whose cheapest usable option differs; None: none
    substitutes: tuple[tuple[str, ...], ...] | None = None  # the scenario's substitutes groups; None: not given
    ranking_change_reason: str = ""  # the sentence on the ranking over the horizon (changes or not), for people
    # The cheapest usable option when it is cheaper than the recommendation and its latency unverified.
    cheaper_unverified: CheaperUnverified | None = None
    # Recommendation $/month - the cheapest usable option's (0 when it is that option; None: no recommendation).
    recommendation_premium_usd_per_month: float | None = None
    # The same premium on the horizon total with commitments, when the options are ranked on it (else None).
    recommendation_premium_usd_with_commitments: float | None = None
    cheapest_usable: str | None = None  # the cheapest option not excluded (any latency status)
    ranking_basis: RankingBasis = "usd_per_month"  # what `options` are ranked by (OptionResult.ranking_usd)
    ranking_basis_reason: str = ""  # why that basis, one sentence (decision/ranking.py `ranking_basis_reason`)

    @property
    def usable_options(self) -> tuple[OptionResult, ...]:
        """Ranked options that were evaluated (no `excluded_reason`): what charts, volumes and sensitivity use."""
        return tuple(o for o in self.options if o.excluded_reason is None)

    def chosen_name(self) -> str:
        """The recommendation's name; CostmodelError (exit 2) stating why when every option is excluded."""
        if self.recommendation is None:
            raise CostmodelError("nothing to recommend: " + " ".join(self.reasons))
        return self.recommendation

    def chosen(self) -> OptionResult:
        """The recommended option (CostmodelError when there is none; see `chosen_name`)."""
        return self.option(self.chosen_name())

    def option(self, name: str) -> OptionResult:
        """The evaluated option with this name."""
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def contract(self) -> dict[str, object]:
        """DESIGN.md `compare --json` object."""
        return decision_contract(self)
