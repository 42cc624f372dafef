"""Capacity of a self-host option that names a serving mode (`speculation:`, `disaggregated:` in the scenario).

`with_option_speculation` turns the option's replica into a speculative one (serving/speculative_timer.py) and,
with `parallelism: dep`, into a DP-attention + expert-parallel one (serving/expert_parallel_timer.py).
`disaggregated_option_capacity` sizes one whole xPyD deployment (serving/disaggregated_capacity.py): the fleet
and cost machinery then count that deployment as one replica of `gpus_per_replica` GPUs, so both pools are
paid for, and `latency_owner` names the pool that owns p90 TTFT (prefill, plus the KV link) and TPOT (decode).
"""

from __future__ import annotations

from costmodel.config import ReplicaConfig
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.serving import build_replica
from costmodel.serving.analytic import Capacity
from costmodel.serving.capacity import CapacitySearch
from costmodel.serving.disaggregated import DisaggregatedLayout, kv_link
from costmodel.serving.disaggregated_capacity import disaggregated_capacity
from costmodel.serving.expert_parallel_timer import dep_replica
from costmodel.serving.profile import EngineSettings
from costmodel.serving.replica import Replica
from costmodel.serving.speculative import resolve_speculation
from costmodel.serving.speculative_timer import speculative_replica


def with_option_speculation(replica: Replica, option: SelfHostOption) -> Replica:
    """The replica with the option's `speculation:` and then its `parallelism: dep` applied (unchanged without)."""
    spec = option.speculation
    if spec is not None:
        speculation = resolve_speculation(model_id=option.model, method=spec.method, draft_tokens=spec.draft_tokens,
                                          acceptance_rates=spec.acceptance_rates, draft_model_id=spec.draft_model)
        replica = speculative_replica(replica, speculation)
    return dep_replica(replica) if option.parallelism == "dep" else replica


with_option_modes = with_option_speculation  # the name that says all it applies


def disaggregated_option_capacity(scenario: Scenario, option: SelfHostOption, *, config: ReplicaConfig,
                                  quick: Capacity, engine: EngineSettings, search: CapacitySearch) -> Capacity:
    """Requests/s one xPyD deployment of the option sustains inside the scenario's SLO."""
    layout_spec = option.disaggregated
    assert layout_spec is not None

    def pool(gpus: int) -> Replica:
        replica = build_replica(option.model, config.hardware, gpus=gpus, weight_dtype=config.weight_dtype,
                                kv_dtype=config.kv_dtype, efficiency=config.efficiency,
                                max_batched_tokens=engine.max_batched_tokens, engine=engine)
        return with_option_speculation(replica, option)

    prefill, decode = pool(layout_spec.prefill_gpus), pool(layout_spec.decode_gpus)
    layout = DisaggregatedLayout(prefill=prefill, decode=decode, prefill_instances=layout_spec.prefill_instances,
                                 decode_instances=layout_spec.decode_instances,
                                 link=kv_link(prefill, decode, choice=layout_spec.kv_link))
    result = disaggregated_capacity(layout, search)
    run = result.at_capacity
    if not result.feasible or run is None:
        return Capacity(feasible=False, reason=result.reason or "no load meets the SLO", requests_per_second=0.0,
                        batch=0, ttft_seconds=quick.ttft_seconds, tpot_seconds=quick.tpot_seconds,
                        prefill_time_fraction=quick.prefill_time_fraction, max_batch=quick.max_batch, method="simulator")
    owner = (f"TTFT: prefill pool ({layout.prefill_instances} x {prefill.gpus} GPUs, p90 "
             f"{run.prefill_ttft.p90_seconds:.3f} s) + KV transfer (p90 {run.kv_transfer.p90_seconds * 1e3:.1f} ms over "
             f"{layout.link.description}); TPOT: decode pool ({layout.decode_instances} x {decode.gpus} GPUs, mean "
             f"batch {run.decode_mean_batch:.0f})")
    reason = (f"meets the SLO at {result.max_rate_requests_per_second:.2f} requests/s per {layout.name} deployment "
              f"(simulated, disaggregated: TTFT p90 {run.ttft.p90_seconds:.3f} s, TPOT p90 "
              f"{run.tpot.p90_seconds * 1e3:.1f} ms)")
    return Capacity(feasible=True, reason=reason, requests_per_second=result.max_rate_requests_per_second,
                    batch=int(round(run.decode_mean_batch)), ttft_seconds=run.ttft.p90_seconds,
                    tpot_seconds=run.tpot.p90_seconds, prefill_time_fraction=quick.prefill_time_fraction,
                    max_batch=quick.max_batch, method="simulator", latency_owner=owner)
