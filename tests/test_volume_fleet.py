"""The volume sweep (decision/volume.py) re-runs the hourly fleet of autoscaled and mixed options
(their plan, decision/plan.py `plan_cost`) instead of scaling their peak replica count: arithmetic written out on a two-level
day, the break-even volume against an API, and decide() at other volumes and GPU prices.

Formulas: decision/fleet.py (replicas_h = max(m, ceil(demand_h / (t x capacity))), starts = the cyclic rises,
each billed ceil(10 min / 60 min) = 1 h of warm-up) and decision/mixed.py; 30.4375 days and 730.5 hours a month
(costmodel.units). Decided scenarios use the roofline capacity (no simulation).
"""

from __future__ import annotations

import pytest

from costmodel.decision.fleet_policy import FleetPolicy
from costmodel.decision.instances import InstancePacking
from costmodel.decision.plan import OptionPlan
from costmodel.decision.rank import Overrides, decide
from costmodel.decision.sensitivity import overtakes_at
from costmodel.decision.volume import CostModel, OptionCost, Scaling, cost_model, step_volumes, usd_per_month
from costmodel.scenario import parse_scenario
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH, SECONDS_PER_MONTH
from tests.test_fleet import TODAY, nightly
from tests.test_fleet_mixed import mixed_scenario

# The day: 12 hours at 1.5x the mean rate, 12 at 0.5x; mean 10 requests/s; 5 requests/s per replica at t = 1.
PROFILE = (1.5,) * 12 + (0.5,) * 12
MEAN_RPS, CAPACITY_RPS, USD_PER_GPU_HOUR, OPS_USD = 10.0, 5.0, 2.0, 10_000.0
API_USD_PER_MONTH_AT_1X = 10_000.0  # the API's $/month at the month-0 volume; it grows linearly with volume


def _plan(scaling: str) -> OptionPlan:
    """One GPU per replica sold singly at $2/GPU-hour, $10,000/month fixed ops, target 1, floor 1, 10 min warm-up."""
    fleet = FleetPolicy(target_peak_utilization=1.0, min_replicas=1, reason="", scaling=scaling,  # type: ignore[arg-type]
                        max_replicas=1000, warmup_minutes=10.0)
    return OptionPlan(name=scaling, gpus_per_replica=1, usd_per_gpu_hour=USD_PER_GPU_HOUR, host_usd_per_gpu_hour=0.0,
                      packing=InstancePacking(gpus_per_replica=1), fleet=fleet, ops_usd_per_month=OPS_USD,
                      ops_usd_per_gpu_month=0.0)


def _model() -> CostModel:
    self_host = {"kind": "self-host", "meets_slo": True, "capacity_requests_per_second": CAPACITY_RPS,
                 "prefill_time_fraction": 0.5, "ttft_p90_seconds": 0.2, "tpot_p90_seconds": 0.02}
    per_request = API_USD_PER_MONTH_AT_1X / (MEAN_RPS * SECONDS_PER_MONTH)
    api = OptionCost(name="api", kind="api", meets_slo=True, api_usd_per_request_prompt=per_request / 2,
                     api_usd_per_request_output=per_request / 2, prompt_token_share=0.5)
    return CostModel(
        options=(api, OptionCost(name="auto", plan=_plan("autoscale"), **self_host),  # type: ignore[arg-type]
                 OptionCost(name="fixed", plan=_plan("fixed"), **self_host)),  # type: ignore[arg-type]
        recommendation="api", mean_requests_per_second=MEAN_RPS, peak_requests_per_second=MEAN_RPS * 1.5,
        hourly_profile=PROFILE, mean_prompt_tokens=1000.0, mean_output_tokens=200.0, tokens_per_month=1e9)


def test_autoscaled_fleet_follows_the_scaled_day_arithmetic_written_out() -> None:
    model = _model()
    # 1x: busy hours 15 req/s -> 3 replicas, quiet 5 -> 1; 12 x 3 + 12 x 1 = 48 replica-hours + 2 starts (1 -> 3)
    # x 1 h = 50 a day; x $2 x 30.4375 days = $3,043.75 + $10,000 ops. Fixed: 3 replicas all month.
    assert usd_per_month(model, "auto") == pytest.approx(OPS_USD + 50 * 2.0 * DAYS_PER_MONTH)
    assert usd_per_month(model, "auto") == pytest.approx(13_043.75)
    assert usd_per_month(model, "fixed") == pytest.approx(OPS_USD + 3 * 2.0 * HOURS_PER_MONTH)
    # 1.2x: busy 18 req/s -> ceil(3.6) = 4 replicas, quiet 6 -> ceil(1.2) = 2; 12 x 4 + 12 x 2 = 72 + 2 starts
    # = 74 replica-hours a day, while the fixed fleet pays 4 x 24 = 96: autoscale pays 22 fewer a day.
    at = Scaling(volume=1.2)
    assert usd_per_month(model, "auto", at) == pytest.approx(OPS_USD + 74 * 2.0 * DAYS_PER_MONTH)
    assert usd_per_month(model, "fixed", at) == pytest.approx(OPS_USD + 96 * 2.0 * DAYS_PER_MONTH)
    assert usd_per_month(model, "fixed", at) - usd_per_month(model, "auto", at) == pytest.approx(
        22 * 2.0 * DAYS_PER_MONTH)
    # Scaling the 1x peak count instead (4 / 3 x $3,043.75 = $4,058.33 of GPUs) would miss the quiet hours' 2nd replica.
    assert usd_per_month(model, "auto", at) - OPS_USD != pytest.approx(4 / 3 * 50 * 2.0 * DAYS_PER_MONTH)
    # A 20% GPU price cut scales every replica-hour.
    assert usd_per_month(model, "auto", Scaling(volume=1.2, usd_per_gpu_hour=0.8)) == pytest.approx(
        OPS_USD + 74 * 2.0 * 0.8 * DAYS_PER_MONTH)


def test_break_even_volume_of_the_autoscaled_option() -> None:
    model = _model()
    # API: $10,000 x v. Autoscale, per volume range (busy ceil(3v), quiet ceil(v) replicas, starts = the rise):
    #   (1, 4/3]:   4 and 2 -> 48 + 24 + 2 = 74 replica-hours a day -> $10,000 + 148 x 30.4375 = $14,504.75
    #               (the API reaches at most $13,333 there);
    #   (4/3, 5/3]: 5 and 2 -> 60 + 24 + 3 = 87 -> $10,000 + 174 x 30.4375 = $15,296.125, which the API
    #               reaches at v = 1.5296125.
    # (Scaling the 1x peak count would give 5 x $1,014.58 + $10,000 = $15,072.92 there, i.e. v = 1.5072917.)
    expected = (OPS_USD + 174 * DAYS_PER_MONTH) / API_USD_PER_MONTH_AT_1X
    assert expected == pytest.approx(1.5296125)
    found = overtakes_at(model, "auto", against="api")
    assert found == pytest.approx(expected, rel=1e-6)
    # The steps the flip search samples include every hour's replica additions (quiet hours: k x 5 / 5 = k).
    steps = step_volumes(model, up_to=3.0)
    for volume in (4 / 3, 5 / 3, 2.0, 3.0):  # busy hours: a replica per 1/3x; quiet hours: one per 1x
        assert any(s == pytest.approx(volume) for s in steps), volume


AUTOSCALE = {"mode": "autoscale", "min_replicas": 0, "warmup_minutes": 10}
MIXED_WEIGHTS = [1.0] * 18 + [2.5] * 6


@pytest.mark.parametrize("data", [
    nightly(AUTOSCALE),
    nightly({**AUTOSCALE, "interruption_rate_per_hour": 0.1}, offering="nebius/h100-sxm/spot"),
    mixed_scenario({"mode": "mixed", "warmup_minutes": 10}, weights=MIXED_WEIGHTS),
    mixed_scenario({"mode": "mixed", "warmup_minutes": 10, "base_replicas": 1}, weights=MIXED_WEIGHTS),
    mixed_scenario({"mode": "mixed", "warmup_minutes": 10, "spot_share": 0.5, "interruption_rate_per_hour": 0.1},
                   weights=MIXED_WEIGHTS),
], ids=["autoscale", "autoscale-spot", "mixed", "mixed-pinned-base", "mixed-spot"])
@pytest.mark.parametrize(("override", "scaling"), [
    (Overrides(volume=0.3), Scaling(volume=0.3)),
    (Overrides(volume=1.7), Scaling(volume=1.7)),
    (Overrides(volume=6.0), Scaling(volume=6.0)),
    (Overrides(gpu_price=0.8), Scaling(usd_per_gpu_hour=0.8)),
], ids=["v0.3", "v1.7", "v6", "gpu0.8"])
def test_sweep_matches_decide_for_hourly_fleets(data, override, scaling) -> None:  # type: ignore[no-untyped-def]
    scenario = parse_scenario(data)
    decision = decide(scenario, today=TODAY, capacity_method="roofline")
    model = cost_model(decision, scenario)
    assert decision.option("h100").scaling in ("autoscale", "mixed")
    for option in decision.usable_options:
        assert usd_per_month(model, option.name) == pytest.approx(option.usd_per_month, rel=1e-9), option.name
    again = decide(scenario, today=TODAY, capacity_method="roofline", overrides=override)
    for option in again.usable_options:
        assert usd_per_month(model, option.name, scaling) == pytest.approx(option.usd_per_month, rel=1e-9), option.name
