"""Serving simulator: continuous batching on one replica -> TTFT/TPOT/E2E percentiles, goodput, capacity at SLO.

Public API (see docs/serving.md):
- `build_replica(model, hardware, *, gpus, weight_dtype, kv_dtype, efficiency, calibration, max_batched_tokens)`
- `simulate(replica, *, prompt_tokens, output_tokens, rate_per_second, requests, seed, burstiness,
  replay_seconds, prefix_cached_fraction, slo, kv_policy, max_num_seqs) -> SimulationResult`
- `capacity_at_slo(model, hardware, *, prompt_tokens, output_tokens, slo, ...) -> CapacityResult`;
  `capacity_for_replica(replica, CapacitySearch(...))` and `converged_capacity(replica, CapacitySearch(...))`
- `throughput_interactivity_curve(replica, *, prompt_tokens, output_tokens, concurrency, ...)`
Serving modes (docs/serving-modes.md): `serving.speculative` / `serving.speculative_timer.speculative_replica`
(speculative decoding, MTP) and `serving.disaggregated` / `serving.disaggregated_capacity` (prefill/decode pools).
Token distributions are `costmodel.scenario.distributions` classes; SLO limits are `costmodel.scenario.slo`.
"""

from costmodel.serving.capacity import (
    CapacityResult,
    CapacitySearch,
    capacity_at_slo,
    capacity_for_replica,
    converged_capacity,
)
from costmodel.serving.curve import CurvePoint, throughput_interactivity_curve
from costmodel.serving.replica import MAX_NUM_SEQS, Replica, build_replica
from costmodel.serving.results import LatencySummary, QueueSeries, RequestTrace, SimulationResult
from costmodel.serving.simulation import MAX_REQUESTS, simulate, simulate_requests

__all__ = [
    "MAX_NUM_SEQS",
    "MAX_REQUESTS",
    "CapacityResult",
    "CapacitySearch",
    "CurvePoint",
    "LatencySummary",
    "QueueSeries",
    "Replica",
    "RequestTrace",
    "SimulationResult",
    "build_replica",
    "capacity_at_slo",
    "capacity_for_replica",
    "converged_capacity",
    "simulate",
    "simulate_requests",
    "throughput_interactivity_curve",
]
