"""The one costing function (decision/plan.py `plan_cost`): arithmetic written out, and every caller costing the
same plan the same way (decide's month 0, the horizon's month 0, the volume sweep at 1x, a hybrid's base).

Formulas: docs/economics.md ("Self-host: replicas for the peak hour", "Instances", "Autoscaling"); a month is
730.5 h and 30.4375 days (costmodel.units). Decided scenarios use the roofline capacity (no simulation).
"""

from __future__ import annotations

import pytest

from costmodel.decision.capacity import self_host_capacity
from costmodel.decision.fleet_policy import FleetPolicy
from costmodel.decision.horizon import option_horizons
from costmodel.decision.instances import InstancePacking
from costmodel.decision.plan import Demand, OptionPlan, fixed_cost, plan_cost, workload_demand
from costmodel.decision.volume import cost_model, usd_per_month
from costmodel.scenario import SelfHostOption, parse_scenario
from tests.test_fleet import decided, nightly, scenario_dict
from tests.test_fleet_mixed import mixed_scenario

USD_PER_GPU_HOUR, OPS_USD, OPS_PER_GPU_USD = 2.0, 1_000.0, 50.0


def _plan(*, scaling: str = "fixed", gpus_per_instance: int = 8) -> OptionPlan:
    """2-GPU replicas in 8-GPU instances at $2/GPU-hour; $1,000/month + $50/GPU-month ops; t = 0.8, m = 2, N+1."""
    fleet = FleetPolicy(target_peak_utilization=0.8, min_replicas=2, spare_replicas=1, reason="test",
                        scaling=scaling, hourly_min_replicas=0, warmup_minutes=10.0)  # type: ignore[arg-type]
    return OptionPlan(name="p", gpus_per_replica=2, usd_per_gpu_hour=USD_PER_GPU_HOUR, host_usd_per_gpu_hour=0.0,
                      packing=InstancePacking(gpus_per_replica=2, gpus_per_instance=gpus_per_instance), fleet=fleet,
                      ops_usd_per_month=OPS_USD, ops_usd_per_gpu_month=OPS_PER_GPU_USD)


def _demand(peak: float, hourly: tuple[float, ...] = (5.0,) * 24) -> Demand:
    return Demand(mean_requests_per_second=sum(hourly) / 24, peak_requests_per_second=peak,
                  hourly_requests_per_second=hourly, mean_output_tokens=200.0)


def test_fixed_plan_by_hand() -> None:
    # Peak 10 req/s, 3 req/s per replica: max(2, ceil(10 / 2.4) = 5, ceil(10 / 3) + 1 = 5) = 5 replicas; 4 replicas
    # of 2 GPUs share one 8-GPU instance -> ceil(5 / 4) = 2 instances = 16 GPUs billed.
    cost = plan_cost(_plan(), _demand(10.0), capacity_requests_per_second=3.0)
    assert (cost.replicas, cost.instances, cost.gpus_billed) == (5, 2, 16)
    assert cost.gpu_usd_per_month == pytest.approx(16 * 2.0 * 730.5)  # $23,376
    assert cost.ops_usd_per_month == pytest.approx(1_000 + 16 * 50)  # $1,800
    assert cost.usd_per_month == pytest.approx(25_176.0)
    # A 20% cheaper GPU price scales the GPU line only.
    cheaper = plan_cost(_plan(), _demand(10.0), capacity_requests_per_second=3.0, gpu_price_scale=0.8)
    assert cheaper.usd_per_month == pytest.approx(16 * 2.0 * 0.8 * 730.5 + 1_800)


def test_no_load_meets_the_slo_costs_one_replica_all_month() -> None:
    # One 2-GPU replica still takes a whole 8-GPU instance: 8 x $2 x 730.5 h + $1,000 + 8 x $50.
    cost = plan_cost(_plan(), _demand(10.0), capacity_requests_per_second=0.0)
    assert (cost.replicas, cost.gpus_billed) == (1, 8)
    assert cost.usd_per_month == pytest.approx(8 * 2.0 * 730.5 + 1_000 + 400)
    assert cost.usd_per_month == fixed_cost(_plan(), replicas=1).usd_per_month


def test_autoscaled_plan_by_hand() -> None:
    # GPUs sold singly (G = 1). 12 hours at 9 req/s need max(0, ceil(9 / 2.4) = 4, ceil(9 / 3) + 1 = 4) = 4
    # replicas, 12 hours at 0 need none (the hourly floor is 0). One rise a day, 0 -> 4: 4 starts x 1 billed hour
    # (10 min warm-up, billed per hour). Replica-hours: 12 x 4 + 4 = 52 a day x 2 GPUs x 30.4375 days.
    hourly = (9.0,) * 12 + (0.0,) * 12
    cost = plan_cost(_plan(scaling="autoscale", gpus_per_instance=1), _demand(9.0, hourly),
                     capacity_requests_per_second=3.0)
    assert cost.replicas_by_hour == (4,) * 12 + (0,) * 12
    gpu_hours = 52 * 2 * 30.4375
    assert cost.gpu_hours_per_month == pytest.approx(gpu_hours)
    assert cost.gpu_usd_per_month == pytest.approx(gpu_hours * 2.0)
    # Per-GPU ops for the GPU-months paid: $50 x GPU-hours / 730.5 h.
    assert cost.ops_usd_per_month == pytest.approx(1_000 + 50 * gpu_hours / 730.5)


@pytest.mark.parametrize("data", [
    scenario_dict(),
    scenario_dict(option_fields={"ops_usd_per_month": 3_000, "ops_usd_per_gpu_month": 120}),
    nightly({"mode": "autoscale", "min_replicas": 0, "warmup_minutes": 10}),
    mixed_scenario({"mode": "mixed", "warmup_minutes": 10}, weights=[1.0] * 18 + [2.5] * 6),
], ids=["fixed", "fixed-ops", "autoscale", "mixed"])
def test_every_caller_costs_the_same_plan_the_same_way(data) -> None:  # type: ignore[no-untyped-def]
    scenario = parse_scenario(data)
    decision = decided(data)
    result = decision.option("h100")
    assert result.plan is not None
    # decide's month 0 is plan_cost at the workload's demand ...
    demand = workload_demand(scenario.workload, hourly_profile=decision.hourly_profile)
    direct = plan_cost(result.plan, demand, capacity_requests_per_second=result.capacity_requests_per_second or 0.0,
                       ttft_p90_seconds=result.ttft_p90_seconds or 0.0, tpot_p90_seconds=result.tpot_p90_seconds or 0.0)
    assert direct.usd_per_month == result.usd_per_month
    assert direct.gpu_usd_per_month == result.breakdown.gpu_usd_per_month
    assert direct.ops_usd_per_month == result.breakdown.ops_usd_per_month
    # ... the volume sweep at 1x re-costs the same plan ...
    assert usd_per_month(cost_model(decision, scenario), "h100") == result.usd_per_month
    # ... and so does the horizon in its month 0.
    option = scenario.option("h100")
    assert isinstance(option, SelfHostOption)
    capacities = {"h100": self_host_capacity(scenario, option, calibration=None,
                                          method="roofline")}  # the capacity decided() used
    horizons = option_horizons(scenario, {r.name: r for r in decision.options}, capacities,
                               profile=decision.hourly_profile)
    assert horizons["h100"].months[0].usd == result.usd_per_month


def test_a_hybrid_base_is_billed_as_its_plan() -> None:
    decision = decided(scenario_dict())
    hybrid, base = decision.option("hybrid"), decision.option("h100")
    assert base.plan is not None
    expected = fixed_cost(base.plan, replicas=hybrid.replicas)  # 0 base replicas: no GPU billed
    assert hybrid.breakdown.gpu_usd_per_month == expected.gpu_usd_per_month
    assert hybrid.breakdown.ops_usd_per_month == (expected.ops_usd_per_month if hybrid.replicas else 0.0)
