"""Assemble the memo: every section's blocks plus the data its charts draw. Pure (no PDF, no plotting)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from costmodel.charts.fleet import FleetChart, MonthsChart, fleet_chart, months_chart
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.rank import decide
from costmodel.decision.results import Decision
from costmodel.decision.sensitivity import DEFAULT_FRACTION, Sensitivity, sensitivity
from costmodel.decision.volume import cost_model
from costmodel.measurements.calibration import Calibration
from costmodel.memo.blocks import Block, Bullets, Figure, Heading, Para, money, short
from costmodel.memo.configurations import scope_blocks, search_blocks
from costmodel.memo.curves import (
    InteractivityCurve,
    KvPanel,
    TrafficCurves,
    VolumeCurves,
    interactivity_curves,
    kv_panels,
    traffic_curves,
    volume_curves,
)
from costmodel.memo.infeasible import infeasible_blocks
from costmodel.memo.latency_section import latency_blocks
from costmodel.memo.operate import drawbacks_blocks, monitoring_blocks, rollback_blocks
from costmodel.memo.review import (
    context_blocks,
    goals_blocks,
    open_questions,
    reliability_blocks,
    signoff_table,
)
from costmodel.memo.risks import (
    assumption_items,
    formula_blocks,
    provenance_blocks,
    risk_items,
    sources_table,
)
from costmodel.memo.rollout import rollout_plan, totals_blocks
from costmodel.memo.text import (
    NO_SPREAD_USD_PER_MONTH,
    decision_blocks,
    option_notes,
    options_table,
    sensitivity_blocks,
    sensitivity_table,
    workload_table,
)
from costmodel.scenario import Scenario

if TYPE_CHECKING:  # a memo without a search never imports the search package
    from costmodel.search import SearchResult

TITLE = "Design review: API or self-hosted LLM serving"


@dataclass(frozen=True)
class ChartData:
    """What the five charts draw."""

    recommendation: str
    tpot_limit_seconds: float
    volume: VolumeCurves
    interactivity: tuple[InteractivityCurve, ...]
    traffic: TrafficCurves
    kv: tuple[KvPanel, ...]
    sensitivity: Sensitivity
    search: SearchResult | None = None  # the deployment search behind "Configurations considered"
    fleet: FleetChart | None = None  # replicas by hour (Figure 2 steps with it; flat lines without)
    months: MonthsChart | None = None  # cost by month, when the horizon was computed


@dataclass(frozen=True)
class MemoContent:
    """The whole memo as data: header fields, blocks in reading order, chart data."""

    title: str
    scenario_name: str
    date: dt.date
    description: str
    blocks: tuple[Block, ...]
    charts: ChartData | None  # None: no option is feasible, so nothing is charted (memo/infeasible.py)
    decision: Decision
    searched_top_k: int = 0  # configurations a search added to the options (`compare --search K` reproduces them)


def _chart_blocks(charts: ChartData) -> list[Block]:
    mixed = [f for f in (charts.fleet.fleets if charts.fleet is not None else ()) if f.split]
    split = ("".join(f" {f.name}: {f.split}, the base (reserved or owned, dashed) paid 24/7 and the on-demand "
                     "burst above it paid only in the hours it runs." for f in mixed))
    blocks: list[Block] = [
        Figure("volume", "Figure 1. $/month of each option as the monthly volume scales with today's token mix and "
               "traffic shape (log-log). Self-hosted cost steps up one replica at a time; API cost is a straight "
               "line. The solid vertical line is today's volume; dotted lines mark where the recommendation "
               "flips; diamonds mark each self-host option's break-even volume against its reference API. Dashed "
               "lines: options that miss the SLO; dash-dot: options whose latency is unverified (no measured or "
               "published latency)."),
        Figure("traffic", "Figure 2. Requests/s in each hour of the day (bars, month 0) against the requests/s each "
               "self-hosted or hybrid option provisions at the SLO in that hour (replicas paid in the hour x "
               "capacity per replica; the replica count is labelled where it changes). The gap between the bars "
               "and a line is idle capacity you pay for." + split, height_fraction=0.36),
    ]
    if charts.months is not None and charts.months.computed:
        blocks.append(Figure(
            "months", f"Figure 2b. USD paid in each month of the {charts.months.horizon_months}-month horizon "
            "(growth applied, fleets re-sized each month), one line per option; the dotted line marks the month "
            "the ranking changes, if it does.", height_fraction=0.36))
    elif charts.months is not None:
        blocks.append(Para(f"Cost by month: {charts.months.note}."))
    if charts.interactivity:
        blocks.append(Figure(
            "interactivity", "Figure 3. Throughput vs interactivity from the serving simulator: output tokens/s per "
            "GPU against tokens/s per user (1 / mean TPOT) as concurrent users grow (labels = users; closed loop, "
            "the scenario's prompt and output lengths, prefill included). Hollow points miss the p90 TPOT limit; "
            "left of the shaded line the SLO is missed whatever the throughput. Stars: each option's operating "
            "point in the decision (its capacity at the SLO under Poisson arrivals, plotted at 1 / p90 TPOT), "
            "which can sit off the closed-loop curve."))
    if charts.kv:
        blocks.append(Figure(
            "kv", "Figure 4. Memory per GPU (weights + workspace + reserve + KV) as a share of HBM against concurrent "
            "sequences per replica: solid at the mean context, dashed at the p99 prompt + p99 output context. "
            "Where a line crosses 100% is the concurrency ceiling; triangles mark the estimated sequences in "
            "flight per replica in the peak hour (Little's law).", height_fraction=0.38))
    if not charts.interactivity:
        blocks.append(Para("No self-hosted option can meet the SLO here, so there is no throughput or memory chart."))
    return blocks


def memo_content(
    scenario: Scenario,
    decision: Decision | None = None,
    *,
    calibration: Calibration | None = None,
    today: dt.date | None = None,
    fraction: float = DEFAULT_FRACTION,
    capacity_cache: CapacityCache | None = None,
    search_result: SearchResult | None = None,
    search_top_k: int = 0,
) -> MemoContent:
    """Evaluate (unless `decision` is given) and lay out the memo for `scenario` as of `today`; pass the
    `capacity_cache` the decision was made with so sensitivity reuses its capacities, and the deployment
    search (with the K of its configurations added to the scenario) for "Configurations considered"."""
    today = scenario.evaluation_date(override=today)
    cache = capacity_cache if capacity_cache is not None else CapacityCache()
    decision = decision or decide(scenario, calibration=calibration, today=today, capacity_cache=cache)
    if decision.recommendation is None:  # nothing feasible: say so plainly, chart and flip nothing
        return MemoContent(title=TITLE, scenario_name=scenario.name, date=today,
                           description=scenario.description.strip(),
                           blocks=tuple(infeasible_blocks(decision, scenario)), charts=None, decision=decision)
    model = cost_model(decision, scenario)
    sens = sensitivity(scenario, decision, model, calibration=calibration, today=today, fraction=fraction,
                       capacity_cache=cache)
    interactivity = interactivity_curves(decision, scenario, calibration=calibration)
    kv = kv_panels(decision, scenario)
    charts = ChartData(
        recommendation=decision.chosen_name(), tpot_limit_seconds=scenario.slo.tpot_p90_seconds,
        volume=volume_curves(decision, model, sens), interactivity=interactivity,
        traffic=traffic_curves(decision), kv=kv, sensitivity=sens, search=search_result,
        fleet=fleet_chart(decision), months=months_chart(decision),
    )
    blocks: list[Block] = [Heading("Context"), *context_blocks(decision, scenario),
                           Heading("Goals and non-goals"), *goals_blocks(scenario, decision)]
    blocks += [Heading("1. Decision"), *decision_blocks(decision, scenario, model, sens), *scope_blocks(search_result)]
    blocks += [Heading("2. Workload and SLO"), workload_table(decision, scenario)]
    blocks += [Heading("3. Options compared"), options_table(decision), option_notes(decision)]
    blocks += latency_blocks(decision, scenario)
    if search_result is not None:
        blocks += search_blocks(search_result, top_k=search_top_k)
    blocks += [Heading("4. Cost, capacity and memory"), *_chart_blocks(charts), *totals_blocks(decision)]
    blocks += [Heading("5. Sensitivity"), *_tornado_blocks(decision, sens),
               *sensitivity_blocks(decision, scenario, sens)]
    blocks += [Heading("6. Risks and common mistakes"),
               _risk_bullets(decision, scenario, sens, kv=kv, curves=interactivity),
               Heading(f"Drawbacks of {short(decision.chosen_name())}", level=2), *drawbacks_blocks(decision, sens)]
    blocks += [Heading("7. Assumptions and sources"), sources_table(decision), *provenance_blocks(decision, calibration),
               assumption_items(sens, decision)]
    blocks += [Heading("8. Reliability"), *reliability_blocks(decision)]
    blocks += _closing_sections(decision, scenario, sens, today=today)
    blocks += [Heading("Appendix A. Formulas"), *formula_blocks()]
    return MemoContent(title=TITLE, scenario_name=scenario.name, date=today, description=scenario.description.strip(),
                       blocks=tuple(blocks), charts=charts, decision=decision,
                       searched_top_k=search_top_k if search_result is not None else 0)


def _tornado_blocks(decision: Decision, sens: Sensitivity) -> list[Block]:
    """The tornado and its table, or one sentence when no input moves the advantage (a chart of zero-width
    bars around $0 says nothing)."""
    fraction = sens.fraction
    base = sens.base.usd_per_month
    swings = [abs(v - base) for b in sens.bars for v in (b.low.usd_per_month, b.high.usd_per_month)
              if math.isfinite(v) and math.isfinite(base)]
    if not swings or max(swings) < NO_SPREAD_USD_PER_MONTH:
        return [Para(f"Sensitivity: no input changed by \u00b1{fraction:.0%} moves {short(decision.chosen_name())}'s "
                     f"$/month advantage over its best alternative by a dollar a month"
                     + (f" (it stays {money(base)}/month)" if math.isfinite(base) else "") + ", so there is no tornado "
                     "to draw; the volume where the decision flips (below) is what would change it.")]
    return [Figure("tornado", f"Figure 5. How {short(decision.chosen_name())}'s $/month advantage over its best "
                   f"alternative moves when one input changes by -{fraction:.0%} (light) or +{fraction:.0%} (dark). "
                   "The vertical line at 0 is where the decision flips.", height_fraction=0.36),
            sensitivity_table(sens)]


def _closing_sections(decision: Decision, scenario: Scenario, sens: Sensitivity, *, today: dt.date) -> list[Block]:
    """Open questions (left out when the checks find none), rollout, rollback, monitoring and sign-off."""
    blocks: list[Block] = []
    number = 9
    questions = open_questions(decision, sens)
    if questions.items:
        blocks += [Heading(f"{number}. Open questions"), questions]
        number += 1
    blocks += [Heading(f"{number}. Rollout plan"), rollout_plan(decision, scenario)]
    blocks += [Heading(f"{number + 1}. Rollback"), *rollback_blocks(decision)]
    blocks += [Heading(f"{number + 2}. Monitoring"), *monitoring_blocks(decision, scenario, sens)]
    blocks += [Heading(f"{number + 3}. Sign-off"), signoff_table(scenario, date=today)]
    return blocks


def _risk_bullets(decision: Decision, scenario: Scenario, sens: Sensitivity, *, kv: tuple[KvPanel, ...],
                  curves: tuple[InteractivityCurve, ...]) -> Block:
    items = risk_items(decision, scenario, sens, kv=kv, curves=curves)
    return Bullets(items or ("No risk checks fired for this scenario.",))
