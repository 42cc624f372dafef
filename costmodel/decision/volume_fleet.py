"""The hourly fleet of an autoscaled or mixed self-host option, re-run by the volume sweep (decision/volume.py).

A fixed fleet's $/month at another volume is its peak-hour replica count times one replica's cost. An
autoscaled or mixed fleet pays replica-hours that follow the day's demand, so the sweep re-runs the decision's
own fleet functions on the scaled hourly demand: `fleet.autoscaled_day` (autoscale, on-demand or spot) and
`mixed.mixed_day` (a fixed base plus an on-demand/spot burst, the cheapest base re-chosen for the day unless
the scenario pins `scaling.base_replicas`). GPU-hours, GPU $ and ops then follow as in
`fleet.autoscaled_result` and `mixed.mixed_result`: ops = fixed + $/GPU-month x GPU-hours / 730.5 h.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.decision.fleet import MAX_AUTOSCALE_REPLICAS, autoscaled_day, interrupted_work_seconds
from costmodel.decision.instances import InstancePacking
from costmodel.decision.mixed import MixedPackings, mixed_day
from costmodel.decision.results import OptionResult
from costmodel.scenario import SelfHostOption
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH


@dataclass(frozen=True, kw_only=True)
class FleetInputs:
    """What an autoscaled or mixed option's day depends on besides demand and capacity (month-0 prices)."""

    mode: str  # "autoscale" | "mixed"
    gpus_per_replica: int
    usd_per_gpu_hour: float  # autoscale: the offering's; mixed: the fixed base's (all-in, host included)
    ops_usd_per_gpu_month: float
    max_replicas: int
    warmup_minutes: float
    interruptions_per_replica_hour: float  # autoscale on spot, or the mixed burst's spot share; else 0
    ttft_p90_seconds: float  # with TPOT p90 and the output length: the work redone per spot interruption
    tpot_p90_seconds: float
    mean_output_tokens: float
    burst_usd_per_gpu_hour: float = 0.0  # mixed only
    burst_spot_usd_per_gpu_hour: float = 0.0
    spot_share: float = 0.0
    base_replicas: int | None = None  # mixed: pinned by the scenario; None = the cheapest base for each day
    gpus_per_instance: int = 1  # the offering's (mixed: the base's) instance size (decision/instances.py)
    burst_gpus_per_instance: int = 1  # mixed: the on-demand burst's
    burst_spot_gpus_per_instance: int = 1  # mixed: the spot burst's

    def packings(self) -> MixedPackings:
        """The base's (or the autoscaled fleet's) and the burst's instances."""
        def pack(g: int) -> InstancePacking:
            return InstancePacking(gpus_per_replica=self.gpus_per_replica, gpus_per_instance=g)
        return MixedPackings(base=pack(self.gpus_per_instance), on_demand=pack(self.burst_gpus_per_instance),
                             spot=pack(self.burst_spot_gpus_per_instance))


def fleet_inputs(result: OptionResult, option: SelfHostOption, *, mean_output_tokens: float) -> FleetInputs | None:
    """The option's fleet inputs when it autoscales or runs a mixed fleet; None for a fixed fleet."""
    scaling = option.scaling
    if result.scaling not in ("autoscale", "mixed") or result.usd_per_gpu_hour is None:
        return None
    return FleetInputs(
        mode=result.scaling, gpus_per_replica=result.gpus_per_replica or 1, usd_per_gpu_hour=result.usd_per_gpu_hour,
        ops_usd_per_gpu_month=result.ops_usd_per_gpu_month, max_replicas=scaling.max_replicas or MAX_AUTOSCALE_REPLICAS,
        warmup_minutes=scaling.warmup_minutes or 0.0,
        interruptions_per_replica_hour=scaling.interruption_rate_per_hour or 0.0,
        ttft_p90_seconds=result.ttft_p90_seconds or 0.0, tpot_p90_seconds=result.tpot_p90_seconds or 0.0,
        mean_output_tokens=mean_output_tokens, burst_usd_per_gpu_hour=result.burst_usd_per_gpu_hour or 0.0,
        burst_spot_usd_per_gpu_hour=result.burst_spot_usd_per_gpu_hour or 0.0, spot_share=scaling.spot_share,
        base_replicas=scaling.base_replicas, gpus_per_instance=result.gpus_per_instance or 1,
        burst_gpus_per_instance=result.burst_gpus_per_instance or 1,
        burst_spot_gpus_per_instance=result.burst_spot_gpus_per_instance or result.gpus_per_instance or 1,
    )


def fleet_usd_per_month(fleet: FleetInputs, *, hourly_requests_per_second: Sequence[float],
                        capacity_requests_per_second: float, target_peak_utilization: float, min_replicas: int,
                        gpu_price_scale: float = 1.0, output_tokens_scale: float = 1.0,
                        spare_replicas: int = 0) -> float:
    """GPU $ + per-GPU ops a month of the fleet serving this hourly demand (fixed ops excluded: the caller's)."""
    redo_seconds = interrupted_work_seconds(ttft_p90_seconds=fleet.ttft_p90_seconds,
                                            tpot_p90_seconds=fleet.tpot_p90_seconds,
                                            mean_output_tokens=fleet.mean_output_tokens * output_tokens_scale)
    shared = {"hourly_requests_per_second": hourly_requests_per_second,
              "capacity_requests_per_second": capacity_requests_per_second,
              "target_peak_utilization": target_peak_utilization, "min_replicas": min_replicas,
              "max_replicas": fleet.max_replicas, "warmup_minutes": fleet.warmup_minutes,
              "interruptions_per_replica_hour": fleet.interruptions_per_replica_hour, "redo_seconds": redo_seconds,
              "spare_replicas": spare_replicas}
    packings = fleet.packings()
    if fleet.mode == "mixed":
        day = mixed_day(**shared, base_usd_per_gpu_hour=fleet.usd_per_gpu_hour * gpu_price_scale,  # type: ignore[arg-type]
                        on_demand_usd_per_gpu_hour=fleet.burst_usd_per_gpu_hour * gpu_price_scale,
                        spot_usd_per_gpu_hour=fleet.burst_spot_usd_per_gpu_hour * gpu_price_scale,
                        spot_share=fleet.spot_share, base_replicas=fleet.base_replicas, packings=packings)
        gpu_hours, gpu_usd = day.billed_gpu_hours_per_day * DAYS_PER_MONTH, day.usd_per_day * DAYS_PER_MONTH
    else:
        auto = autoscaled_day(**shared)  # type: ignore[arg-type]
        gpu_hours = auto.billed_gpu_hours_per_month(packing=packings.base)
        gpu_usd = gpu_hours * fleet.usd_per_gpu_hour * gpu_price_scale
    return gpu_usd + fleet.ops_usd_per_gpu_month * gpu_hours / HOURS_PER_MONTH
