"""`simulate --mode disaggregated` and `capacity --mode disaggregated` (+ `--search-ratio N`): xPyD pools.

Both build one prefill and one decode replica with the same flags as an aggregated run (engine, dtypes,
calibration, --spec-*), at --prefill-gpus / --decode-gpus GPUs each, and compose them with
`serving.disaggregated`. The `--json` objects keep simulate's and capacity's latency keys and add the layout,
the KV transfer and `latency_owner` (the pool that owns TTFT and TPOT).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from costmodel.cli.mode_args import mode_payload
from costmodel.cli.output import emit
from costmodel.scenario.distributions import TokenDistribution
from costmodel.scenario.slo import SloLimit
from costmodel.serving.capacity import CapacitySearch
from costmodel.serving.disaggregated import (
    DisaggregatedLayout,
    DisaggregatedResult,
    kv_link,
    simulate_disaggregated,
)
from costmodel.serving.disaggregated_capacity import best_ratio, disaggregated_capacity, limits_text
from costmodel.serving.replica import Replica
from costmodel.serving.simulation import arrival_times, draw_lengths, slo_limits
from costmodel.units import fmt_seconds

ReplicaBuilder = Callable[[argparse.Namespace], Replica]


def layout_from_args(args: argparse.Namespace, build: ReplicaBuilder) -> DisaggregatedLayout:
    """The xPyD layout the flags describe (pools default to --gpus GPUs per instance)."""
    prefill = build(argparse.Namespace(**{**vars(args), "gpus": args.prefill_gpus or args.gpus}))
    decode = build(argparse.Namespace(**{**vars(args), "gpus": args.decode_gpus or args.gpus}))
    return DisaggregatedLayout(prefill=prefill, decode=decode, prefill_instances=args.prefill_instances,
                               decode_instances=args.decode_instances, link=kv_link(prefill, decode, choice=args.kv_link))


def result_payload(result: DisaggregatedResult) -> dict[str, Any]:
    """simulate's latency keys for a disaggregated run, plus the layout and the transfer."""
    lay = result.layout
    payload: dict[str, Any] = {
        **mode_payload(lay.decode), "mode": "disaggregated", "layout": lay.name, "model": lay.prefill.model_id,
        "hardware": lay.prefill.hardware_id, "gpus": lay.gpus, "prefill_gpus": lay.prefill.gpus,
        "decode_gpus": lay.decode.gpus, "prefill_instances": lay.prefill_instances,
        "decode_instances": lay.decode_instances, "kv_link": lay.link.description,
        "rate_per_second": result.rate_per_second, "requests": result.requests, "completed": result.completed,
        "rejected": result.rejected, "duration_seconds": result.duration_seconds,
        "output_tokens_per_second": result.output_tokens_per_second,
        "goodput_requests_per_second": result.goodput_requests_per_second, "slo_attainment": result.slo_attainment,
        "meets_slo": result.meets_slo, "kv_transfer_bytes_mean": result.kv_transfer_bytes_mean,
        "prefill_mean_batch": result.prefill_mean_batch, "decode_mean_batch": result.decode_mean_batch,
        "latency_owner": {"ttft": result.ttft_owner, "tpot": result.tpot_owner},
    }
    for name, summary in (("ttft", result.ttft), ("tpot", result.tpot), ("e2e", result.e2e),
                          ("prefill_ttft", result.prefill_ttft), ("kv_transfer", result.kv_transfer)):
        for q in ("p50", "p90", "p99", "mean"):
            payload[f"{name}_{q}_seconds"] = getattr(summary, f"{q}_seconds")
    for limit in result.slo_limits:
        payload[f"slo_{limit.key}"] = limit.limit_seconds
    return payload


def _lines(result: DisaggregatedResult) -> list[str]:
    lay = result.layout
    return [
        f"{lay.prefill.model_id} on {lay.name} x {lay.prefill.hardware_id} ({lay.gpus} GPUs), KV over {lay.link.description}",
        f"  TTFT  p50 {fmt_seconds(result.ttft.p50_seconds)}  p90 {fmt_seconds(result.ttft.p90_seconds)}"
        f"  (owner: prefill pool {fmt_seconds(result.prefill_ttft.p50_seconds)} p50 + KV transfer"
        f" {fmt_seconds(result.kv_transfer.p50_seconds)} p50, {result.kv_transfer_bytes_mean / 1e6:,.1f} MB mean)",
        f"  TPOT  p50 {fmt_seconds(result.tpot.p50_seconds)}  p90 {fmt_seconds(result.tpot.p90_seconds)}  (owner: decode pool,"
        f" mean batch {result.decode_mean_batch:.1f})",
        f"  E2E   p50 {fmt_seconds(result.e2e.p50_seconds)}  p90 {fmt_seconds(result.e2e.p90_seconds)};"
        f" {result.output_tokens_per_second:,.0f} output tokens/s ({result.output_tokens_per_second / lay.gpus:,.0f} per GPU)",
    ]


def run_disaggregated_simulate(args: argparse.Namespace, build: ReplicaBuilder, *, prompt: TokenDistribution,
                               output: TokenDistribution, limits: list[SloLimit], replay: list[float] | None) -> int:
    """`simulate --mode disaggregated`."""
    layout = layout_from_args(args, build)
    requests = len(replay) if replay is not None else args.requests
    arrivals = arrival_times(requests=requests, rate_per_second=args.rate, burstiness=args.burstiness, seed=args.seed,
                             replay_seconds=replay)
    prompts, outputs = draw_lengths(prompt_tokens=prompt, output_tokens=output, requests=requests, seed=args.seed)
    result = simulate_disaggregated(layout, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
                                    slo=limits, kv_policy=args.kv_policy, max_num_seqs=args.max_num_seqs,
                                    prefix_cached_fraction=args.prefix_cached_fraction,
                                    rate_per_second=None if replay is not None else args.rate)
    lines = _lines(result)
    if limits and result.goodput_requests_per_second is not None:
        lines.append(f"  goodput {result.goodput_requests_per_second:.3g} requests/s within {limits_text(tuple(limits))};"
                     f" SLO {'met' if result.meets_slo else 'NOT met'}")
    emit(result_payload(result), as_json=args.json, text="\n".join(lines))
    return 0


def run_disaggregated_capacity(args: argparse.Namespace, build: ReplicaBuilder, *, search: CapacitySearch) -> int:
    """`capacity --mode disaggregated` (with `--search-ratio N`: the cheapest xPyD with x, y <= N)."""
    layout = layout_from_args(args, build)
    payload: dict[str, Any] = {}
    lines: list[str] = []
    if args.search_ratio:
        ratio = best_ratio(layout, search, max_instances=args.search_ratio)
        found = ratio.best
        payload["ratio_search"] = {
            "prefill_rate_per_instance": ratio.prefill_rate_per_instance,
            "decode_rate_per_instance": ratio.decode_rate_per_instance,
            "options": [{"layout": f"{o.prefill_instances}P{o.decode_instances}D", "gpus": o.gpus,
                         "estimated_rate_requests_per_second": o.estimated_rate_requests_per_second,
                         "gpus_per_request_per_second": o.gpus_per_request_per_second} for o in ratio.options],
        }
        lines.append(f"  pools alone: a prefill instance carries {ratio.prefill_rate_per_instance:.3g} requests/s at the"
                     f" TTFT limit, a decode instance {ratio.decode_rate_per_instance:.3g} at the TPOT limit")
        lines += [f"    {o.prefill_instances}P{o.decode_instances}D {o.gpus:3d} GPUs ~{o.estimated_rate_requests_per_second:7.3g}"
                  f" requests/s, {o.gpus_per_request_per_second:.3g} GPUs per request/s" for o in ratio.options[:5]]
    else:
        found = disaggregated_capacity(layout, search)
    if found is None:
        emit({**payload, "mode": "disaggregated", "feasible": False}, as_json=args.json,
             text="\n".join(["no xPyD layout meets the SLO", *lines]))
        return 0
    run = found.at_capacity
    payload.update(result_payload(run) if run is not None else {"mode": "disaggregated", "layout": found.layout.name})
    payload.update(feasible=found.feasible, reason=found.reason,
                   max_rate_requests_per_second=found.max_rate_requests_per_second,
                   output_tokens_per_second=found.output_tokens_per_second,
                   output_tokens_per_second_per_gpu=found.output_tokens_per_second_per_gpu,
                   saturation_rate_requests_per_second=found.saturation_rate_requests_per_second,
                   simulations=found.simulations, gpus=found.layout.gpus)
    head = (f"capacity {found.max_rate_requests_per_second:.3g} requests/s on {found.layout.name}"
            f" ({found.layout.gpus} GPUs, {found.max_rate_requests_per_second / found.layout.gpus:.3g} per GPU),"
            f" {found.output_tokens_per_second_per_gpu:,.0f} output tokens/s per GPU at {limits_text(slo_limits(search.slo))}"
            if found.feasible else f"infeasible: {found.reason}")
    text = [head, *(_lines(run) if run is not None else []), *lines]
    emit(payload, as_json=args.json, text="\n".join(text))
    return 0


