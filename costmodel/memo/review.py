"""The design-review sections around the analysis: Context, Goals and non-goals, Reliability, Open
questions and Sign-off. Fed by the scenario's optional `description`, `constraints`, `goals`, `non_goals`
and `owner`, and by the decision's typed fields (replicas, capacities, latency sources, price ages).
"""

from __future__ import annotations

import datetime as dt

from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.sensitivity import Sensitivity
from costmodel.decision.warnings import STALE_PRICE_DAYS, stale_prices
from costmodel.memo.blocks import Block, Bullets, Para, Table, pct, short, times, tokens
from costmodel.memo.text import slo_limits
from costmodel.scenario import Scenario


def context_blocks(decision: Decision, scenario: Scenario) -> list[Block]:
    """Why this decision is being made: the scenario's description, its size and its constraints."""
    blocks: list[Block] = [Para(
        f"The workload: {tokens(decision.requests_per_month)} requests and "
        f"{tokens(decision.tokens_per_month)} tokens a month, {len(scenario.options)} options compared, evaluated "
        f"as of {decision.as_of.isoformat() if decision.as_of else 'the run date'} over "
        f"{decision.horizon_months} months.")]
    if decision.ranking_basis_reason:
        blocks.append(Para(decision.ranking_basis_reason, style="small"))
    if scenario.constraints:  # none given: the section says what the ranking uses, no placeholder
        blocks.append(Para("Constraints the choice must respect:", style="small"))
        blocks.append(Bullets(tuple(scenario.constraints)))
    else:
        blocks.append(Para("The options are ranked on cost, the latency SLO"
                           + (" and the quality floor." if scenario.quality is not None else "."), style="small"))
    return blocks


def goals_blocks(scenario: Scenario, decision: Decision | None = None) -> list[Block]:
    """The scenario's goals and non-goals; the SLO and lowest cost (on the decision's ranking basis) when none
    are given."""
    lowest = ("Lowest cost over the horizon with commitments" if decision is not None
              and decision.ranking_basis == "usd_horizon_total_with_commitments" else "Lowest $/month")
    goals = tuple(scenario.goals) or (
        f"Meet the latency SLO ({slo_limits(scenario)}) at the stated volume.",
        f"{lowest} among the options that meet it.")
    blocks: list[Block] = [Para("Goals:", style="small"), Bullets(goals)]
    if scenario.non_goals:  # left out when none are given
        blocks += [Para("Non-goals:", style="small"), Bullets(tuple(scenario.non_goals))]
    return blocks


def _n_plus_one(option: OptionResult, decision: Decision) -> str | None:
    """What is left of the peak hour's demand when one replica fails."""
    if option.replicas <= 0 or not option.capacity_requests_per_second or decision.peak_requests_per_second <= 0:
        return None
    left = (option.replicas - 1) * option.capacity_requests_per_second / decision.peak_requests_per_second
    if option.kind == "hybrid":
        which = "its one base replica" if option.replicas == 1 else f"one of {option.replicas} base replicas"
        return (f"{short(option.name)}: {which} down sends its share to the API "
                "(failover through the hybrid), at the API's per-request price.")
    if left >= 1:
        verdict = "still covers the peak (N+1)"
    elif option.spare_replicas:  # the policy asked for spares the fleet could not add (a replica ceiling)
        verdict = "does not cover the peak: add a spare replica for N+1"
    else:  # the stated policy (batch default, or set): no spare, work waits out the replica's restart
        verdict = ("does not cover the peak; its fleet policy keeps no spare replica (spare_replicas 0), so work "
                   "queues until the replica is back (spare_replicas: 1 buys N+1)")
    count = f"{option.replicas} replica" if option.replicas == 1 else f"{option.replicas} replicas"
    return (f"{short(option.name)}: {count} for the peak hour; with one down the rest serve "
            f"{pct(left)} of peak demand, which {verdict}.")


def reliability_blocks(decision: Decision) -> list[Block]:
    """N+1 per self-hosted option, failover through hybrids, provider SLAs and rate limits for APIs."""
    items = [line for o in decision.usable_options if o.kind != "api" and (line := _n_plus_one(o, decision))]
    for option in decision.usable_options:
        if option.kind == "api":
            items.append(f"{short(option.name)}: the provider's uptime SLA is not in the price sheet; read its terms "
                         "before relying on it" + (", and its rate limits throttle the peak minute" if option.throttled
                                                   else "") + ".")
    return [Bullets(tuple(items) or ("No option to assess.",))]


def open_questions(decision: Decision, sensitivity: Sensitivity) -> Bullets:
    """What is still unverified: assumed latencies, uncalibrated efficiencies, stale prices, a near flip."""
    items: list[str] = []
    unverified = [short(o.name) for o in decision.usable_options if o.slo_status == "unverified"]
    if unverified:
        items.append("Latency not measured for " + ", ".join(unverified) + ": run `costmodel probe-endpoint` "
                     "against them before sign-off.")
    if decision.calibration_source is None and any(o.kind != "api" for o in decision.usable_options):
        items.append("Self-host capacities use datasheet efficiencies: probe the target GPU and calibrate.")
    stale = [what for what, _, _ in stale_prices(decision.usable_options)]  # compare's warnings list them in full
    if stale:
        items.append(f"Prices older than {STALE_PRICE_DAYS} days: " + ", ".join(stale) + ".")
    flip = sensitivity.flip_above or sensitivity.flip_below
    if flip is not None:
        items.append(f"Is {times(flip.volume_scale)} today's volume ({tokens(flip.tokens_per_month)} tokens/month) "
                     "within the forecast? There the recommendation changes.")
    return Bullets(tuple(items))  # empty: the memo leaves the section out


def signoff_table(scenario: Scenario, *, date: dt.date) -> Table:
    """Decision owner and reviewers, with blank cells to fill in."""
    owner = scenario.owner.strip()  # blank when not named: a cell to fill in, like the reviewers'

    rows = (("Decision owner", owner, "", ""), ("Reviewer", "", "", ""), ("Reviewer", "", "", ""))
    return Table(header=("Role", "Name", "Approve / reject", "Date"), rows=rows, widths=(0.2, 0.4, 0.22, 0.18),
                 align=("l", "l", "l", "l"), font_size=8.5,
                 caption=f"Memo dated {date.isoformat()}; re-run `costmodel memo` after any change to the scenario.")
