"""The memo's words: the decision paragraph and its two driving numbers, workload and SLO, and the
sensitivity section. Pure functions of the decision, its scenario and the sweeps. The options table and its
notes are `costmodel.memo.options_table`, re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

import math

from costmodel.decision.breakeven import recommendation_break_even
from costmodel.decision.instances import billed_note
from costmodel.decision.recommend import verify_first_sentence
from costmodel.decision.results import Decision, OptionResult, exclusion_label
from costmodel.decision.sensitivity import Advantage, FlipVolume, Sensitivity, overtakes_at
from costmodel.decision.volume import CostModel, hybrid_plan
from costmodel.memo.blocks import (
    Block,
    Bullets,
    Para,
    Table,
    cut_names,
    latency,
    money,
    pct,
    per_mtok,
    short,
    times,
    tokens,
)
from costmodel.memo.commitments import ranking_basis_blocks
from costmodel.memo.options_table import option_notes, options_table, rank_cells
from costmodel.memo.revisit import change_blocks
from costmodel.memo.sensitivity_table import sensitivity_table
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption
from costmodel.units import counted, fmt_share

__all__ = [
    "NO_SPREAD_USD_PER_MONTH", "decision_blocks", "describe_option", "flip_sentence", "option_notes", "options_table",
    "rank_cells", "sensitivity_blocks", "sensitivity_table", "slo_limits", "slo_phrase", "workload_table",
]

NO_SPREAD_USD_PER_MONTH = 1.0  # a tornado whose every bar moves the advantage by less than this says nothing


def describe_option(result: OptionResult, scenario: Scenario) -> str:
    """What choosing this option means, in words."""
    option = scenario.option(result.name)
    if isinstance(option, ApiOption):
        batch = " through its batch API" if result.priced_via_batch_api else ""
        return f"Call the {option.price_id} API{batch}"
    if isinstance(option, SelfHostOption):
        return (f"Self-host {option.model} ({option.weight_dtype} weights, {option.kv_dtype} KV) on "
                f"{counted(result.replicas, 'replica')} of {option.gpus_per_replica} x {option.hardware}, "
                f"{counted(result.gpus, 'GPU')}{billed_note(gpus=result.gpus, gpus_billed=result.gpus_billed)} in all")
    assert isinstance(option, HybridOption)
    if result.replicas == 0:
        return (f"Run the hybrid of {short(option.self_host)} and {short(option.api)} with 0 base replicas, i.e. all "
                f"traffic to {short(option.api)}")
    return (f"Keep {counted(result.replicas, 'replica')} of {short(option.self_host)} for the base load and send the "
            f"overflow to {short(option.api)}")


def slo_limits(scenario: Scenario) -> str:
    """Every limit the SLO sets: 'TTFT p90 <= 1.50 s, TPOT p90 <= 60 ms, TTFT p99 <= 4.00 s, E2E p90 <= ...'."""
    return ", ".join(f"{limit.metric.upper()} p{limit.percentile} \u2264 {latency(limit.limit_seconds)}"
                     for limit in scenario.slo.limits())


def slo_phrase(result: OptionResult, scenario: Scenario) -> str:
    """'meets the SLO (p90 TTFT ... , p90 TPOT ...)' with the option's figures where known."""
    limits = slo_limits(scenario)
    if result.slo_status == "unverified":
        return (f"has unverified latency against the SLO ({limits}): no figure, or a p90 band across a limit "
                f"({result.latency_source} latency), so it is not counted as meeting it")
    verdict = {"meets": "meets", "likely_meets": "likely meets"}.get(result.slo_status, "misses")
    band = _band_words(result)
    if result.ttft_p90_seconds is None or result.tpot_p90_seconds is None:
        return f"{verdict} the SLO ({limits}): {result.slo_reason}"
    return (f"{verdict} the SLO ({limits}) with p90 TTFT {latency(result.ttft_p90_seconds)} and p90 TPOT "
            f"{latency(result.tpot_p90_seconds)}{band}")


def _band_words(result: OptionResult) -> str:
    """' (simulated; p90 bands 0.10-0.19 s and 32-46 ms)' where the option has a band ('726 ms' for a point)."""
    def one(low: float | None, high: float | None) -> str | None:
        if low is None or high is None:
            return None
        return latency(low) if low == high else f"{latency(low)}-{latency(high)}"

    ttft = one(result.ttft_p90_seconds_low, result.ttft_p90_seconds_high)
    tpot = one(result.tpot_p90_seconds_low, result.tpot_p90_seconds_high)
    if ttft is None or tpot is None or (result.ttft_p90_seconds_low == result.ttft_p90_seconds_high
                                        and result.tpot_p90_seconds_low == result.tpot_p90_seconds_high):
        return f" ({result.latency_source})"
    return f" ({result.latency_source}; p90 bands {ttft} and {tpot})"


def _first_number(decision: Decision, base: Advantage) -> str:
    chosen = decision.chosen()
    if base.alternative is None:
        return f"it is the only option that qualifies, at {money(chosen.usd_per_month)}/month"
    other = decision.option(base.alternative)
    if decision.ranking_basis == "usd_horizon_total_with_commitments":  # the advantage is on the ranked total
        ours, theirs = chosen.ranking_usd, other.ranking_usd
        return (f"{money(ours)} over the {decision.horizon_months}-month horizon with commitments "
                f"({money(chosen.usd_per_month)}/month) against {money(theirs)} for the best alternative, "
                f"{short(other.name)} ({money(other.usd_per_month)}/month; {money(base.usd_per_month)} less over "
                "the horizon)")
    saving = base.usd_per_month / other.usd_per_month if other.usd_per_month > 0 else math.nan
    # Under half a percent rounds to "0% less": say it is a near tie, which is what a reviewer needs to know.
    share = "under 0.5%: a near tie" if saving < 0.005 else fmt_share(saving)
    return (f"{money(chosen.usd_per_month)}/month against {money(other.usd_per_month)}/month for the best "
            f"alternative, {short(other.name)} ({money(base.usd_per_month)}/month less, {share})")


def why_no_self_host(decision: Decision) -> str:
    """'a, b: below the quality floor; c: misses the SLO': each self-hosted option that cannot compete, by its
    typed exclusion (`excluded_kind`), else by its SLO verdict (`slo_status`)."""
    grouped: dict[str, list[str]] = {}
    for r in decision.options:
        if r.kind == "self-host" and not (r.excluded_kind is None and r.meets_slo):
            why = exclusion_label(r.excluded_kind) or {"unverified": "latency unverified"}.get(r.slo_status,
                                                                                          "misses the SLO")
            grouped.setdefault(why, []).append(short(r.name))
    return "; ".join(f"{', '.join(names)}: {why}" for why, names in grouped.items())


def _second_number(decision: Decision, model: CostModel) -> tuple[str, float | None]:
    """The second driving number, and the volume multiple it names (API: where self-hosting takes over)."""
    chosen = decision.chosen()
    if chosen.kind == "self-host":
        if chosen.break_even_against is None:
            return f"its replicas run at {pct(chosen.utilization)} utilization (no API to break even against)", None
        if chosen.break_even_tokens_per_month is None:
            return (f"its replicas run at {pct(chosen.utilization)} utilization, and it stays on the same side of "
                    f"{short(chosen.break_even_against)} from 1/100x to 100x today's volume"), None
        return (f"its replicas run at {pct(chosen.utilization)} utilization, and it breaks even with "
                f"{short(chosen.break_even_against)} at {tokens(chosen.break_even_tokens_per_month)} tokens/month"), None
    if chosen.kind == "hybrid":
        plan = hybrid_plan(model, chosen.name)
        return (f"{counted(plan.base_replicas, 'base replica')} at {pct(plan.utilization)} utilization serve "
                f"{pct(1 - plan.overflow_fraction)} of requests; {pct(plan.overflow_fraction)} overflow to the API"), None
    rivals = [r.name for r in decision.usable_options if r.kind == "self-host" and r.meets_slo]
    crossings = [(scale, name) for name in rivals
                 if (scale := overtakes_at(model, name, against=chosen.name)) is not None]
    if crossings:
        scale, name = min(crossings)
        return (f"self-hosting first costs less than it at {tokens(scale * decision.tokens_per_month)} tokens/month "
                f"({short(name)}), {times(scale)} today's {tokens(decision.tokens_per_month)}"), scale
    if rivals:
        return "no self-hosted option costs less than it at up to 100x today's volume", None
    if any(r.kind == "self-host" for r in decision.options):
        return f"no self-hosted option competes with it ({why_no_self_host(decision)})", None
    return (f"its blended price of {per_mtok(chosen.usd_per_mtok)} per million tokens (no self-host option "
            "compared)"), None


def flip_sentence(decision: Decision, sensitivity: Sensitivity) -> str:
    """Where, in volume, the recommendation stops being the choice (within 1/100x .. 100x)."""
    def one(flip: FlipVolume) -> str:
        who = short(flip.new_choice) if flip.new_choice else "another option"
        return (f"{'below' if flip.direction == 'below' else 'above'} {tokens(flip.tokens_per_month)} tokens/month "
                f"({times(flip.volume_scale)} today) {who} becomes the better choice")
    flips = [f for f in (sensitivity.flip_below, sensitivity.flip_above) if f is not None]
    base = sensitivity.base
    if base.flips and not base.recommendation_fails and base.usd_per_month == 0 and base.alternative:
        # A tie (searched candidates that differ only in a setting priced the same): the decision's tie-break
        # chose it, so it is the cheapest, but any change of the inputs can reorder the two.
        return (f"The recommendation ties with {short(base.alternative)} at today's inputs (the same $/month), "
                "so the smallest change can reorder them and no flip volume is given.")
    if base.flips:
        return "The recommendation is not the cheapest qualifying option at today's inputs, so no flip volume is given."
    crossing = recommendation_break_even(decision)
    if not flips and crossing is not None:  # never "no flip anywhere" next to a break-even in the range
        return (f"No other option takes over in the flip search from 1/100x to 100x today's volume, but the "
                f"recommendation breaks even with {short(crossing.other)} at {tokens(crossing.tokens_per_month)} "
                f"tokens/month ({times(crossing.volume_scale)} today) on month 0's $/month.")
    if not flips:
        return (f"The decision does not flip anywhere from {tokens(decision.tokens_per_month / 100)} to "
                f"{tokens(decision.tokens_per_month * 100)} tokens/month (1/100x to 100x today's volume).")
    return "The decision flips with volume: " + "; ".join(one(f) for f in flips) + "."


def decision_blocks(decision: Decision, scenario: Scenario, model: CostModel, sensitivity: Sensitivity) -> list[Block]:
    """The one-paragraph decision, its two driving numbers, the flip volume and the computed reasons."""
    chosen = decision.chosen()
    blocks: list[Block] = []
    if decision.cheaper_unverified is not None:
        blocks.append(Para(verify_first_sentence(decision.cheaper_unverified), style="callout"))
    if not decision.recommendation_meets_slo and chosen.slo_status == "unverified" and not chosen.throttled:
        blocks.append(Para(
            f"The scenario accepts unverified latency: {chosen.name} is recommended though its latency is "
            f"{chosen.slo_reason}. Verify it before deciding.", lead="Warning.", style="callout"))
    elif not decision.recommendation_meets_slo:
        blocks.append(Para(
            f"No option meets the SLO without throttling. {short(chosen.name)} is listed first as the cheapest, but "
            f"{chosen.slo_reason}. Relax the SLO, add GPUs per replica or pick faster hardware before deciding.",
            lead="Warning.", style="callout"))
    second, second_scale = _second_number(decision, model)
    flip = sensitivity.flip_above
    # The flip sentence repeats the second number when that is already the volume where self-hosting takes over.
    repeats = (sensitivity.flip_below is None and flip is not None and second_scale is not None
               and abs(flip.volume_scale / second_scale - 1.0) < 1e-6)
    blocks.append(Para(
        f"{describe_option(chosen, scenario)}. At {tokens(decision.tokens_per_month)} tokens/month "
        f"({tokens(decision.requests_per_month)} requests/month, peak {decision.peak_requests_per_second:.1f} "
        f"requests/s) it costs {money(chosen.usd_per_month)}/month ({per_mtok(chosen.usd_per_mtok)} per million "
        f"tokens) and {slo_phrase(chosen, scenario)}. The two numbers that drive the choice: "
        f"{_first_number(decision, sensitivity.base)}; and {second}."
        + ("" if repeats else f" {flip_sentence(decision, sensitivity)}"),
        lead=f"Recommendation: {short(chosen.name)}.", style="callout"))
    premium = decision.recommendation_premium_usd_per_month
    if premium and decision.cheapest_usable is not None:
        cheapest = decision.option(decision.cheapest_usable)
        blocks.append(Para(
            f"{short(chosen.name)} costs {money(premium)}/month more than the cheapest usable option, "
            f"{short(cheapest.name)} ({money(cheapest.usd_per_month)}/month), whose latency is "
            f"{cheapest.slo_status.replace('_', ' ')}: the price of evidence that the SLO holds.", lead="Premium."))
    blocks += ranking_basis_blocks(decision)
    blocks += equivalents_blocks(decision, sensitivity)
    blocks += change_blocks(decision, scenario, sensitivity)
    if decision.reasons:
        blocks.append(Para("As computed by the decision (the same sentences `costmodel compare` prints):", style="small"))
        names = [o.name for o in decision.options]
        # The verify-first sentence already leads the page (above), word for word.
        blocks.append(Bullets(tuple(cut_names(r, names) for r in decision.reasons if not r.startswith("Verify first:"))))
    return blocks


def equivalents_blocks(decision: Decision, sensitivity: Sensitivity) -> list[Block]:
    """The tie named: the recommendation's equivalents (decision/equivalents.py) and that the comparisons skip them."""
    if not sensitivity.equivalents:
        return []
    chosen = decision.chosen()
    names = ", ".join(short(n) for n in sensitivity.equivalents)
    verb = "costs" if len(sensitivity.equivalents) == 1 else "cost"
    return [Para(f"{names} {verb} the same as {short(chosen.name)} ({money(chosen.usd_per_month)}/month) with the same "
                 f"fleet and verdict ({chosen.slo_status.replace('_', ' ')}): a configuration that differs only in a "
                 "setting priced the same, so either can be deployed; the alternative, the sensitivity, the fallback "
                 "and the bill alert are the next option that differs.", lead="Tie.")]


def workload_table(decision: Decision, scenario: Scenario) -> Table:
    """Volume, token lengths, traffic shape and SLO limits the decision was made for."""
    workload = scenario.workload
    peak_to_mean = decision.peak_requests_per_second / decision.mean_requests_per_second
    rows = [
        ("Volume", f"{tokens(decision.requests_per_month)} requests/month, {tokens(decision.tokens_per_month)} "
                   "tokens/month (prompt + output)"),
        ("Tokens per request", f"prompt {decision.mean_prompt_tokens:,.0f} (mean; {workload.cached_prompt_fraction:.0%} "
                               f"cached), output {decision.mean_output_tokens:,.0f} (mean)"),
        ("Request rate", f"mean {decision.mean_requests_per_second:.2f}/s, peak hour "
                         f"{decision.peak_requests_per_second:.2f}/s ({times(peak_to_mean)} the mean)"),
        ("Growth", f"{workload.growth_per_month:.0%} per month" + ("; batch processing allowed"
                                                                 if workload.batch_allowed else "")),
    ]
    rows.append(("SLO", slo_limits(scenario)))
    return Table(header=("Input", "Value"), rows=tuple(rows), widths=(0.22, 0.78), align=("l", "l"), font_size=8.5)


def sensitivity_blocks(decision: Decision, scenario: Scenario, sensitivity: Sensitivity) -> list[Block]:
    """What the tornado says in words, the flip volume, and what growth does to it."""
    movers = [b for b in sensitivity.bars if b.low.flips or b.high.flips]
    if movers:
        moved = "; ".join(f"{b.label} at {'-' if b.low.flips else '+'}{sensitivity.fraction:.0%}" for b in movers)
        robust = f"A {sensitivity.fraction:.0%} change flips the decision for: {moved}."
    elif sensitivity.bars and sensitivity.bars[0].swing_usd_per_month >= NO_SPREAD_USD_PER_MONTH:
        robust = (f"No single input moved by {sensitivity.fraction:.0%} flips the decision; the largest swing is "
                  f"{sensitivity.bars[0].label.lower()} ({money(sensitivity.bars[0].swing_usd_per_month)}"
                  + ("/month)." if sensitivity.ranking_basis == "usd_per_month" else " over the horizon)."))
    else:  # naming a $0 bar (e.g. GPU price with no self-hosted option) as the largest swing says nothing
        robust = (f"No single input moved by {sensitivity.fraction:.0%} flips the decision or moves its $/month "
                  "advantage by a dollar a month.")
    text = f"{robust} {flip_sentence(decision, sensitivity)}"
    growth = scenario.workload.growth_per_month
    flip = sensitivity.flip_above
    if growth > 0 and flip is not None and flip.volume_scale > 1:
        months = math.log(flip.volume_scale) / math.log1p(growth)
        text += (f" At the scenario's {growth:.0%}/month growth the volume reaches that point in about "
                 f"{months:.0f} months.")
    return [Para(text)]
