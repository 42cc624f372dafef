"""Instances (decision/instances.py): replicas pack into the offering's whole instances, and whole instances are
billed, in fixed, autoscaled, mixed and hybrid fleets, the horizon's commitments and the volume sweep.

Rule (docs/economics.md, "Instances"): N GPUs per replica, G per instance; N <= G: floor(G / N) replicas share an
instance, instances = ceil(n / floor(G / N)); N > G: a replica spans ceil(N / G) instances; GPUs billed =
instances x G. Prices: pricing_data/gpu_prices.csv (skypilot-catalog aws/vms.csv commit 00148f2: p5.48xlarge 8 H100
at $55.04/h = $6.88/GPU-h, p5.4xlarge 1 H100 at $6.88/h). A month is 730.5 h. Capacities from the roofline
closed form (no simulation).
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
import yaml

from costmodel.cli import main
from costmodel.decision.economics import plan_hybrid, size_self_host
from costmodel.decision.instances import InstancePacking, gpus_cell
from costmodel.decision.mixed import MixedPackings, mixed_day
from costmodel.decision.rank import Overrides, decide
from costmodel.decision.volume import Scaling, cost_model, usd_per_month
from costmodel.scenario import parse_scenario

TODAY = dt.date(2026, 12, 1)
HOURS_PER_MONTH = 365.25 * 24 / 12  # 730.5 h


def test_packing_rule_arithmetic() -> None:
    one = InstancePacking(gpus_per_replica=1, gpus_per_instance=8)
    assert [one.instances(n) for n in (0, 1, 2, 8, 9)] == [0, 1, 1, 1, 2]  # 8 one-GPU replicas share a p5.48xlarge
    assert one.gpus_billed(2) == 8 and one.billed_gpus_per_replica == 1.0
    tp4 = InstancePacking(gpus_per_replica=4, gpus_per_instance=8)
    assert [tp4.instances(n) for n in (1, 2, 3)] == [1, 1, 2]  # two TP4 replicas per 8-GPU instance
    tp3 = InstancePacking(gpus_per_replica=3, gpus_per_instance=8)
    assert tp3.replicas_per_instance == 2 and tp3.gpus_billed(3) == 16  # 2 GPUs of each instance idle
    assert "2 GPUs of each left idle" in tp3.rule()
    tp16 = InstancePacking(gpus_per_replica=16, gpus_per_instance=8)
    assert tp16.instances(3) == 6 and tp16.gpus_billed(3) == 48  # each replica spans 2 instances
    single = InstancePacking(gpus_per_replica=2)
    assert single.gpus_billed(5) == 10 and not single.packs and single.rule() == ""


def test_size_self_host_bills_whole_instances() -> None:
    # Two 1-GPU replicas on a p5.48xlarge: one whole instance, 8 GPUs x $6.88 x 730.5 h = $40,206.72; the
    # p5.4xlarge sells one GPU: 2 x $6.88 x 730.5 = $10,051.68 (what the two replicas were billed before).
    common = {"mean_requests_per_second": 0.1, "peak_requests_per_second": 0.2, "capacity_requests_per_second": 10.0,
              "tokens_per_request": 1200.0, "gpus_per_replica": 1, "usd_per_gpu_hour": 6.88, "min_replicas": 2}
    p5 = size_self_host(**common, packing=InstancePacking(gpus_per_replica=1, gpus_per_instance=8))
    assert (p5.replicas, p5.gpus, p5.instances, p5.gpus_billed) == (2, 2, 1, 8)
    assert p5.usd_per_month == pytest.approx(8 * 6.88 * HOURS_PER_MONTH) == pytest.approx(40_206.72)
    small = size_self_host(**common)
    assert small.usd_per_month == pytest.approx(2 * 6.88 * HOURS_PER_MONTH) == pytest.approx(10_051.68)
    ops = size_self_host(**common, ops_usd_per_gpu_month=100.0,
                         packing=InstancePacking(gpus_per_replica=1, gpus_per_instance=8))
    assert ops.ops_usd_per_month == pytest.approx(8 * 100.0)  # per-GPU ops on the GPUs billed


def _scenario(offering: str, **option_fields: object) -> dict[str, object]:
    return {
        "name": "instances",
        "workload": {"requests_per_day": 20_000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "accept_unverified_latency": True,
        "options": [
            {"kind": "api", "name": "api", "price_id": "cerebras/llama-3.1-8b"},
            {"kind": "self-host", "name": "h100", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "offering": offering, **option_fields},
        ],
    }


def decided(data: dict[str, object], **kwargs: object):
    return decide(parse_scenario(data), today=TODAY, capacity_method="roofline", **kwargs)  # type: ignore[arg-type]


def test_decide_bills_the_p5_48xlarge_and_not_the_p5_4xlarge() -> None:
    # 20,000 requests/day fit one replica; the interactive N+1 floor keeps 2 (decision/fleet.py).
    big = decided(_scenario("aws/h100-sxm/on-demand")).option("h100")
    small = decided(_scenario("aws/h100-sxm/on-demand-1gpu")).option("h100")
    assert big.replicas == small.replicas == 2
    assert (big.instances, big.gpus_billed, big.gpus_per_instance) == (1, 8, 8)
    assert (small.instances, small.gpus_billed, small.gpus_per_instance) == (2, 2, 1)
    assert big.breakdown.gpu_usd_per_month == pytest.approx(40_206.72)
    assert small.breakdown.gpu_usd_per_month == pytest.approx(10_051.68)
    assert any("billed by whole instance: one 8-GPU p5.48xlarge instance holds up to 8 replicas of 1 GPU" in n
               for n in big.notes)


def test_compare_json_has_instances_and_gpus_billed(tmp_path, capsys) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_scenario("aws/h100-sxm/on-demand")))
    assert main(["compare", str(path), "--json", "--date", "2026-12-01"]) == 0  # simulated capacity: still 2
    options = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert (options["h100"]["instances"], options["h100"]["gpus_billed"], options["h100"]["gpus"]) == (1, 8, 2)
    assert options["api"]["instances"] is None and options["api"]["gpus_billed"] is None
    # The text table shows the GPUs billed beside the replicas' own (review L5: it showed only the 2).
    assert main(["compare", str(path), "--date", "2026-12-01"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("h100 "))
    assert " 2 (8 billed) " in row


def test_gpus_cell_shows_billed_gpus_only_when_they_differ() -> None:
    assert gpus_cell(gpus=4, gpus_billed=8) == "4 (8 billed)"
    assert gpus_cell(gpus=4, gpus_billed=4) == gpus_cell(gpus=4, gpus_billed=None) == "4"


def test_volume_sweep_matches_decide_with_instances() -> None:
    # The sweep re-prices whole instances at other volumes: 10x the volume still fits one p5.48xlarge only while
    # the replicas fit 8 per instance, exactly as decide() re-sizes.
    data = _scenario("aws/h100-sxm/on-demand")
    decision = decided(data)
    model = cost_model(decision, parse_scenario(data))
    for scale in (1.0, 10.0, 60.0):
        again = decided(data, overrides=Overrides(volume=scale)).option("h100")
        assert usd_per_month(model, "h100", Scaling(volume=scale)) == pytest.approx(again.usd_per_month)
        assert again.gpus_billed == 8 * math.ceil(again.replicas / 8)


def test_autoscaled_fleet_bills_each_hours_instances() -> None:
    auto = decided(_scenario("aws/h100-sxm/on-demand", scaling={"mode": "autoscale", "warmup_minutes": 10,
                                                                "min_replicas": 1})).option("h100")
    # Every hour's replicas fit one 8-GPU instance, so the fleet pays 24 instance-hours a day, no instance
    # starts (the instance never stops): 24 x 8 GPUs x 30.4375 days.
    assert max(auto.replicas_by_hour or (0,)) <= 8
    assert auto.gpu_hours_per_month == pytest.approx(24 * 8 * 365.25 / 12)
    assert auto.instances == 1 and auto.gpus_billed == 8


def test_mixed_day_packs_base_and_burst() -> None:
    # Demand needs 3 replicas of 1 GPU for 12 hours and 1 for the other 12; base k on a 1-GPU reserved row at
    # $1.79, burst on 8-GPU instances at $6.88. k = 1: burst 2 replicas for 12 h = one 8-GPU instance for 12 h
    # + 1 start x 1 h warm-up: 24 x 1 x 1.79 + (12 + 1) x 8 x 6.88 = 42.96 + 715.52 = $758.48 a day.
    # k = 3: 72 x 1.79 = $128.88 a day, the cheapest.
    demand = [15.0] * 12 + [5.0] * 12
    packings = MixedPackings(base=InstancePacking(gpus_per_replica=1),
                             on_demand=InstancePacking(gpus_per_replica=1, gpus_per_instance=8),
                             spot=InstancePacking(gpus_per_replica=1))
    kwargs = {"hourly_requests_per_second": demand, "capacity_requests_per_second": 5.0, "target_peak_utilization": 1.0,
              "min_replicas": 1, "max_replicas": 100, "warmup_minutes": 10, "base_usd_per_gpu_hour": 1.79,
              "on_demand_usd_per_gpu_hour": 6.88, "packings": packings}
    one = mixed_day(**kwargs, base_replicas=1)  # type: ignore[arg-type]
    assert one.usd_per_day == pytest.approx(24 * 1.79 + 13 * 8 * 6.88) == pytest.approx(758.48)
    assert one.billed_gpu_hours_per_day == pytest.approx(24 + 13 * 8)
    assert one.base_instances == 1 and max(one.burst_instances_by_hour) == 1
    best = mixed_day(**kwargs)  # type: ignore[arg-type]
    assert best.base_replicas == 3 and best.usd_per_day == pytest.approx(72 * 1.79)


def test_hybrid_base_counts_whole_instances() -> None:
    # One-GPU base replicas on an 8-GPU instance: 1 to 8 of them cost one instance (I = 8 x $6.88 x 730.5 h =
    # $40,206.72), so the plan keeps a whole instance's worth (or the cap) rather than a part-empty one. Demand
    # 10 requests/s all day, 1 request/s per replica, the API at $0.004 a request (S = 2,629,800 s a month):
    # k = 0: 10 x 0.004 x S = $105,192; k = 7: I + 3 x 0.004 x S = $71,764; k = 8: I + 2 x 0.004 x S = $61,245;
    # k = 10: 2 I = $80,413: k = 8 is the cheapest.
    instance = 8 * 6.88 * HOURS_PER_MONTH
    seconds = 3600 * HOURS_PER_MONTH
    packing = InstancePacking(gpus_per_replica=1, gpus_per_instance=8)
    plan = plan_hybrid(mean_requests_per_second=10.0, hourly_profile=[1.0] * 24, capacity_requests_per_second=1.0,
                       replica_usd_per_month=6.88 * HOURS_PER_MONTH, ops_usd_per_month=0.0,
                       api_usd_per_request=0.004, max_base_replicas=10, packing=packing,
                       usd_per_gpu_month=6.88 * HOURS_PER_MONTH)
    assert plan.base_replicas == 8
    assert plan.self_host_usd_per_month == pytest.approx(instance)
    assert plan.usd_per_month == pytest.approx(instance + 2 * 0.004 * seconds) == pytest.approx(61_245.12, abs=0.01)
    assert plan.usd_per_month < min(10 * 0.004 * seconds, instance + 3 * 0.004 * seconds, 2 * instance)


def test_the_memo_names_the_gpus_billed_beside_the_replicas_own() -> None:
    from costmodel.memo.text import describe_option

    data = _scenario("aws/h100-sxm/on-demand")
    big = decided(data).option("h100")  # 2 one-GPU replicas on one p5.48xlarge: 8 GPUs billed
    assert describe_option(big, parse_scenario(data)).endswith("2 GPUs (8 billed) in all")
