"""Disaggregated prefill/decode: separate prefill and decode pools, the KV cache sent between them.

A request goes to prefill instance i mod x (x prefill instances of `prefill.gpus` GPUs each), which computes
its prompt and the first token; its KV cache (prompt tokens x `MemoryPlan.kv_bytes_per_token`, the whole
model's bytes per token) then crosses the link to decode instance i mod y, which generates the rest. Each pool
runs the same continuous-batching engine (`simulate_requests`) with its own scheduler settings:
- prefill: the request with 1 output token (the engine finishes it at its first token);
- decode: the request arriving when its KV has landed, its prompt already in the KV cache (each request's own
  pages, charged per request, not shared) and N - 1 output tokens; its one computed prompt token stands for
  the first decode step, and it joins decode steps (mixed prefill and decode).
Where the client's first token comes from (`first_token`):
- "landed" (the default): the prefill pool's first token + the KV transfer (SGLang streams the first token from
  the decode side once the KV has landed);
- "decode": vLLM's P/D connectors behind their proxy (NIXL, MORI-IO) or NVIDIA Dynamo's PrefillRouter (it runs the
  prefill with max_tokens 1 and drops its output, lib/llm/src/kv_router/prefill_router.rs, ai-dynamo/dynamo
  commit 007ddea7), where the prefill request's one token is
  dropped and the decode instance computes the last prompt token and streams every token: TTFT = prefill queue +
  prefill + transfer + the decode instance's queue (a free running slot, `max_num_seqs`, and KV) + its first
  step (the vLLM MORI-IO post's 'TTFT = queue(prefill) + prefill_forward_pass + ... + RDMA transfer +
  queue(decode) + sample_T1 + ...', vllm-project/vllm-project.github.io _posts/2026-04-07-moriio-kv-connector.md,
  commit 1ff94aed); the decode pool then generates all N tokens.
E2E = the decode pool's last token; TPOT = (E2E - TTFT) / (N - 1). So TTFT is owned by the prefill pool (plus
the link) and TPOT by the decode pool: `ttft_owner`, `tpot_owner`.

The link (`kv_link`): inside one node (NVLink at the accelerator row's achieved rate) when one prefill and one
decode instance fit in a node, else the per-GPU NICs (`inter_node_bytes_per_s`); each GPU of the smaller
instance moves its share in parallel (one NIC per GPU, as on a DGX), plus one small-message latency per
transfer. Simplifications (docs/serving.md): round-robin routing; the prefill instance frees a request's KV at
its first token (not after the transfer); the transfer is not overlapped with the prefill layer by layer (an
upper bound on its TTFT share) and never queues behind another transfer on the link.

`decode_recomputes_prompt`: the decode instance has no KV connector, so nothing crosses the link and it computes
the whole prompt again (vLLM's engine core, given a request's kv_transfer_params without a connector: 'Got
kv_transfer_params, but no KVConnector found. Disabling KVTransfer for this request.', vllm-project/vllm
vllm/v1/engine/core.py). It gets the request when the prefill instance finishes and streams every token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from costmodel.catalog.links import CROSS_NODE_ALLREDUCE_LATENCY_SECONDS, intra_node_bytes_per_s
from costmodel.errors import CostmodelError
from costmodel.scenario.slo import SloLimit
from costmodel.serving.engine_io import KvPolicy
from costmodel.serving.replica import MAX_NUM_SEQS, Replica
from costmodel.serving.results import LatencySummary
from costmodel.serving.simulation import simulate_requests

KvLinkChoice = str  # "auto" | "intra-node" | "inter-node"
FirstToken = Literal["landed", "decode"]  # where the client's first token comes from (module docstring)


@dataclass(frozen=True, kw_only=True)
class KvLink:
    """What one request's KV transfer from a prefill to a decode instance runs over."""

    bytes_per_s: float  # all lanes together
    latency_seconds: float
    description: str


def kv_link(prefill: Replica, decode: Replica, *, choice: KvLinkChoice = "auto") -> KvLink:
    """The link between a prefill and a decode instance of `prefill.hardware` (module docstring)."""
    if choice not in ("auto", "intra-node", "inter-node"):
        raise CostmodelError(f"--kv-link must be auto, intra-node or inter-node (got {choice!r})")
    hw = prefill.hardware
    lanes = min(prefill.gpus, decode.gpus)
    per_node = hw.gpus_per_node
    inside = choice == "intra-node" or (choice == "auto" and per_node is not None
                                        and prefill.gpus + decode.gpus <= per_node)
    if inside:
        return KvLink(bytes_per_s=lanes * intra_node_bytes_per_s(hw), latency_seconds=hw.link_latency_seconds,
                      description=f"{hw.interconnect}, {lanes} GPUs in parallel")
    if hw.inter_node_bytes_per_s is None:
        raise CostmodelError(f"--kv-link: the catalog row '{hw.id}' cites no inter-node bandwidth, so a KV transfer "
                             "between nodes cannot be priced; pass --kv-link intra-node if both pools share a node")
    latency = hw.inter_node_latency_seconds or max(CROSS_NODE_ALLREDUCE_LATENCY_SECONDS, hw.link_latency_seconds)
    return KvLink(bytes_per_s=lanes * hw.inter_node_bytes_per_s, latency_seconds=latency,
                  description=f"{hw.inter_node}, {lanes} NICs in parallel")


@dataclass(frozen=True, kw_only=True)
class DisaggregatedLayout:
    """x prefill instances and y decode instances (xPyD) and the link between them."""

    prefill: Replica
    decode: Replica
    prefill_instances: int
    decode_instances: int
    link: KvLink
    decode_recomputes_prompt: bool = False  # no KV connector on the decode side (module docstring)

    def __post_init__(self) -> None:
        if self.prefill.model_id != self.decode.model_id:
            raise CostmodelError("the prefill and decode pools must serve the same model")
        if self.prefill_instances < 1 or self.decode_instances < 1:
            raise CostmodelError("--prefill-instances and --decode-instances must be >= 1")

    @property
    def gpus(self) -> int:
        """GPUs of the whole deployment."""
        return self.prefill_instances * self.prefill.gpus + self.decode_instances * self.decode.gpus

    @property
    def name(self) -> str:
        """xPyD with each pool's GPUs, e.g. '1P(8)2D(8)'."""
        return f"{self.prefill_instances}P({self.prefill.gpus}){self.decode_instances}D({self.decode.gpus})"

    def transfer_seconds(self, prompt_tokens: np.ndarray) -> np.ndarray:
        """KV transfer time per request: its prompt's KV bytes over the link, plus the link's latency."""
        bytes_ = np.asarray(prompt_tokens, dtype=np.float64) * self.prefill.memory.kv_bytes_per_token
        if self.decode_recomputes_prompt:
            return np.zeros_like(bytes_)
        return bytes_ / self.link.bytes_per_s + self.link.latency_seconds


def decode_pool_replica(decode: Replica, prompt_tokens: np.ndarray) -> Replica:
    """The decode replica as the engine sees it: each request's prompt KV charged to it (the engine's prefix
    cache would share it), no per-request CPU cost (paid on the prefill side), decode steps take the newcomer."""
    cached = np.maximum(np.asarray(prompt_tokens, dtype=np.float64) - 1.0, 0.0)
    per_token = decode.kv_bytes_per_token_per_gpu
    # simulate_requests takes a shared pool of the longest cached prefix out of the budget: give it back, and
    # charge every running request the mean prompt's KV instead (exact for fixed lengths).
    return replace(decode, kv_budget_bytes_per_gpu=decode.kv_budget_bytes_per_gpu + per_token * float(cached.max(initial=0.0)),
                   kv_bytes_per_sequence_per_gpu=decode.kv_bytes_per_sequence_per_gpu + per_token * float(cached.mean()),
                   request_overhead_seconds=0.0, mixed_prefill_decode=True)


@dataclass(frozen=True, kw_only=True)
class DisaggregatedResult:
    """One disaggregated deployment serving one request stream (latencies per request, s)."""

    layout: DisaggregatedLayout
    rate_per_second: float | None
    requests: int
    completed: int
    rejected: int
    duration_seconds: float
    ttft: LatencySummary
    tpot: LatencySummary
    e2e: LatencySummary
    prefill_ttft: LatencySummary  # first token on the prefill side, before the transfer
    kv_transfer: LatencySummary
    kv_transfer_bytes_mean: float
    output_tokens_per_second: float
    goodput_requests_per_second: float | None
    slo_attainment: float | None
    meets_slo: bool | None
    slo_limits: tuple[SloLimit, ...]
    prefill_mean_batch: float
    decode_mean_batch: float
    ttft_owner: str = "prefill"  # the pool whose queue and compute set TTFT (plus the KV link)
    tpot_owner: str = "decode"


def _pool_runs(replica: Replica, *, instances: int, order: np.ndarray, arrivals: np.ndarray, prompts: np.ndarray,
               outputs: np.ndarray, cached_fraction: float, kv_policy: KvPolicy, max_num_seqs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Run each instance of a pool on its round-robin share; per request: first token, finish, rejected."""
    n = len(arrivals)
    first, finish, rejected = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n, dtype=bool)
    batches = []
    for k in range(instances):
        ids = order[k::instances]
        if ids.size == 0:
            continue
        ids = ids[np.argsort(arrivals[ids], kind="stable")]
        run = simulate_requests(replica, arrival_seconds=arrivals[ids], prompt_tokens=prompts[ids],
                                output_tokens=outputs[ids], prefix_cached_fraction=cached_fraction,
                                kv_policy=kv_policy, max_num_seqs=replica.running_cap(max_num_seqs))
        first[ids], finish[ids] = run.trace.first_token_seconds, run.trace.finish_seconds
        rejected[ids] = run.trace.rejected
        batches.append(run.mean_batch)
    return first, finish, rejected, float(np.mean(batches)) if batches else 0.0


@dataclass(frozen=True, kw_only=True)
class DisaggregatedTimes:
    """Per request (arrival order): prefill-side first token, KV landed on the decode side, the client's first
    token (`first_token`), last token, rejected."""

    prefill_first_seconds: np.ndarray
    landed_seconds: np.ndarray
    first_token_seconds: np.ndarray
    finish_seconds: np.ndarray
    rejected: np.ndarray
    prefill_mean_batch: float
    decode_mean_batch: float


def disaggregated_times(
    layout: DisaggregatedLayout, *, arrival_seconds: np.ndarray, prompt_tokens: np.ndarray, output_tokens: np.ndarray,
    kv_policy: KvPolicy = "preempt", max_num_seqs: int = MAX_NUM_SEQS, prefix_cached_fraction: float = 0.0,
    first_token: FirstToken = "landed",
) -> DisaggregatedTimes:
    """When each arrival-sorted request gets its first token, its KV lands, and it finishes (module docstring)."""
    arrivals = np.asarray(arrival_seconds, dtype=np.float64)
    prompts, outputs = np.asarray(prompt_tokens, dtype=np.int64), np.asarray(output_tokens, dtype=np.int64)
    n = len(arrivals)
    everyone = np.arange(n)
    first, _, rejected, prefill_batch = _pool_runs(
        layout.prefill, instances=layout.prefill_instances, order=everyone, arrivals=arrivals, prompts=prompts,
        outputs=np.ones(n, dtype=np.int64), cached_fraction=prefix_cached_fraction, kv_policy=kv_policy,
        max_num_seqs=max_num_seqs)
    landed = first + layout.transfer_seconds(prompts)
    finish, client_first = landed.copy(), landed.copy()
    # "decode": the decode side generates all N tokens, its first step computing the last prompt token
    recompute = layout.decode_recomputes_prompt
    from_decode = first_token == "decode" or recompute
    decoding = everyone[((outputs > 0) if from_decode else (outputs > 1)) & ~rejected]
    decode_batch = 0.0
    if decoding.size:
        # recomputing: a plain engine serving the whole request, its own prompt pages and per-request cost
        pool = layout.decode if recompute else decode_pool_replica(layout.decode, prompts[decoding])
        decode_first, done, decode_rejected, decode_batch = _pool_runs(
            pool, instances=layout.decode_instances, order=decoding, arrivals=landed, prompts=prompts,
            outputs=outputs if from_decode else outputs - 1,
            cached_fraction=prefix_cached_fraction if recompute else 1.0, kv_policy=kv_policy,
            max_num_seqs=max_num_seqs)
        finish[decoding] = done[decoding]
        if from_decode:
            client_first[decoding] = decode_first[decoding]
        rejected |= decode_rejected
    return DisaggregatedTimes(prefill_first_seconds=first, landed_seconds=landed, first_token_seconds=client_first,
                              finish_seconds=finish, rejected=rejected, prefill_mean_batch=prefill_batch,
                              decode_mean_batch=decode_batch)


def simulate_disaggregated(
    layout: DisaggregatedLayout, *, arrival_seconds: np.ndarray, prompt_tokens: np.ndarray, output_tokens: np.ndarray,
    slo: Sequence[SloLimit] = (), kv_policy: KvPolicy = "preempt", max_num_seqs: int = MAX_NUM_SEQS,
    prefix_cached_fraction: float = 0.0, rate_per_second: float | None = None, first_token: FirstToken = "landed",
) -> DisaggregatedResult:
    """Serve arrival-sorted requests on the xPyD layout (module docstring); latencies per request."""
    arrivals = np.asarray(arrival_seconds, dtype=np.float64)
    prompts, outputs = np.asarray(prompt_tokens, dtype=np.int64), np.asarray(output_tokens, dtype=np.int64)
    n = len(arrivals)
    times = disaggregated_times(layout, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
                                kv_policy=kv_policy, max_num_seqs=max_num_seqs,
                                prefix_cached_fraction=prefix_cached_fraction, first_token=first_token)
    first, finish, rejected = times.prefill_first_seconds, times.finish_seconds, times.rejected
    transfer = layout.transfer_seconds(prompts)
    ttft = times.first_token_seconds - arrivals
    prefill_batch, decode_batch = times.prefill_mean_batch, times.decode_mean_batch
    ok = ~rejected & np.isfinite(finish)
    e2e = finish - arrivals
    many = ok & (outputs > 1)
    tpot = np.where(many, (e2e - ttft) / np.maximum(outputs - 1, 1), np.nan)
    limits = tuple(slo)
    values = {"ttft": np.where(ok, ttft, np.inf), "tpot": np.where(outputs > 1, np.where(ok, tpot, np.inf), np.nan),
              "e2e": np.where(ok, e2e, np.inf)}
    duration = max(float(np.nanmax(np.where(ok, finish, np.nan), initial=0.0)) - float(arrivals.min()), 1e-12)
    meets = None
    verdict = None
    if limits:
        meets = np.ones(n, dtype=bool)
        for limit in limits:
            metric = values[limit.metric]
            meets &= np.isnan(metric) | (metric <= limit.limit_seconds)
        verdict = all(float(np.percentile(values[lim.metric][~np.isnan(values[lim.metric])], lim.percentile))
                      <= lim.limit_seconds for lim in limits)
    return DisaggregatedResult(
        layout=layout, rate_per_second=rate_per_second, requests=n, completed=int(ok.sum()), rejected=int((~ok).sum()),
        duration_seconds=duration, ttft=LatencySummary.of(ttft[ok]), tpot=LatencySummary.of(tpot[many]),
        e2e=LatencySummary.of(e2e[ok]), prefill_ttft=LatencySummary.of((first - arrivals)[ok]),
        kv_transfer=LatencySummary.of(transfer[ok]),
        kv_transfer_bytes_mean=float(prompts.mean() * layout.prefill.memory.kv_bytes_per_token),
        output_tokens_per_second=float(outputs[ok].sum()) / duration,
        goodput_requests_per_second=None if meets is None else float(meets.sum()) / duration,
        slo_attainment=None if meets is None else float(meets.mean()), meets_slo=verdict, slo_limits=limits,
        prefill_mean_batch=prefill_batch, decode_mean_batch=decode_batch,
    )
