"""Autoscale on a spot offering pays the spot interruption overhead, the formula of a mixed fleet's spot share
with s = 1 (decision/fleet.py `spot_overhead_replica_hours`, docs/economics.md "Autoscaling", "On spot"):
overhead = ρ x Σ_h replicas_h x (w + r), w the billed warm-up hours, r = (TTFT p90 + E[T_out] x TPOT p90) / 2.
nebius/h100-sxm/spot is $1.25/GPU-h in pricing_data/gpu_prices.csv (skypilot-catalog nebius/vms.csv).
Capacities from the roofline closed form (no simulation).
"""

from __future__ import annotations

import json
import math

import pytest

from costmodel.cli import main
from costmodel.decision.fleet import autoscaled_day
from costmodel.decision.mixed import mixed_day
from tests.test_fleet import decided, nightly

SPOT_ROW, SPOT_USD = "nebius/h100-sxm/spot", 1.25
DAYS_PER_MONTH = 365.25 / 12
NIGHT_DEMAND = [30.0] * 7 + [0.0] * 17  # requests/s: a 7-hour window, nothing the rest of the day


def test_spot_overhead_arithmetic_written_out() -> None:
    day = autoscaled_day(hourly_requests_per_second=NIGHT_DEMAND, capacity_requests_per_second=7.0,
                         target_peak_utilization=1.0, min_replicas=0, max_replicas=100, warmup_minutes=10,
                         interruptions_per_replica_hour=0.1, redo_seconds=36.0)
    # ceil(30 / 7) = 5 replicas for 7 hours: 35 replica-hours, 5 starts billed 1 h each;
    # overhead = 0.1 x 35 x (1 h + 36 s = 0.01 h) = 3.535 replica-hours a day.
    assert day.serving_replica_hours_per_day == 35 and day.warmup_replica_hours_per_day == 5.0
    assert day.spot_overhead_replica_hours_per_day == pytest.approx(0.1 * 35 * (1.0 + 0.01))
    assert day.spot_overhead_replica_hours_per_day == pytest.approx(3.535)
    # The same formula as a mixed fleet whose whole burst (no base) is on spot.
    mixed = mixed_day(hourly_requests_per_second=NIGHT_DEMAND, capacity_requests_per_second=7.0,
                      target_peak_utilization=1.0, min_replicas=0, max_replicas=100, warmup_minutes=10,
                      base_usd_per_gpu_hour=1.0, on_demand_usd_per_gpu_hour=3.99, spot_usd_per_gpu_hour=SPOT_USD,
                      spot_share=1.0, interruptions_per_replica_hour=0.1, redo_seconds=36.0, base_replicas=0)
    assert mixed.spot_overhead_replica_hours_per_day == pytest.approx(day.spot_overhead_replica_hours_per_day)
    # Off spot (rate 0) nothing is added.
    plain = autoscaled_day(hourly_requests_per_second=NIGHT_DEMAND, capacity_requests_per_second=7.0,
                           target_peak_utilization=1.0, min_replicas=0, max_replicas=100, warmup_minutes=10)
    assert plain.spot_overhead_replica_hours_per_day == 0.0


def test_compare_prices_the_overhead_of_an_autoscaled_spot_fleet() -> None:
    scaling = {"mode": "autoscale", "min_replicas": 0, "warmup_minutes": 10}
    quiet = decided(nightly({**scaling, "interruption_rate_per_hour": 0.0}, offering=SPOT_ROW)).option("h100")
    spot = decided(nightly({**scaling, "interruption_rate_per_hour": 0.1}, offering=SPOT_ROW)).option("h100")
    assert spot.scaling == "autoscale" and spot.usd_per_gpu_hour == pytest.approx(SPOT_USD)
    n = spot.replicas
    assert spot.replicas_by_hour == (n,) * 7 + (0,) * 17
    assert spot.ttft_p90_seconds is not None and spot.tpot_p90_seconds is not None
    redo = (spot.ttft_p90_seconds + 200 * spot.tpot_p90_seconds) / 2  # 200 output tokens per request
    gpus = spot.gpus_per_replica
    assert gpus is not None
    # The replicas pack into i = ceil(n N / 8) whole 8-GPU instances of the row (decision/instances.py):
    # ((7 i serving + i starts x 1 h) x 8 GPUs + 0.1 x 7 n x (1 h + r) redone replica-hours x 8 / floor(8 / N)
    # GPUs billed per replica) a day x 30.4375 days
    assert gpus == 1
    i = math.ceil(n * gpus / 8)
    gpu_hours = ((7 * i + i) * 8 + 0.1 * 7 * n * (1.0 + redo / 3600) * 8 / (8 // gpus)) * DAYS_PER_MONTH
    assert spot.gpu_hours_per_month == pytest.approx(gpu_hours)
    assert spot.breakdown.gpu_usd_per_month == pytest.approx(gpu_hours * SPOT_USD)
    assert quiet.gpu_hours_per_month == pytest.approx((7 * i + i) * 8 * DAYS_PER_MONTH)
    assert spot.usd_per_month > quiet.usd_per_month
    assert any("interruptions per replica-hour" in note for note in spot.notes)


@pytest.mark.parametrize(("scaling", "offering", "fragment"), [
    ({"mode": "autoscale", "warmup_minutes": 10}, SPOT_ROW, "scaling.interruption_rate_per_hour is required"),
    ({"mode": "autoscale", "warmup_minutes": 10, "interruption_rate_per_hour": 0.1}, "lambda/h100-sxm/on-demand",
     "scaling.interruption_rate_per_hour applies to autoscale only on a spot offering"),
    ({"mode": "fixed", "interruption_rate_per_hour": 0.1}, SPOT_ROW, "also to autoscale on a spot offering"),
    ({"mode": "autoscale", "warmup_minutes": 10, "interruption_rate_per_hour": 2.0}, SPOT_ROW,
     "options[1].scaling.interruption_rate_per_hour"),
    ({"mode": "autoscale", "warmup_minutes": 10, "interruption_rate_per_hour": "nan"}, SPOT_ROW,
     "options[1].scaling.interruption_rate_per_hour"),
])
def test_bad_spot_autoscale_exits_2_naming_the_field(tmp_path, capsys, scaling, offering, fragment) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(nightly(scaling, offering=offering)).replace('"nan"', "NaN"), encoding="utf-8")
    assert main(["compare", str(path)]) == 2
    assert fragment in capsys.readouterr().err
