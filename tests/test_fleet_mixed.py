"""Mixed fleets (a fixed base plus an autoscaled on-demand burst, part of it on spot): arithmetic written out.

Capacities come from the roofline closed form (decide(..., capacity_method="roofline")) so no test simulates.
The formulas are those of costmodel/decision/mixed.py and docs/economics.md "Mixed fleets"; prices are rows of
pricing_data/gpu_prices.csv (semianalysis/h100-sxm/reserved $1.30, lambda/h100-sxm/on-demand $3.99,
nebius/h100-sxm/spot $1.25, each row's source column).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from costmodel.cli import main
from costmodel.decision.fleet import autoscaled_day
from costmodel.decision.mixed import cyclic_starts, mixed_day
from costmodel.pricing import load_gpu_prices
from costmodel.units import DAYS_PER_MONTH
from tests.test_fleet import NIGHT, decided, scenario_dict

RESERVED, ON_DEMAND, SPOT = 1.30, 3.99, 1.25  # $/GPU-h, the sheet rows named in the module docstring


def mixed_scenario(scaling, *, offering="semianalysis/h100-sxm/reserved", weights=None, requests_per_day=3_000_000):
    data = scenario_dict(requests_per_day=requests_per_day,
                         option_fields={"offering": offering, "usd_per_gpu_hour": None, "scaling": scaling})
    data["options"][1].pop("usd_per_gpu_hour")
    if weights is not None:
        data["workload"].pop("peak_to_mean_ratio")
        data["workload"]["hourly_traffic_weights"] = weights
    return data


def test_base_and_burst_arithmetic_written_out():
    # 24 hours needing 2 replicas, 6 of them 5: with base 2 the burst is 3 replicas for 6 hours, started once.
    demand = [10.0] * 18 + [25.0] * 6  # requests/s; μ = 5.0 at t = 1.0 -> 2 and 5 replicas
    day = mixed_day(hourly_requests_per_second=demand, capacity_requests_per_second=5.0, target_peak_utilization=1.0,
                    min_replicas=1, max_replicas=100, warmup_minutes=10, base_usd_per_gpu_hour=RESERVED,
                    on_demand_usd_per_gpu_hour=ON_DEMAND, base_replicas=2)
    assert day.replicas_by_hour == (2,) * 18 + (5,) * 6
    assert day.burst_replicas_by_hour == (0,) * 18 + (3,) * 6
    assert day.burst_starts_per_day == 3 and day.burst_serving_replica_hours_per_day == 18
    assert day.burst_warmup_replica_hours_per_day == 3.0  # 10 min billed as one whole hour per start
    # 24 x 2 x 1.30 + (18 + 3) x 3.99 = 62.40 + 83.79 = 146.19 $/GPU/day
    assert day.usd_per_gpu_per_day == pytest.approx(24 * 2 * 1.30 + (18 + 3) * 3.99)
    assert day.usd_per_gpu_per_day == pytest.approx(146.19)


def test_default_base_is_the_cheapest_and_covers_the_trough():
    demand = [10.0] * 18 + [25.0] * 6
    kwargs = dict(hourly_requests_per_second=demand, capacity_requests_per_second=5.0, target_peak_utilization=1.0,
                  min_replicas=1, max_replicas=100, warmup_minutes=10, base_usd_per_gpu_hour=RESERVED,
                  on_demand_usd_per_gpu_hour=ON_DEMAND)
    chosen = mixed_day(**kwargs)
    # k = 0: all on demand, 2 x 18 + 5 x 6 = 66 replica-hours and 3 starts (the cyclic day never drops below 2):
    # 69 x 3.99 = 275.31; k = 2: 146.19 (above); k = 5: 24 x 5 x 1.30 = 156.00. The cheapest is k = 2.
    costs = {k: mixed_day(**kwargs, base_replicas=k).usd_per_gpu_per_day for k in (0, 2, 5)}
    assert costs[0] == pytest.approx((48 + 18 + 3) * 3.99) == pytest.approx(275.31)
    assert costs[5] == pytest.approx(156.00)
    assert chosen.base_replicas == 2 and chosen.usd_per_gpu_per_day == pytest.approx(min(costs.values()))
    # Every integer base between the candidates costs at least the chosen one (the cost is linear between them).
    for k in range(0, 7):
        assert mixed_day(**kwargs, base_replicas=k).usd_per_gpu_per_day >= chosen.usd_per_gpu_per_day - 1e-9


def test_spot_overhead_arithmetic_written_out():
    demand = [10.0] * 18 + [25.0] * 6
    day = mixed_day(hourly_requests_per_second=demand, capacity_requests_per_second=5.0, target_peak_utilization=1.0,
                    min_replicas=1, max_replicas=100, warmup_minutes=10, base_usd_per_gpu_hour=RESERVED,
                    on_demand_usd_per_gpu_hour=ON_DEMAND, spot_usd_per_gpu_hour=SPOT, spot_share=0.5,
                    interruptions_per_replica_hour=0.1, redo_seconds=36.0, base_replicas=2)
    # Spot half of the burst: 0.5 x 18 replica-hours x 0.1 interruptions/h x (1 h warm-up + 36 s = 0.01 h redone)
    overhead = 0.5 * 18 * 0.1 * (1.0 + 0.01)
    assert day.spot_overhead_replica_hours_per_day == pytest.approx(overhead)
    assert overhead == pytest.approx(0.909)
    expected = 24 * 2 * 1.30 + 0.5 * (18 + 3) * 3.99 + (0.5 * (18 + 3) + overhead) * 1.25
    assert day.usd_per_gpu_per_day == pytest.approx(expected)
    assert day.replica_hours_per_day == pytest.approx(48 + 18 + 3 + overhead)


def test_cyclic_starts_count_the_rises_of_the_day():
    assert cyclic_starts([0] * 17 + [3] * 7) == 3
    assert cyclic_starts([2] * 24) == 0
    assert cyclic_starts([1, 3, 1, 3] * 6) == 24  # 12 rises of 2 replicas


def test_mixed_never_dearer_than_all_on_demand_autoscale_when_the_base_is_cheaper():
    rng = np.random.default_rng(21)
    for _ in range(200):
        demand = rng.uniform(0, 50, size=24) * (rng.uniform(size=24) < 0.7)
        floor = int(rng.integers(0, 3))
        warmup = float(rng.uniform(0, 60))
        on_demand = float(rng.uniform(1.0, 8.0))
        base = on_demand * float(rng.uniform(0.1, 1.0))
        auto = autoscaled_day(hourly_requests_per_second=demand, capacity_requests_per_second=7.0,
                              target_peak_utilization=0.8, min_replicas=floor, max_replicas=10**6,
                              warmup_minutes=warmup)
        auto_usd = (auto.serving_replica_hours_per_day + auto.warmup_replica_hours_per_day) * on_demand
        mixed = mixed_day(hourly_requests_per_second=demand, capacity_requests_per_second=7.0,
                          target_peak_utilization=0.8, min_replicas=floor, max_replicas=10**6, warmup_minutes=warmup,
                          base_usd_per_gpu_hour=base, on_demand_usd_per_gpu_hour=on_demand)
        # Every hour has at least the replicas autoscaling would run (a cheap base may keep more all day).
        assert all(m >= a for m, a in zip(mixed.replicas_by_hour, auto.replicas_by_hour, strict=True))
        assert mixed.usd_per_gpu_per_day <= auto_usd + 1e-9


def test_compare_prices_a_mixed_fleet():
    # A 7-hour window on top of a steady base: 3,000,000 requests/day, weights 1 for 17 hours and 3 for 7.
    weights = [1.0] * 17 + [3.0] * 7
    scaling = {"mode": "mixed", "warmup_minutes": 10, "burst_offering": "lambda/h100-sxm/on-demand"}
    result = decided(mixed_scenario(scaling, weights=weights)).option("h100")
    fixed = decided(mixed_scenario({"mode": "fixed"}, weights=weights)).option("h100")
    assert result.scaling == "mixed" and result.base_replicas is not None
    hours = result.replicas_by_hour
    assert hours is not None and result.burst_replicas_by_hour is not None
    assert all(h == max(result.base_replicas, b + result.base_replicas) or b == 0
               for h, b in zip(hours, result.burst_replicas_by_hour, strict=True))
    assert max(hours) == fixed.replicas  # the peak hour is sized as the fixed fleet's
    burst_hours = sum(result.burst_replicas_by_hour)
    starts = cyclic_starts(result.burst_replicas_by_hour)
    gpu_usd = (24 * result.base_replicas * RESERVED + (burst_hours + starts) * ON_DEMAND) * DAYS_PER_MONTH
    assert result.breakdown.gpu_usd_per_month == pytest.approx(gpu_usd)
    assert result.usd_per_month <= fixed.usd_per_month + 1e-6  # the fixed fleet is one of the bases tried
    assert any("burst GPU offering lambda/h100-sxm/on-demand" in s.what for s in result.price_sources)


def test_mixed_json_keys(tmp_path, capsys):
    scaling = {"mode": "mixed", "warmup_minutes": 10, "base_replicas": 1}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(mixed_scenario(scaling)), encoding="utf-8")
    assert main(["compare", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    option = next(o for o in out["options"] if o["name"] == "h100")
    assert option["scaling"] == "mixed" and option["base_replicas"] == 1
    assert len(option["replicas_by_hour"]) == 24 and min(option["replicas_by_hour"]) >= 1
    assert [b + 1 for b in option["burst_replicas_by_hour"]] == option["replicas_by_hour"]
    assert math.isfinite(option["gpu_hours_per_month"])


@pytest.mark.parametrize(("scaling", "offering", "fragment"), [
    ({"mode": "mixed", "warmup_minutes": 5, "burst_offering": "owned/h100-sxm/owned"},
     "semianalysis/h100-sxm/reserved", "scaling.burst_offering owned/h100-sxm/owned is a owned row"),
    ({"mode": "mixed", "warmup_minutes": 5, "burst_offering": "lambda/a100-80gb/on-demand"},
     "semianalysis/h100-sxm/reserved", "scaling.burst_offering"),
    ({"mode": "mixed", "warmup_minutes": 5}, "nebius/h100-sxm/spot", "scaling.mode mixed needs a reserved"),
    ({"mode": "mixed", "warmup_minutes": 5, "spot_share": 1.5, "interruption_rate_per_hour": 0.1},
     "owned/h100-sxm/owned", "options[1].scaling.spot_share"),
    ({"mode": "mixed", "warmup_minutes": 5, "spot_share": 0.5}, "owned/h100-sxm/owned", "interruption_rate_per_hour"),
    ({"mode": "mixed", "warmup_minutes": 61}, "owned/h100-sxm/owned", "options[1].scaling.warmup_minutes"),
    ({"mode": "mixed"}, "owned/h100-sxm/owned", "warmup_minutes"),
    ({"mode": "mixed", "warmup_minutes": 5, "min_replicas": 4, "max_replicas": 3}, "owned/h100-sxm/owned",
     "min_replicas (4) must be <= max_replicas (3)"),
    ({"mode": "autoscale", "warmup_minutes": 5, "base_replicas": 2}, "lambda/h100-sxm/on-demand",
     "base_replicas apply only to mode mixed"),
    ({"mode": "mixed", "warmup_minutes": 5, "spot_share": 0.5, "interruption_rate_per_hour": "nan"},
     "owned/h100-sxm/owned", "options[1].scaling.interruption_rate_per_hour"),
])
def test_bad_mixed_scaling_exits_2_naming_the_field(tmp_path, capsys, scaling, offering, fragment):
    data = mixed_scenario(scaling, offering=offering)
    path = tmp_path / "bad.json"
    text = json.dumps(data).replace('"nan"', "NaN")
    path.write_text(text, encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert fragment in capsys.readouterr().err


def test_nightly_window_still_costs_7_of_24_plus_warmups():
    """The issue's check lives in tests/test_fleet.py; restated here on the mixed machinery: a zero base on a
    7-hour window costs (7 n + n) / (24 n) of the 24/7 on-demand fleet."""
    day = mixed_day(hourly_requests_per_second=[30.0 * w for w in NIGHT], capacity_requests_per_second=7.0,
                    target_peak_utilization=1.0, min_replicas=0, max_replicas=10**6, warmup_minutes=10,
                    base_usd_per_gpu_hour=RESERVED, on_demand_usd_per_gpu_hour=ON_DEMAND, base_replicas=0)
    n = math.ceil(30.0 / 7.0)
    assert day.replicas_by_hour == (n,) * 7 + (0,) * 17
    assert day.usd_per_gpu_per_day == pytest.approx((7 * n + n) * ON_DEMAND)
    assert day.usd_per_gpu_per_day / (24 * n * ON_DEMAND) == pytest.approx(8 / 24)


# ---- ops and hosts (issue 12 item 4) -------------------------------------------------------------------
def test_ops_scales_with_gpus_fixed_and_autoscaled():
    fields = {"ops_usd_per_month": 500.0, "ops_usd_per_gpu_month": 100.0}
    small = decided(scenario_dict(option_fields=fields)).option("h100")
    large = decided(scenario_dict(requests_per_day=3_000_000, option_fields=fields)).option("h100")
    # Fixed fleets: ops = 500 + 100 x GPUs.
    assert small.breakdown.ops_usd_per_month == pytest.approx(500 + 100 * small.gpus)
    assert large.breakdown.ops_usd_per_month == pytest.approx(500 + 100 * large.gpus)
    assert large.gpus > small.gpus and large.breakdown.ops_usd_per_month > small.breakdown.ops_usd_per_month
    assert large.usd_per_month == pytest.approx(large.gpus * 2.0 * 730.5 + 500 + 100 * large.gpus)
    # An autoscaled fleet pays the per-GPU part for the GPU-hours it runs: 500 + 100 x GPU-hours / 730.5 h.
    auto_fields = {**fields, "usd_per_gpu_hour": None, "offering": "lambda/h100-sxm/on-demand",
                   "scaling": {"mode": "autoscale", "min_replicas": 0, "warmup_minutes": 10}}
    data = scenario_dict(requests_per_day=3_000_000, batch_allowed=True, hourly_traffic_weights=NIGHT,
                         option_fields=auto_fields)
    data["workload"].pop("peak_to_mean_ratio")
    data["options"][1].pop("usd_per_gpu_hour")
    auto = decided(data).option("h100")
    assert auto.gpu_hours_per_month is not None
    assert auto.breakdown.ops_usd_per_month == pytest.approx(500 + 100 * auto.gpu_hours_per_month / 730.5)


def test_per_gpu_ops_moves_the_break_even_as_a_dearer_gpu_hour():
    plain = decided(scenario_dict(option_fields={"min_replicas": 1})).option("h100")
    with_ops = decided(scenario_dict(option_fields={"min_replicas": 1, "ops_usd_per_gpu_month": 730.5})).option("h100")
    # $730.5 per GPU-month is $1.00 per GPU-hour on top of $2.00: u* grows by 3 / 2.
    assert plain.break_even_utilization is not None and with_ops.break_even_utilization is not None
    assert with_ops.break_even_utilization == pytest.approx(plain.break_even_utilization * 3.0 / 2.0)


def test_hybrid_pays_per_gpu_ops_only_for_its_base_replicas():
    fields = {"ops_usd_per_month": 50.0, "ops_usd_per_gpu_month": 20.0}
    hybrid = decided(scenario_dict(requests_per_day=1_000_000, option_fields=fields)).option("hybrid")
    k = hybrid.replicas
    expected_ops = (50.0 + 20.0 * k) if k else 0.0
    assert hybrid.breakdown.ops_usd_per_month == pytest.approx(expected_ops)
    assert hybrid.breakdown.gpu_usd_per_month == pytest.approx(k * 2.0 * 730.5)


# Owned H100 (pricing_data/gpu_prices.csv owned/h100-sxm/owned: $30,000, 4 years, 0.7 kW, PUE 1.2, $0.08/kWh,
# $140/month colocation = $200/kW-month x 0.7 kW) and its host (pricing_data/host_servers.csv: an 8-GPU node at
# $325,000, the midpoint of $300,000-$350,000, drawing 10.2 kW at most; v2-pseo-ai.pages.dev/tools/gpu-tco-analysis).
HOST_CAPEX = 325_000 / 8 - 30_000  # $10,625 per GPU beyond the GPU
HOST_KW = 10.2 / 8 - 0.7  # 0.575 kW per GPU beyond the GPU
GPU_ONLY = 30_000 / (4 * 8_766) + 0.7 * 1.2 * 0.08 + 140 / 730.5  # $1.1144/GPU-h
HOST_USD = HOST_CAPEX / (4 * 8_766) + HOST_KW * 1.2 * 0.08 + HOST_KW * (140 / 0.7) / 730.5


def test_owned_host_capex_and_power_arithmetic_written_out():
    assert math.isclose(HOST_CAPEX, 10_625.0) and math.isclose(HOST_KW, 0.575)
    assert abs(GPU_ONLY - 1.1144) < 5e-5
    # 10,625 / 35,064 + 0.575 x 1.2 x 0.08 + 0.575 x 200 / 730.5 = 0.3030 + 0.0552 + 0.1574 = 0.5156
    assert abs(HOST_USD - (0.3030 + 0.0552 + 0.1574)) < 2e-4
    assert abs(GPU_ONLY + HOST_USD - 1.6301) < 5e-5  # the "~$1.6 with the server counted"
    owned = {"usd_per_gpu_hour": None, "offering": "owned/h100-sxm/owned"}
    data = scenario_dict(option_fields=owned)
    data["options"][1].pop("usd_per_gpu_hour")
    option = decided(data).option("h100")
    assert option.usd_per_gpu_hour == pytest.approx(GPU_ONLY + HOST_USD)
    assert any(s.what == "host server of owned/h100-sxm/owned" for s in option.price_sources)
    assert any("host server counted" in n for n in option.notes)
    assert option.breakdown.gpu_usd_per_month == pytest.approx(option.gpus * (GPU_ONLY + HOST_USD) * 730.5)


def test_owned_host_overrides_and_missing_rows():
    data = scenario_dict(option_fields={"usd_per_gpu_hour": None, "offering": "owned/h100-sxm/owned",
                                        "host_capex_usd_per_gpu": 0.0, "host_power_kw_per_gpu": 0.0})
    data["options"][1].pop("usd_per_gpu_hour")
    left_out = decided(data).option("h100")
    assert left_out.usd_per_gpu_hour == pytest.approx(GPU_ONLY)  # 0 leaves the host out
    assert any("host server left out" in n for n in left_out.notes)
    assert not any(s.what.startswith("host server") for s in left_out.price_sources)
    data = scenario_dict(option_fields={"usd_per_gpu_hour": None, "offering": "owned/h100-sxm/owned",
                                        "host_capex_usd_per_gpu": 20_000.0})
    data["options"][1].pop("usd_per_gpu_hour")
    with_capex = 20_000 / (4 * 8_766) + HOST_KW * 1.2 * 0.08 + HOST_KW * 200 / 730.5  # power from the sheet
    assert decided(data).option("h100").usd_per_gpu_hour == pytest.approx(GPU_ONLY + with_capex)
    # No sourced host row for L4: the GPU alone, and the notes say so.
    data = scenario_dict(option_fields={"usd_per_gpu_hour": None, "offering": "owned/l4/owned", "hardware": "l4"})
    data["options"][1].pop("usd_per_gpu_hour")
    l4 = decided(data).option("h100")
    assert any("host server not counted" in n for n in l4.notes)
    # Rented GPUs include their host: nothing added.
    data = scenario_dict(option_fields={"usd_per_gpu_hour": None, "offering": "lambda/h100-sxm/on-demand"})
    data["options"][1].pop("usd_per_gpu_hour")
    assert decided(data).option("h100").usd_per_gpu_hour == pytest.approx(3.99)


@pytest.mark.parametrize(("change", "fragment"), [
    ({"ops_usd_per_gpu_month": -1}, "options[1].ops_usd_per_gpu_month"),
    ({"ops_usd_per_gpu_month": "inf"}, "options[1].ops_usd_per_gpu_month"),
    ({"host_capex_usd_per_gpu": -5}, "options[1].host_capex_usd_per_gpu"),
    ({"host_power_kw_per_gpu": "nan"}, "options[1].host_power_kw_per_gpu"),
    ({"host_power_kw_per_gpu": 50}, "options[1].host_power_kw_per_gpu"),
])
def test_bad_ops_and_host_exit_2_naming_the_field(tmp_path, capsys, change, fragment):
    data = scenario_dict(option_fields=change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data).replace('"nan"', "NaN").replace('"inf"', "Infinity"), encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert fragment in capsys.readouterr().err


def test_volume_model_scales_per_gpu_ops_with_the_fleet():
    """The volume sweep (decision/volume.py) re-sizes the fleet: its per-GPU ops must follow the replicas, as
    decide's do at that volume."""
    from costmodel.decision.volume import Scaling, cost_model, usd_per_month
    from costmodel.scenario import parse_scenario

    fields = {"ops_usd_per_month": 500.0, "ops_usd_per_gpu_month": 100.0}
    data = scenario_dict(option_fields=fields)
    model = cost_model(decided(data), parse_scenario(data))
    base = decided(data).option("h100")
    assert usd_per_month(model, "h100") == pytest.approx(base.usd_per_month)
    grown = decided(scenario_dict(requests_per_day=3_000_000, option_fields=fields))  # 30x
    assert grown.option("h100").gpus > base.gpus  # the fleet grows, and its per-GPU ops with it
    assert usd_per_month(model, "h100", Scaling(volume=30.0)) == pytest.approx(grown.option("h100").usd_per_month)
    assert usd_per_month(model, "hybrid", Scaling(volume=30.0)) == pytest.approx(grown.option("hybrid").usd_per_month)


def test_compare_table_states_the_mixed_split(tmp_path, capsys):
    scaling = {"mode": "mixed", "warmup_minutes": 10, "base_replicas": 1}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(mixed_scenario(scaling)), encoding="utf-8")
    assert main(["compare", str(path)]) == 0
    out = capsys.readouterr().out
    # No burst_offering: the cheapest on-demand row of the option's hardware per replica-hour in whole instances
    # (decision/mixed.py, decision/instances.py). A 1-GPU replica fills any instance (floor(G / 1) = G replicas
    # each), so every row bills one GPU per replica-hour and the key is the $/GPU-h; at the same price the smaller
    # instance, which a small burst fills (on the bundled sheet nebius's 8-GPU and 1-GPU rows both sell at
    # $2.95/GPU-h, so nebius/h100-sxm/on-demand-1gpu).
    rows = [r for r in load_gpu_prices().rows if r.accelerator_id == "h100-sxm" and r.offering == "on-demand"]
    cheapest = min(rows, key=lambda r: (r.all_in_usd_per_gpu_hour(), r.gpus_per_instance))
    assert "mixed: 1 base + on-demand burst, " in out and f"burst GPU offering {cheapest.id}:" in out
