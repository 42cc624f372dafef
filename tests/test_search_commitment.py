"""The search ranks on the decision's basis: a reserved term past the horizon counts its committed tail
(decision/commitment.py), so a 36-month row loses to on-demand at a 12-month horizon when on-demand x 12 < reserved
x 36, the pruning stays exact, and the ranked figure is the decision's horizon total with commitments / H."""

from __future__ import annotations

import pytest

from costmodel.decision.commitment import commitment_factor, held_fleet_usd_per_month
from costmodel.decision.rank import decide
from costmodel.memo.blocks import Para, money
from costmodel.memo.configurations import search_blocks
from costmodel.pricing import PriceSheet, load_gpu_prices
from costmodel.scenario import parse_scenario
from costmodel.search import search, with_configuration
from costmodel.units import HOURS_PER_MONTH

ON_DEMAND_USD = 0.78  # runpod/l4/on-demand (pricing_data/gpu_prices.csv)
RESERVED_USD = 0.40  # a made-up 3-year L4 row: cheaper by the hour, dearer with its term (0.40 x 36 > 0.78 x 12)
WORKLOAD = {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
            "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0}


def _sheet(*, commitment: str) -> PriceSheet:  # type: ignore[type-arg]
    sheet = load_gpu_prices()
    on_demand = sheet.get("runpod/l4/on-demand")
    reserved = on_demand.model_copy(update={"id": "test/l4/reserved", "offering": "reserved",
                                            "commitment": commitment, "usd_per_gpu_hour": RESERVED_USD})
    return PriceSheet(kind="gpu", where=sheet.where, rows=(on_demand, reserved))


def _scenario(**top: object):  # type: ignore[no-untyped-def]
    host = {"kind": "self-host", "name": "own", "model": "qwen2.5-0.5b", "hardware": "l4", "gpus_per_replica": 1,
            "offering": "runpod/l4/on-demand"}
    return parse_scenario({"name": "commit", "as_of": "2026-12-01", "workload": WORKLOAD,
                           "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05}, "options": [host],
                           "search": {"engines": ["generic"]}, **top})


def test_the_factor_and_the_held_fleet_figure() -> None:
    assert commitment_factor(term_months=36, horizon_months=12) == 3.0
    assert commitment_factor(term_months=12, horizon_months=12) == 1.0
    assert commitment_factor(term_months=None, horizon_months=12) == 1.0
    assert commitment_factor(term_months=36, horizon_months=12, scaling="autoscale") == 1.0  # never held
    # 12 months at $1,000 (of it $800 committed GPUs) + 24 months x $800 owed = $31,200 over 12 months.
    assert held_fleet_usd_per_month(usd_per_month=1000.0, committed_usd_per_month=800.0, term_months=36,
                                    horizon_months=12) == pytest.approx(31_200 / 12)


def test_a_3_year_row_loses_to_on_demand_at_a_12_month_horizon_and_pruning_stays_exact() -> None:
    scenario, sheet = _scenario(), _sheet(commitment="3 years")
    found = search(scenario, top_k=3, gpu_sheet=sheet)
    brute = search(scenario, top_k=3, gpu_sheet=sheet, prune=False)
    assert found.best == brute.best and found.candidates_simulated <= brute.candidates_simulated
    top = found.best[0]
    assert top.offering == "runpod/l4/on-demand" and top.ranked_usd_per_month == top.usd_per_month
    assert found.ranking_basis == "usd_horizon_total_with_commitments"
    reserved = [r for r in brute.best if r.offering == "test/l4/reserved"] or [
        r for r in search(scenario, top_k=50, gpu_sheet=sheet, prune=False).best if r.offering == "test/l4/reserved"]
    row = reserved[0]
    assert row.usd_per_month < top.usd_per_month < row.ranked_usd_per_month  # month 0 would have picked it
    owed = 2 * row.gpus * RESERVED_USD * HOURS_PER_MONTH  # (36 / 12 - 1) x its GPUs' month (ops none)
    assert row.ranked_usd_per_month == pytest.approx(row.usd_per_month + owed)
    assert row.contract()["ranking_usd_per_month"] == row.ranked_usd_per_month
    assert row.contract()["commitment_term_months"] == 36
    # The ranked figure is the decision's horizon total with commitments over the horizon (no growth: held).
    decided = decide(with_configuration(scenario, row, name="res"), gpu_sheet=sheet)
    option = next(o for o in decided.options if o.name == "res")
    assert option.usd_horizon_total_with_commitments == pytest.approx(12 * row.ranked_usd_per_month)
    # The memo's search section says what the month-0 favourite ranks at.
    cheapest = found.cheapest_committing
    assert cheapest is not None and cheapest.offering == "test/l4/reserved"
    best = next(b for b in search_blocks(found, top_k=3) if isinstance(b, Para) and b.lead == "Best found.")
    assert f"36-month term, so it ranks at {money(cheapest.ranked_usd_per_month)}/month" in best.text


def test_a_term_within_the_horizon_ranks_by_month_0() -> None:
    found = search(_scenario(), top_k=3, gpu_sheet=_sheet(commitment="1 year"))
    assert found.ranking_basis == "usd_per_month" and found.best[0].offering == "test/l4/reserved"
    assert all(r.ranked_usd_per_month == r.usd_per_month and r.commitment_term_months is None for r in found.best)
    assert found.cheapest_committing is None
