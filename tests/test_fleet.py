"""Fleet policy: headroom (target_peak_utilization) and redundancy (min_replicas), resolved and priced.

Capacities come from the roofline closed form (decide(..., capacity_method="roofline")), so these tests
need no simulation; the arithmetic of replicas_h = max(m, ceil(λ_h / (t x μ))) is written out here.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest
import yaml

from costmodel.cli import main
from costmodel.decision.economics import break_even_tokens_per_month, size_self_host
from costmodel.decision.fleet import autoscaled_day, fleet_policy, replicas_by_hour, replicas_for_demand
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.scenario import SelfHostOption, parse_scenario
from costmodel.units import HOURS_PER_MONTH

TODAY = dt.date(2026, 12, 1)


def scenario_dict(*, fleet=None, option_fields=None, **workload_changes):
    data = {
        "name": "fleet",
        "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0,
                     **workload_changes},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": [
            {"kind": "api", "name": "api", "price_id": "cerebras/llama-3.1-8b"},
            {"kind": "self-host", "name": "h100", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "usd_per_gpu_hour": 2.0, **(option_fields or {})},
            {"kind": "hybrid", "name": "hybrid", "self_host": "h100", "api": "api"},
        ],
    }
    if fleet is not None:
        data["fleet"] = fleet
    return data


def decided(data):
    return decide(parse_scenario(data), today=TODAY, capacity_method="roofline")


def test_defaults_interactive_is_n_plus_one_at_80_percent():
    scenario = parse_scenario(scenario_dict())
    option = scenario.option("h100")
    assert isinstance(option, SelfHostOption)
    policy = fleet_policy(option, scenario)
    assert (policy.min_replicas, policy.target_peak_utilization) == (2, 0.8)
    assert "N+1" in policy.reason and "interactive" in policy.reason


def test_defaults_batch_is_one_replica_at_full_capacity():
    scenario = parse_scenario(scenario_dict(batch_allowed=True))
    option = scenario.option("h100")
    assert isinstance(option, SelfHostOption)
    policy = fleet_policy(option, scenario)
    assert (policy.min_replicas, policy.target_peak_utilization) == (1, 1.0)


def test_option_fields_win_over_the_scenario_fleet_section():
    scenario = parse_scenario(scenario_dict(fleet={"target_peak_utilization": 0.9, "min_replicas": 3},
                                            option_fields={"min_replicas": 4}))
    option = scenario.option("h100")
    assert isinstance(option, SelfHostOption)
    policy = fleet_policy(option, scenario)
    assert (policy.min_replicas, policy.target_peak_utilization) == (4, 0.9)
    assert "target set in the scenario's fleet section" in policy.reason
    assert "floor set on the option" in policy.reason


def test_n_plus_one_floor_changes_replicas_as_stated():
    # One replica covers the peak (λ_peak = 2 x 100,000 / 86,400 = 2.31 requests/s is well below μ),
    # so the floor and N+1 alone set the fleet: 1 replica at m = 1 with no spare, 2 at the defaults
    # (max(2, ceil(2.31 / (0.8 μ)), ceil(2.31 / μ) + 1) = max(2, 1, 2)).
    single = decided(scenario_dict(fleet={"min_replicas": 1, "spare_replicas": 0})).option("h100")
    default = decided(scenario_dict()).option("h100")
    mu = default.capacity_requests_per_second
    assert mu is not None and 0.8 * mu > 2 * 100_000 / 86_400
    assert single.replicas == 1 and default.replicas == 2
    assert default.usd_per_month == pytest.approx(2 * 1 * 2.0 * HOURS_PER_MONTH)
    assert single.usd_per_month == pytest.approx(1 * 1 * 2.0 * HOURS_PER_MONTH)
    assert default.utilization == pytest.approx(single.utilization / 2)


def test_headroom_changes_replicas_as_stated():
    # Pick the volume so the peak is 1.1 μ: ceil(1.1) = 2 replicas at t = 1, ceil(1.1 / 0.5) = 3 at t = 0.5.
    mu = decided(scenario_dict()).option("h100").capacity_requests_per_second
    assert mu is not None
    requests_per_day = 1.1 * mu / 2.0 * 86_400
    full = decided(scenario_dict(requests_per_day=requests_per_day,
                                 fleet={"min_replicas": 1, "target_peak_utilization": 1.0,
                                        "spare_replicas": 0})).option("h100")
    half = decided(scenario_dict(requests_per_day=requests_per_day,
                                 fleet={"min_replicas": 1, "target_peak_utilization": 0.5,
                                        "spare_replicas": 0})).option("h100")
    assert (full.replicas, half.replicas) == (2, 3)
    assert half.usd_per_month == pytest.approx(1.5 * full.usd_per_month)
    # True N+1 at t = 1: ceil(1.1) + 1 = 3 replicas, so one down still leaves 2 for a peak of 1.1 μ.
    spare = decided(scenario_dict(requests_per_day=requests_per_day,
                                  fleet={"min_replicas": 1, "target_peak_utilization": 1.0})).option("h100")
    assert spare.replicas == 3 and spare.spare_replicas == 1 and "N+1" in (spare.fleet_reason or "")


def test_n_plus_one_per_hour():
    # μ = 10, t = 0.8, one spare: demand 0 needs the floor only; 7 -> max(1, ceil(0.875), ceil(0.7) + 1) = 2;
    # 9.5 -> max(ceil(1.19), ceil(0.95) + 1) = 2; 17 -> max(ceil(2.125), ceil(1.7) + 1) = 3; 20 -> max(3, 2 + 1) = 3.
    assert replicas_by_hour(hourly_requests_per_second=[0.0, 7.0, 9.5, 17.0, 20.0], capacity_requests_per_second=10.0,
                            target_peak_utilization=0.8, min_replicas=1, spare_replicas=1) == (1, 2, 2, 3, 3)


def test_replicas_by_hour_formula():
    # demand 0, 7, 8.1 requests/s; μ = 10, t = 0.8 (8 requests/s per replica), floor 2
    assert replicas_by_hour(hourly_requests_per_second=[0.0, 7.0, 8.1, 17.0], capacity_requests_per_second=10.0,
                            target_peak_utilization=0.8, min_replicas=2) == (2, 2, 2, 3)
    assert replicas_for_demand(demand_requests_per_second=16.0, capacity_requests_per_second=10.0,
                               target_peak_utilization=0.8, min_replicas=1) == 2  # exactly 2 x 8
    with pytest.raises(CostmodelError, match="target_peak_utilization"):
        replicas_for_demand(demand_requests_per_second=1.0, capacity_requests_per_second=1.0,
                            target_peak_utilization=0.0, min_replicas=1)


def test_size_self_host_applies_target_and_floor():
    cost = size_self_host(mean_requests_per_second=5.0, peak_requests_per_second=10.0, capacity_requests_per_second=6.0,
                          tokens_per_request=1000, gpus_per_replica=2, usd_per_gpu_hour=1.0, min_replicas=1,
                          target_peak_utilization=0.8)
    assert cost.replicas == math.ceil(10.0 / (0.8 * 6.0)) == 3
    assert cost.gpus == 6
    assert cost.utilization == pytest.approx(5.0 / (3 * 6.0))


def test_break_even_volume_respects_the_floor():
    # R = $1,000/replica-month, no ops, V = 1e9 tokens/replica, API $2/M: one replica breaks even at 0.5e9
    # tokens; with a floor of 2 the fleet costs $2,000 up to 2e9 tokens, crossing at 1e9.
    args = {"replica_usd_per_month": 1000.0, "ops_usd_per_month": 0.0,
            "tokens_per_month_per_replica_at_peak": 1e9, "api_usd_per_mtok": 2.0}
    assert break_even_tokens_per_month(**args) == pytest.approx(0.5e9)
    assert break_even_tokens_per_month(**args, min_replicas=2) == pytest.approx(1e9)


def test_hybrid_keeps_no_base_or_at_least_the_floor():
    decision = decided(scenario_dict(requests_per_day=2_000_000, fleet={"min_replicas": 3}))
    hybrid = decision.option("hybrid")
    assert decision.option("h100").min_replicas == 3
    assert hybrid.replicas == 0 or hybrid.replicas >= 3
    # The hybrid may keep no base at all: its own floor is 0, the base's floor is named in the reason.
    assert hybrid.min_replicas == 0 and "0 or at least 3 replicas (h100's floor)" in (hybrid.fleet_reason or "")


def test_compare_json_and_table_show_the_policy(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario_dict()), encoding="utf-8")
    assert main(["compare", str(path), "--json", "--date", "2026-12-01"]) == 0
    out = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert out["h100"]["min_replicas"] == 2 and out["hybrid"]["min_replicas"] == 0  # the hybrid may keep no base
    assert out["hybrid"]["replicas"] >= out["hybrid"]["min_replicas"]
    for name in ("h100", "hybrid"):
        assert out[name]["scaling"] == "fixed"
        assert len(out[name]["replicas_by_hour"]) == 24
    assert out["h100"]["target_peak_utilization"] == 0.8 and out["h100"]["spare_replicas"] == 1
    assert "N+1" in out["h100"]["fleet_reason"]
    # A hybrid's base runs at capacity with no spare: its API takes the burst and a replica down.
    assert out["hybrid"]["target_peak_utilization"] == 1.0 and out["hybrid"]["spare_replicas"] == 0
    assert "overflow" in out["hybrid"]["fleet_reason"]
    assert out["h100"]["gpu_hours_per_month"] == pytest.approx(2 * HOURS_PER_MONTH)
    assert out["api"]["min_replicas"] is None
    assert main(["compare", str(path), "--date", "2026-12-01"]) == 0
    table = capsys.readouterr().out
    assert ">=2 @80%" in table and ">=0 @100%" in table and "Fleet policy" in table


@pytest.mark.parametrize(("where", "change", "fragment"), [
    ("fleet", {"target_peak_utilization": 1.5}, "fleet.target_peak_utilization"),
    ("fleet", {"target_peak_utilization": 0.0}, "fleet.target_peak_utilization"),
    ("fleet", {"min_replicas": 0}, "fleet.min_replicas"),
    ("option", {"min_replicas": 10_000}, "options[1].min_replicas"),
    ("option", {"target_peak_utilization": float("nan")}, "options[1].target_peak_utilization"),
])
def test_bad_policy_exits_2_naming_the_field(tmp_path, capsys, where, change, fragment):
    data = scenario_dict(fleet=change) if where == "fleet" else scenario_dict(option_fields=change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert fragment in capsys.readouterr().err


# ---- autoscaling --------------------------------------------------------------------------------------
NIGHT = [1.0] * 7 + [0.0] * 17  # a 7-hour nightly window, nothing the rest of the day


def nightly(scaling=None, offering="lambda/h100-sxm/on-demand"):
    data = scenario_dict(requests_per_day=3_000_000, batch_allowed=True, peak_to_mean_ratio=None,
                         hourly_traffic_weights=NIGHT,
                         option_fields={"offering": offering, "usd_per_gpu_hour": None,
                                        **({"scaling": scaling} if scaling else {})})
    data["workload"].pop("peak_to_mean_ratio")
    data["options"][1].pop("usd_per_gpu_hour")
    return data


def test_nightly_window_on_autoscaled_on_demand_costs_7_of_24_plus_warmups():
    fixed = decided(nightly()).option("h100")
    auto = decided(nightly({"mode": "autoscale", "min_replicas": 0, "warmup_minutes": 10})).option("h100")
    n = fixed.replicas
    assert n >= 1 and auto.scaling == "autoscale" and fixed.scaling == "fixed"
    assert auto.replicas_by_hour == (n,) * 7 + (0,) * 17
    # The n one-GPU replicas pack into i = ceil(n / 8) whole 8-GPU gpu_8x_h100_sxm5 instances (decision/instances.py):
    # 7 i instance-hours serving + i instance starts a day, each billed one whole hour of warm-up (per-hour
    # billing): (7 i + i) / (24 i) of the 24/7 fleet, (7 i + i) x 8 GPUs x 365.25 / 12 days GPU-hours a month.
    i = math.ceil(n / 8)
    assert fixed.instances == i and fixed.gpus_billed == 8 * i and auto.instances == i
    assert auto.breakdown.gpu_usd_per_month == pytest.approx(fixed.breakdown.gpu_usd_per_month * (7 * i + i) / (24 * i))
    assert auto.gpu_hours_per_month == pytest.approx((7 * i + i) * 8 * 365.25 / 12)
    assert auto.usd_per_month < fixed.usd_per_month / 2


def test_autoscaled_never_costs_more_than_fixed_for_the_same_demand():
    rng = np.random.default_rng(12)
    for _ in range(200):
        demand = rng.uniform(0, 50, size=24) * (rng.uniform(size=24) < 0.6)
        floor = int(rng.integers(0, 3))
        day = autoscaled_day(hourly_requests_per_second=demand, capacity_requests_per_second=7.0,
                             target_peak_utilization=0.8, min_replicas=floor, max_replicas=10**6, warmup_minutes=60)
        fixed = replicas_for_demand(demand_requests_per_second=float(demand.max()), capacity_requests_per_second=7.0,
                                    target_peak_utilization=0.8, min_replicas=floor)
        assert day.serving_replica_hours_per_day + day.warmup_replica_hours_per_day <= 24 * fixed


def test_max_replicas_below_the_need_misses_the_slo():
    auto = decided(nightly({"mode": "autoscale", "min_replicas": 0, "max_replicas": 1, "warmup_minutes": 5}))
    option = auto.option("h100")
    assert decided(nightly()).option("h100").replicas > 1  # the window needs more than one replica
    assert option.replicas_by_hour == (1,) * 7 + (0,) * 17
    assert not option.meets_slo and "max_replicas" in option.slo_reason


@pytest.mark.parametrize(("scaling", "offering", "fragment"), [
    ({"mode": "autoscale", "min_replicas": 3, "max_replicas": 2, "warmup_minutes": 5}, "lambda/h100-sxm/on-demand",
     "options[1].scaling"),
    ({"mode": "autoscale", "warmup_minutes": 61}, "lambda/h100-sxm/on-demand", "options[1].scaling.warmup_minutes"),
    ({"mode": "autoscale"}, "lambda/h100-sxm/on-demand", "warmup_minutes"),
    ({"mode": "autoscale", "warmup_minutes": 5}, "owned/h100-sxm/owned", "scaling.mode autoscale on a owned"),
    ({"mode": "autoscale", "warmup_minutes": 5}, "semianalysis/h100-sxm/reserved", "on a reserved offering"),
    ({"mode": "mixed", "warmup_minutes": 5}, "lambda/h100-sxm/on-demand", "scaling.mode mixed needs a reserved"),
])
def test_bad_scaling_exits_2_naming_the_field(tmp_path, capsys, scaling, offering, fragment):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(nightly(scaling, offering=offering)), encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert fragment in capsys.readouterr().err


def test_horizon_beyond_120_months_exits_2(tmp_path, capsys):
    data = scenario_dict()
    data["horizon_months"] = 121
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert "horizon_months" in capsys.readouterr().err
