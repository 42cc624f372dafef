"""The memo's operating sections: Drawbacks (what the recommendation gives up), Rollback (how to go back, what
it costs) and Monitoring (which metrics, which alert thresholds). Every threshold is a figure the decision
already holds: the SLO's limits, the fleet's planned headroom and replica floor, the month-0 bill, the
runner-up's bill and the volume where the recommendation flips. Pure functions of the decision and scenario.
"""

from __future__ import annotations

import math

from costmodel.decision.equivalents import equivalents
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.sensitivity import Sensitivity
from costmodel.memo.blocks import Block, Bullets, Table, latency, money, pct, short, tokens
from costmodel.scenario import Scenario


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _runner_up(decision: Decision, chosen: OptionResult) -> OptionResult | None:
    """The next option that meets the SLO and is materially different: an equivalent (decision/equivalents.py, the
    same cost and verdict) is no fallback and its bill no alert threshold."""
    twins = equivalents(decision.usable_options, chosen)
    return next((o for o in decision.usable_options if o.name != chosen.name and o.meets_slo and o.name not in twins),
                None)


def _self_host_drawbacks(chosen: OptionResult) -> list[str]:
    items = []
    if chosen.utilization is not None:
        items.append(f"Paid whether busy or idle: {_plural(chosen.replicas, 'replica')} at {pct(chosen.utilization)} "
                     "mean utilization; if the volume falls, the GPU bill does not fall with it.")
    ops = chosen.breakdown.ops_usd_per_month
    items.append("You run it: upgrades, on-call and capacity planning are yours"
                 + (f" ({money(ops)}/month of operations is in its cost)." if ops > 0 else
                    "; no operations cost is in its figure (set ops_usd_per_month)."))
    evidence = {"measured": "measured on your deployment", "published": "published figures",
                "simulated": "the simulator (not yet measured)", "none": "no evidence"}
    items.append(f"Its capacity and latency rest on {evidence.get(chosen.latency_source, chosen.latency_source)}.")
    if chosen.commitment_term_months and chosen.usd_committed_after_horizon:
        items.append(f"A {chosen.commitment_term_months}-month reserved term: {money(chosen.usd_committed_after_horizon)} "
                     "stays owed after the horizon whatever the traffic does.")
    return items


def _api_drawbacks(chosen: OptionResult) -> list[str]:
    items = ["Cost grows in step with volume (per token); there is no fleet to amortize."]
    if chosen.retires_on is not None:
        items.append(f"The provider retires the model on {chosen.retires_on.isoformat()}: plan the migration.")
    items.append("Latency, availability and rate limits are the provider's" +
                 (", and its rate limits already throttle the peak minute." if chosen.throttled else "."))
    items.append("Prompts and outputs leave your network: check them against the constraints above.")
    return items


def drawbacks_blocks(decision: Decision, sensitivity: Sensitivity) -> list[Block]:
    """What choosing the recommendation gives up, from its kind and typed fields."""
    chosen = decision.chosen()
    items = _api_drawbacks(chosen) if chosen.kind == "api" else _self_host_drawbacks(chosen)
    if chosen.kind == "hybrid":
        items.append("Two paths to run and watch: the self-hosted base and the API overflow.")
    flip = sensitivity.flip_below or sensitivity.flip_above
    if flip is not None and flip.new_choice is not None:
        items.append(f"Past {tokens(flip.tokens_per_month)} tokens/month ({flip.direction} today's volume) "
                     f"{short(flip.new_choice)} is cheaper.")
    return [Bullets(tuple(items))]


def rollback_blocks(decision: Decision) -> list[Block]:
    """How to undo the choice and what a month on the fallback costs."""
    chosen = decision.chosen()
    runner = _runner_up(decision, chosen)
    items: list[str] = []
    if runner is None:
        items.append("No other option meets the SLO, so there is no ready fallback: keep the current setup running "
                     "until the pilot's pass criteria hold.")
    else:
        gap = runner.usd_per_month - chosen.usd_per_month
        owed = runner.usd_committed_after_horizon or 0.0
        signs = (f"; it signs a {runner.commitment_term_months}-month reserved term, {money(owed)} owed after the "
                 f"{decision.horizon_months}-month horizon, so fall back to it on on-demand capacity"
                 if owed > 0 and runner.commitment_term_months else "")
        items.append(f"Fallback: {short(runner.name)} ({runner.kind}), {money(runner.usd_per_month)}/month "
                     f"({'+' if gap >= 0 else '-'}{money(abs(gap))} against the recommendation{signs}). Keep its "
                     "integration live behind the same client, so rolling back is a routing change, not a redeploy.")
    if chosen.kind != "api":
        items.append("Roll back when a pass criterion fails in the pilot or the alerts below fire for a sustained "
                     "period: shift the traffic share back, then scale the self-hosted fleet down.")
        if chosen.commitment_term_months:
            items.append(f"Reserved capacity is not refunded: its {chosen.commitment_term_months}-month term is "
                         "paid after a rollback; pilot on on-demand capacity before committing.")
    else:
        items.append("An API has no commitment: rolling back costs the switch itself, nothing owed afterwards.")
    return [Bullets(tuple(items))]


def _latency_rows(scenario: Scenario) -> list[tuple[str, str, str]]:
    return [(f"{limit.metric.upper()} p{limit.percentile} (per 5-minute window, all requests)",
             f"above {latency(limit.limit_seconds)}", "the SLO limit; the decision assumes it holds at the peak hour")
            for limit in scenario.slo.limits()]


def monitoring_blocks(decision: Decision, scenario: Scenario, sensitivity: Sensitivity) -> list[Block]:
    """The metrics to watch after rollout and when each should alert (thresholds from the decision)."""
    chosen = decision.chosen()
    rows = _latency_rows(scenario)
    if chosen.kind != "api" and chosen.target_peak_utilization is not None:
        rows.append(("Peak-hour utilization of the self-hosted replicas", f"above {pct(chosen.target_peak_utilization)}",
                     "the planned headroom (target_peak_utilization) is used up: add a replica"))
    if chosen.kind != "api" and chosen.min_replicas:  # 0: no floor (a hybrid's API takes a replica down)
        spare = f" (N+{chosen.spare_replicas})" if chosen.spare_replicas else ""
        rows.append(("Healthy replicas", f"fewer than {chosen.min_replicas}",
                     f"the replica floor{spare} the fleet was sized with"))
    if chosen.kind != "self-host":
        rows.append(("API rate-limit (HTTP 429) responses", "any sustained", "throttling drops or delays requests"))
    runner = _runner_up(decision, chosen)
    # The runner-up's bill is a threshold only above month 0's: a cheaper runner-up (ranked behind on the horizon
    # total with its commitments) says nothing about when this bill is too high.
    if runner is not None and math.isfinite(runner.usd_per_month) and runner.usd_per_month > chosen.usd_per_month:
        rows.append(("Monthly bill", f"above {money(runner.usd_per_month)}",
                     f"past the runner-up's cost ({short(runner.name)}); month 0 is {money(chosen.usd_per_month)}"))
    flip = sensitivity.flip_above or sensitivity.flip_below
    if flip is not None:
        rows.append(("Tokens per month", f"{'above' if flip.direction == 'above' else 'below'} "
                     f"{tokens(flip.tokens_per_month)}", "the volume where the recommendation changes: re-run"))
    return [Table(header=("Metric", "Alert when", "Why this threshold"), rows=tuple(rows), widths=(0.36, 0.2, 0.44),
                  align=("l", "l", "l"), font_size=7.8,
                  caption="Thresholds are the scenario's SLO limits and the decision's own figures; tighten them "
                          "to warn before a limit is reached.")]
