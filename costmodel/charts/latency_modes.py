"""The Latency page's data for a disaggregated self-host option: one whole xPyD deployment under load.

The same figure `compare` and the memo print (`decision.mode_capacity`: capacity of the deployment at the SLO,
the decision's request count and tolerance), then the composed simulation (`serving.disaggregated`) at shares of
its saturation rate. No throughput-vs-interactivity curve: its closed loops of c users are defined for one
replica's scheduler, not for two pools.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from costmodel.charts.latency import LoadPoint, OptionLatency, capacity_search_slos
from costmodel.decision.mode_capacity import with_option_speculation
from costmodel.scenario import SelfHostOption, Slo, Workload
from costmodel.serving.capacity import CONVERGE_RATE_TOLERANCE, CONVERGE_START_REQUESTS, CapacitySearch
from costmodel.serving.disaggregated import DisaggregatedLayout, kv_link, simulate_disaggregated
from costmodel.serving.disaggregated_capacity import disaggregated_capacity
from costmodel.serving.profile import engine_settings
from costmodel.serving.replica import build_replica
from costmodel.serving.simulation import arrival_times, draw_lengths


def serving_mode_text(option: SelfHostOption) -> str:
    """'aggregated, tensor parallel 8 GPUs', 'disaggregated 1P(8)1D(8), DEP pools + mtp (1 draft token)': the serving
    mode an option runs, for the Latency page's summary."""
    spec = option.disaggregated
    layout = "DP attention + expert parallel" if option.parallelism == "dep" else "tensor parallel"
    if spec is None:
        text = f"aggregated, {layout} over {option.gpus_per_replica} GPUs"
    else:
        text = (f"disaggregated {spec.prefill_instances}P({spec.prefill_gpus}){spec.decode_instances}D"
                f"({spec.decode_gpus}), {layout} pools")
    speculation = option.speculation
    if speculation is not None:
        tokens = speculation.draft_tokens or (len(speculation.acceptance_rates) if speculation.acceptance_rates else 1)
        text += f" + {speculation.method} ({tokens} draft token{'s' if tokens != 1 else ''})"
    return text


def disaggregated_latency(option: SelfHostOption, workload: Workload, slo: Slo, *, requests: int,
                          load_fractions: Sequence[float], seed: int) -> OptionLatency:
    """Capacity at the SLO and percentiles over arrival rates of one xPyD deployment of `option`."""
    spec = option.disaggregated
    assert spec is not None
    engine = engine_settings(option.engine, longest_prompt_tokens=math.ceil(workload.mean_prompt_tokens()))

    def pool(gpus: int):  # type: ignore[no-untyped-def]
        replica = build_replica(option.model, option.hardware, gpus=gpus, weight_dtype=option.weight_dtype,
                                kv_dtype=option.kv_dtype, engine=engine)
        return with_option_speculation(replica, option)

    prefill, decode = pool(spec.prefill_gpus), pool(spec.decode_gpus)
    layout = DisaggregatedLayout(prefill=prefill, decode=decode, prefill_instances=spec.prefill_instances,
                                 decode_instances=spec.decode_instances, link=kv_link(prefill, decode, choice=spec.kv_link))
    cached = min(workload.cached_prompt_fraction, 0.99)
    for search_slo in capacity_search_slos(slo, engine=option.engine):  # the decision's (tightened) limits
        capacity = disaggregated_capacity(layout, CapacitySearch(
            prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens, slo=search_slo,
            prefix_cached_fraction=cached, requests=CONVERGE_START_REQUESTS, rate_tolerance=CONVERGE_RATE_TOLERANCE,
            kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs))
        if capacity.feasible:
            break
    prompts, outputs = draw_lengths(prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens,
                                    requests=requests, seed=seed)
    saturation = capacity.saturation_rate_requests_per_second
    rates = {saturation * f for f in load_fractions if saturation > 0}
    if capacity.feasible:
        rates.add(capacity.max_rate_requests_per_second)
    load = []
    for rate in sorted(rates):
        arrivals = arrival_times(requests=requests, rate_per_second=rate, burstiness=1.0, seed=seed)
        run = simulate_disaggregated(layout, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
                                     slo=slo.limits(), kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs,
                                     prefix_cached_fraction=cached, rate_per_second=rate)
        load.append(LoadPoint(
            rate_requests_per_second=rate, ttft_p50_seconds=run.ttft.p50_seconds, ttft_p90_seconds=run.ttft.p90_seconds,
            ttft_p99_seconds=run.ttft.p99_seconds, tpot_p50_seconds=run.tpot.p50_seconds,
            tpot_p90_seconds=run.tpot.p90_seconds, tpot_p99_seconds=run.tpot.p99_seconds,
            e2e_p90_seconds=run.e2e.p90_seconds, output_tokens_per_second=run.output_tokens_per_second,
            meets_slo=bool(run.meets_slo)))
    owner = "" if capacity.at_capacity is None else (
        f"TTFT: prefill pool + KV transfer (p90 {float(np.nan_to_num(capacity.at_capacity.kv_transfer.p90_seconds)) * 1e3:.1f}"
        f" ms); TPOT: decode pool")
    return OptionLatency(
        name=option.name, model_id=option.model, hardware_id=option.hardware, gpus=layout.gpus,
        feasible=capacity.feasible, reason=capacity.reason, capacity_requests_per_second=capacity.max_rate_requests_per_second,
        saturation_requests_per_second=saturation, load=tuple(load), curve=(), slo_limits=slo.limits(),
        requests_per_simulation=requests, efficiency_source=prefill.efficiency.source, latency_owner=owner,
        search_slo_limits=search_slo.limits(),
    )
