"""The memo's rollout plan (what to measure before sign-off, and the pass criteria) and its annual and
multi-year totals. Pure functions of the decision's typed fields and the scenario's SLO.

Totals come only from `OptionResult.usd_by_month` (the horizon, decision/horizon.py): without it the memo
says the horizon was not computed instead of multiplying month 0 by twelve (no growth, no re-sizing).
"""

from __future__ import annotations

from costmodel.charts.fleet import HORIZON_NOT_COMPUTED
from costmodel.decision.results import Decision
from costmodel.memo.blocks import Block, Bullets, Para, Table, money, short
from costmodel.memo.text import slo_limits
from costmodel.scenario import Scenario

MONTHS_PER_YEAR = 12


def rollout_plan(decision: Decision, scenario: Scenario) -> Bullets:
    """Steps from today's evidence to sign-off: measure what is assumed, pilot, compare with the memo's figures."""
    if decision.recommendation is None:
        return Bullets(("Nothing is recommended, so there is nothing to roll out: fix the reasons on page 1 first.",))
    chosen = decision.chosen()
    steps: list[str] = []
    unverified = [short(o.name) for o in decision.usable_options if o.slo_status == "unverified"]
    if unverified:
        steps.append("Measure the APIs whose latency is assumed (" + ", ".join(unverified) + ") with "
                     "`costmodel probe-endpoint` at the scenario's prompt and output lengths.")
    if chosen.kind != "api":
        per_replica = chosen.capacity_requests_per_second or 0.0
        steps.append(f"Stand up one replica of {short(chosen.name)}; probe it (`costmodel probe`, `costmodel "
                     f"calibrate`) and sweep its endpoint (`costmodel probe-endpoint`) to confirm "
                     f"{per_replica:.2f} requests/s per replica within the SLO ({slo_limits(scenario)}).")
        count = f"{chosen.replicas} replica" if chosen.replicas == 1 else f"{chosen.replicas} replicas"
        steps.append(f"Pilot on a share of production traffic with {count} "
                     f"({chosen.scaling or 'fixed'} fleet); keep the API path for failover until the pass criteria hold.")
    else:
        steps.append(f"Pilot {short(chosen.name)} on a share of production traffic; check its rate limits at the "
                     f"peak hour ({decision.peak_requests_per_second:.2f} requests/s).")
    steps.append(f"Pass criteria before sign-off: measured p90 latencies within {slo_limits(scenario)} at the peak "
                 f"hour's rate, and a bill of about {money(chosen.usd_per_month)}/month at "
                 f"{decision.tokens_per_month / 1e9:,.2f}B tokens/month; re-run `costmodel memo` with the measurements "
                 "and the calibration.")
    return Bullets(tuple(steps))


def totals_blocks(decision: Decision) -> list[Block]:
    """Annual (first 12 months) and horizon totals per option from usd_by_month, or why there are none; where an
    option commits past the horizon, what it still owes after it and the total with it (what the plan signs for)."""
    options = [o for o in decision.usable_options if o.usd_by_month]
    if not options:
        return [Para(f"Annual and multi-year totals: {HORIZON_NOT_COMPUTED}.", style="small")]
    months_n = decision.horizon_months
    committed = any(o.usd_committed_after_horizon for o in options)
    rows = []
    for option in options:
        months = option.usd_by_month or ()
        first_year = money(sum(months[:MONTHS_PER_YEAR])) if len(months) >= MONTHS_PER_YEAR else "-"
        total = option.usd_horizon_total if option.usd_horizon_total is not None else sum(months)
        owed = option.usd_committed_after_horizon or 0.0
        tail = (money(owed), money(total + owed)) if committed else ()
        rows.append((short(option.name), money(months[0]), first_year, money(total), *tail))
    header: tuple[str, ...] = ("Option", "Month 0", "First 12 months", f"{months_n}-month total")
    caption = ("Sums of the month-by-month cost (growth applied, fleets re-sized each month); '-': the horizon is "
               "shorter than a year.")
    if committed:
        header += (f"Owed after month {months_n}", "Total with commitments")
        caption += (" Owed after: reserved replica-months committed within the horizon and still paid after it "
                    "(decision/horizon.py); the total with commitments is what each option signs for.")
    basis = " " + decision.ranking_basis_reason if committed and decision.ranking_basis_reason else ""
    return [Table(
        header=header, rows=tuple(rows),
        widths=(0.25, 0.13, 0.15, 0.15, 0.15, 0.17) if committed else (0.4, 0.18, 0.2, 0.22),
        align=("l", "r", "r", "r", "r", "r") if committed else ("l", "r", "r", "r"),
        font_size=7.5 if committed else 8.5,
        caption=caption + basis,
    )]
