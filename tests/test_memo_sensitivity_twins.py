"""The recommendation's equivalents (the same fleet, cost and verdict under another name, as searched twins that
differ only in a setting priced the same) are no alternative: the sensitivity, the flip volume, the fallback and
the bill alert compare with the next option that differs, so the flip agrees with the break-even; and under a
ranking on the horizon total with commitments the sweep prices that total as `decide` does.

Scenario figures: cerebras/llama-3.1-8b at $0.10 per million prompt and output tokens (pricing_data/api_prices.csv);
lambda/h100-sxm/on-demand-1x at $4.29/GPU-hour (pricing_data/gpu_prices.csv). Capacities are simulated once and shared.
"""

from __future__ import annotations

import datetime as dt

import pytest

from costmodel.decision.capacity import CapacityCache
from costmodel.decision.equivalents import equivalents
from costmodel.decision.rank import decide
from costmodel.decision.sensitivity import sensitivity
from costmodel.decision.volume import cost_model
from costmodel.decision.volume_horizon import ranked_usd
from costmodel.memo.operate import monitoring_blocks, rollback_blocks
from costmodel.memo.revisit import revisit_trigger
from costmodel.memo.text import equivalents_blocks
from costmodel.scenario import parse_scenario

TODAY = dt.date(2026, 12, 1)
SELF_HOST = {"kind": "self-host", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "offering": "lambda/h100-sxm/on-demand-1x"}


def _scenario(options, *, requests_per_day=12_000_000):
    return parse_scenario({
        "name": "twins", "fleet": {"min_replicas": 1, "spare_replicas": 0},
        "workload": {"requests_per_day": requests_per_day, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 1.5},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": [{"kind": "api", "name": "api", "price_id": "cerebras/llama-3.1-8b"}, *options],
    })


def test_a_twin_is_named_and_skipped_so_the_flip_is_the_break_even():
    scenario = _scenario([{**SELF_HOST, "name": "own"}, {**SELF_HOST, "name": "twin"}])
    cache = CapacityCache()
    decision = decide(scenario, today=TODAY, capacity_cache=cache)
    own, twin, api = decision.option("own"), decision.option("twin"), decision.option("api")
    # The same option twice: the same bill and verdict, so the tie-break (scenario order) picks "own".
    assert decision.recommendation == "own" and own.usd_per_month == twin.usd_per_month < api.usd_per_month
    assert own.meets_slo and own.break_even_against == "api" and own.break_even_tokens_per_month is not None
    assert equivalents(decision.usable_options, own) == ("twin",)
    sens = sensitivity(scenario, decision, cost_model(decision, scenario), today=TODAY, capacity_cache=cache)
    assert sens.equivalents == ("twin",)
    # Against the API, not the $0-apart twin: the advantage is the API's bill minus the fleet's.
    assert sens.base.alternative == "api"
    assert sens.base.usd_per_month == pytest.approx(api.usd_per_month - own.usd_per_month)
    # The flip below today is where the API becomes cheaper: the break-even (one crossing, decision/crossing.py).
    assert sens.flip_below is not None and sens.flip_below.new_choice == "api"
    assert sens.flip_below.tokens_per_month == pytest.approx(own.break_even_tokens_per_month, rel=1e-6)
    trigger = revisit_trigger(decision, scenario, sens)
    assert "no volume" not in trigger and "where api becomes the better choice" in trigger
    fallback = rollback_blocks(decision)[0].items[0]  # type: ignore[attr-defined]
    assert fallback.startswith("Fallback: api (api)")
    table = monitoring_blocks(decision, scenario, sens)[0]
    bill = next(row for row in table.rows if row[0] == "Monthly bill")  # type: ignore[attr-defined]
    assert "(api)" in bill[2] and "twin" not in bill[2]
    tie = equivalents_blocks(decision, sens)
    assert len(tie) == 1 and tie[0].text.startswith("twin costs the same as own")  # type: ignore[attr-defined]


def test_options_that_differ_in_cost_are_not_equivalents():
    # A hundredth of the volume: the API is cheaper; the self-host options are each other's twins, not the API's.
    scenario = _scenario([{**SELF_HOST, "name": "own"}, {**SELF_HOST, "name": "twin"}], requests_per_day=120_000)
    decision = decide(scenario, today=TODAY, capacity_method="roofline")
    assert decision.recommendation == "api"
    assert equivalents(decision.usable_options, decision.option("api")) == ()
    assert equivalents(decision.usable_options, decision.option("own")) == ("twin",)


def test_the_sweep_prices_the_horizon_total_with_commitments_as_decide_does():
    # A 36-month reserved row (semianalysis/h100-sxm/reserved, $1.30/GPU-h) in the default 12-month horizon:
    # ranked on the total with commitments, so the sweep's ranked cost at today's inputs is each option's.
    reserved = {"kind": "self-host", "name": "reserved", "model": "llama-3.1-8b", "hardware": "h100-sxm",
                "offering": "semianalysis/h100-sxm/reserved"}
    scenario = _scenario([reserved, {**SELF_HOST, "name": "own"}], requests_per_day=300_000)
    decision = decide(scenario, today=TODAY, capacity_method="roofline")
    assert decision.ranking_basis == "usd_horizon_total_with_commitments"
    model = cost_model(decision, scenario)
    for option in decision.usable_options:
        assert ranked_usd(model, option.name) == pytest.approx(option.ranking_usd, rel=1e-9)
    held = decision.option("reserved")
    assert held.usd_committed_after_horizon == pytest.approx(24 * held.gpus_billed * 1.30 * 730.5)
