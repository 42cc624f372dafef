"""The fast engine equals a plain step-by-step simulator, request by request (1e-9 relative).

The reference below keeps every sequence's context explicitly, builds each step's StepWork by summing
`ops.uniform_work` per sequence and chunk, and times it with `roofline.step_from_work`: the one
formula, no tables, no segment jumps (in a step with prefill chunks and decoders, attention is priced per
phase, the chunks' then the decoders', as serving/engine_steps.py states). Same scheduling rules as the engine (documented in
docs/serving.md): decode first, then running prefills FCFS, then admissions FCFS (preempted first) while
the token budget, the sequence cap and KV memory allow; preempt the newest when decode tokens do not fit.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pytest

from costmodel.catalog.engines import load_engine
from costmodel.dtypes import precision_kwargs
from costmodel.ops import OP_NAMES, StepWork, op_flops_and_bytes, uniform_work
from costmodel.roofline import step_arrays_on, step_from_work
from costmodel.serving.engine import run_engine
from costmodel.serving.engine_io import EngineLimits
from costmodel.serving.profile import engine_settings
from costmodel.serving.replica import Replica, build_replica

FIELDS = ("tokens", "logit_rows", "full_pairs", "sliding_pairs", "full_cached_tokens", "sliding_cached_tokens")


@dataclasses.dataclass
class Seq:
    rid: int
    pre: int  # tokens this prefill computes
    done: int = 0  # of them computed
    context: int = 0  # decode: tokens in KV
    left: int = 0
    decoding: bool = False


ATTENTION = OP_NAMES.index("attention")


def _phased_step_seconds(replica: Replica, total: StepWork, phases: list[StepWork]) -> float:
    """The roofline step on `total` with its attention op replaced by max(compute, memory) of each phase,
    summed (the engine's mixed step, serving/engine_steps.py), at the attention rate of the whole step."""
    hardware, eff = replica.hardware, replica.efficiency
    raw = step_arrays_on(replica.shape, hardware, total, weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype,
                         gpus=replica.gpus, eff=eff)
    precision = precision_kwargs(hardware.op_precision(weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype))
    rate, bytes_per_s = float(raw.op_flops_per_s[ATTENTION]), hardware.hbm_bytes_per_s * eff.eff_memory
    attention = 0.0
    for phase in phases:
        flops, bytes_ = op_flops_and_bytes(
            replica.shape, phase, weight_bytes_per_param=precision["weight_bytes_per_param"],
            kv_bytes_per_element=precision["kv_bytes_per_element"], gpus=float(replica.gpus),
            lm_head_weight_bytes_per_param=precision["lm_head_weight_bytes_per_param"])
        attention += max(float(flops[ATTENTION]) / rate, float(bytes_[ATTENTION]) / bytes_per_s)
    return float(raw.step_seconds) - float(raw.op_seconds[ATTENTION]) + attention


def reference(replica: Replica, *, arrival, prompt, cached, output, limits: EngineLimits):
    n = len(arrival)
    admitted, first, finish = [math.nan] * n, [math.nan] * n, [math.nan] * n
    left = [int(o) for o in output]
    pre = [int(p) - int(c) for p, c in zip(prompt, cached, strict=True)]
    waiting: list[int] = []
    running: list[Seq] = []  # admission order
    now, ia, done, preemptions = 0.0, 0, 0, 0
    kvt, kvs, cap = limits.kv_bytes_per_token, limits.kv_bytes_per_sequence, limits.kv_capacity_bytes
    reserve = limits.kv_policy == "reserve"
    charge: dict[int, float] = {}
    window_left = 0  # multi-step scheduling: decode steps before the scheduler runs again

    def kv_in_use() -> float:
        if reserve:
            return sum(charge[s.rid] for s in running)
        return sum(kvs + kvt * (s.context - int(cached[s.rid])) if s.decoding else charge[s.rid] for s in running)

    while done < n:
        while ia < n and arrival[ia] <= now:
            waiting.append(ia)
            ia += 1
        if not running and not waiting:
            now = float(arrival[ia])
            continue
        decoders = [s for s in running if s.decoding]
        while not reserve and kv_in_use() + kvt * len(decoders) > cap:
            victim = running.pop()
            if victim.decoding:
                left[victim.rid] = victim.left
                pre[victim.rid] = victim.context + 1 - int(cached[victim.rid])
            waiting.insert(0, victim.rid)
            preemptions += 1
            decoders = [s for s in running if s.decoding]
        budget = limits.max_batched_tokens - (len(decoders) if limits.mixed_prefill_decode else 0)
        if not decoders:
            window_left = 0
        if window_left > 0:  # mid-window: no prefill, no admission; one token per decoder
            budget = 0
        chunks = []
        for s in running:
            if not s.decoding and budget > 0:
                size = min(s.pre - s.done, budget)
                chunks.append((s, size))
                budget -= size
        while budget > 0 and waiting and len(running) < limits.max_num_seqs:
            rid = waiting[0]
            need = kvs + kvt * (pre[rid] + (left[rid] if reserve else 0))
            base = kv_in_use() + (0.0 if reserve else kvt * len(decoders))
            if base + need > cap:
                break
            waiting.pop(0)
            charge[rid] = need
            if math.isnan(admitted[rid]):
                admitted[rid] = now
            seq = Seq(rid=rid, pre=pre[rid], left=left[rid])
            running.append(seq)
            size = min(seq.pre, budget)
            chunks.append((seq, size))
            budget -= size
        if chunks and not limits.mixed_prefill_decode:
            decoders = []  # a prefill-only step: the decoding sequences wait and emit nothing
        parts = [uniform_work(replica.shape, batch=1.0, new_tokens=1.0, context_tokens=float(s.context)) for s in decoders]
        decode_totals = {f: sum(float(getattr(p, f)) for p in parts) for f in FIELDS}
        chunk_totals = dict.fromkeys(FIELDS, 0.0)
        for seq, size in chunks:
            work = uniform_work(replica.shape, batch=1.0, new_tokens=float(size),
                                context_tokens=float(int(cached[seq.rid]) + seq.done))
            for f in FIELDS:
                chunk_totals[f] += float(getattr(work, f))
            chunk_totals["logit_rows"] -= 0.0 if seq.done + size == seq.pre else 1.0
        totals = {f: decode_totals[f] + chunk_totals[f] for f in FIELDS}
        if chunks and decoders:  # attention per phase: the chunks' (with every token's terms), then the decoders'
            seconds = _phased_step_seconds(replica, StepWork(**totals), [
                StepWork(**{**chunk_totals, "tokens": totals["tokens"]}),
                StepWork(**{**decode_totals, "tokens": 0.0})])
        else:
            seconds = step_from_work(
                replica.shape, replica.hardware, StepWork(**totals), weight_dtype=replica.weight_dtype,
                kv_dtype=replica.kv_dtype, gpus=replica.gpus, efficiency=replica.efficiency,
            ).step_seconds
        # The engine profile's CPU cost per sequence in the step (decoders that emit + prefill chunks).
        seconds += replica.timer.per_sequence_seconds * (len(decoders) + len(chunks))
        now += seconds
        if not chunks and limits.scheduler_steps > 1:  # a decode-only step uses up one step of the window
            window_left = (window_left or limits.scheduler_steps) - 1
        for s in decoders:
            s.context += 1
            s.left -= 1
            if s.left == 0:
                running.remove(s)
                finish[s.rid] = now
                done += 1
        for seq, size in chunks:
            seq.done += size
            if seq.done < seq.pre:
                continue
            seq.left -= 1
            if math.isnan(first[seq.rid]):
                first[seq.rid] = now
            if seq.left == 0:
                running.remove(seq)
                finish[seq.rid] = now
                done += 1
            else:
                seq.decoding, seq.context = True, int(cached[seq.rid]) + seq.pre
    return np.array(admitted), np.array(first), np.array(finish), preemptions


CASES = {
    # name: (model, hardware, budget, kv capacity as a share of the budget, policy, prefix share)
    "dense-roomy": ("llama-3.1-8b", "h100-sxm", 8192, 1.0, "preempt", 0.0),
    "dense-chunked-tight-kv": ("llama-3.1-8b", "h100-sxm", 256, 2e-4, "preempt", 0.3),
    "dense-reserve-tight-kv": ("llama-3.1-8b", "h100-sxm", 512, 2e-4, "reserve", 0.0),
    "moe-sliding-window": ("gpt-oss-20b", "h100-sxm", 1024, 1.0, "preempt", 0.0),
    # Every layer sliding: KV per sequence is capped at the window, so memory binds admission, never growth.
    "window-all-layers-capped": ("mistral-7b", "a100-80gb", 300, 3e-4, "preempt", 0.2),
}


@dataclass(frozen=True)
class Requests:
    """Random requests for one case: arrivals (s), prompt/cached/output tokens, and a KV capacity (bytes per
    GPU) of `kv_share` of the budget but never below the largest single request (as simulate_requests
    guarantees by rejecting the rest)."""

    arrival: np.ndarray
    prompt: np.ndarray
    cached: np.ndarray
    output: np.ndarray
    kv_capacity_bytes: float


def _requests(replica: Replica, *, seed: int, n: int, span_seconds: float, prefix: float, kv_share: float) -> Requests:
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.uniform(0.0, span_seconds, size=n))
    prompt = rng.integers(20, 400, size=n)
    output = rng.integers(1, 90, size=n)
    cached = np.minimum(np.floor(prefix * prompt).astype(np.int64), prompt - 1)
    need = replica.kv_bytes_per_sequence_per_gpu + replica.kv_bytes_per_token_per_gpu * (prompt - cached + output)
    cap = max(replica.kv_budget_bytes_per_gpu * kv_share, float(need.max()))
    return Requests(arrival, prompt, cached, output, cap)


def _limits(replica: Replica, requests: Requests, *, budget: int, policy: str, **extra: object) -> EngineLimits:
    return EngineLimits(
        max_batched_tokens=budget, max_num_seqs=min(32, budget), kv_capacity_bytes=requests.kv_capacity_bytes,
        kv_bytes_per_token=replica.kv_bytes_per_token_per_gpu, kv_bytes_per_sequence=replica.kv_bytes_per_sequence_per_gpu,
        kv_policy=policy, max_events=10**6, **extra,  # type: ignore[arg-type]
    )


def _run_checked(replica: Replica, requests: Requests, limits: EngineLimits):  # type: ignore[no-untyped-def]
    """The fast loop's trace, after checking it against `reference` request by request (1e-9 relative)."""
    r = requests
    fast = run_engine(replica.timer, arrival_seconds=r.arrival, prompt_tokens=r.prompt, cached_tokens=r.cached,
                      output_tokens=r.output, limits=limits)
    admitted, first, finish, preemptions = reference(replica, arrival=r.arrival, prompt=r.prompt, cached=r.cached,
                                                     output=r.output, limits=limits)
    np.testing.assert_allclose(fast.admitted_seconds, admitted, rtol=1e-9)
    np.testing.assert_allclose(fast.first_token_seconds, first, rtol=1e-9)
    np.testing.assert_allclose(fast.finish_seconds, finish, rtol=1e-9)
    assert fast.preemptions == preemptions
    return fast


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_matches_step_by_step_reference(name: str) -> None:
    model, hardware, budget, kv_share, policy, prefix = CASES[name]
    replica = build_replica(model, hardware, max_batched_tokens=budget)
    requests = _requests(replica, seed=7, n=60, span_seconds=1.5, prefix=prefix, kv_share=kv_share)
    fast = _run_checked(replica, requests, _limits(replica, requests, budget=budget, policy=policy))
    if name == "dense-chunked-tight-kv":
        assert fast.preemptions > 0  # the case exercises preemption and recompute
    # The engine jumps over decode-only stretches: far fewer loop iterations than steps.
    assert fast.events < fast.steps or name != "dense-roomy"


@pytest.mark.parametrize("name", ["dense-roomy", "dense-chunked-tight-kv", "moe-sliding-window"])
def test_multi_step_scheduling_matches_the_reference(name: str) -> None:
    # vLLM v0.6 `--num-scheduler-steps 10`: admissions and prefill chunks only at the end of a 10-step
    # decode window (or when nothing decodes). The fast loop must agree with the step-by-step rule.
    model, hardware, budget, kv_share, policy, prefix = CASES[name]
    replica = build_replica(model, hardware, max_batched_tokens=budget)
    requests = _requests(replica, seed=11, n=50, span_seconds=1.0, prefix=prefix, kv_share=kv_share)
    one, ten = (_run_checked(replica, requests, _limits(replica, requests, budget=budget, policy=policy,
                                                         scheduler_steps=steps)) for steps in (1, 10))
    # Waiting for the window's end delays first tokens on average (TTFT grows).
    arrival = requests.arrival
    assert np.nanmean(ten.first_token_seconds - arrival) > np.nanmean(one.first_token_seconds - arrival)


@pytest.mark.parametrize("name", ["dense-roomy", "dense-chunked-tight-kv", "dense-reserve-tight-kv", "moe-sliding-window"])
def test_prefill_only_steps_match_the_reference(name: str) -> None:
    # SGLang's default (mixed_prefill_decode false): a step with prefill work runs only prefill, and the
    # decoding sequences wait for it. The fast loop must agree with the step-by-step rule.
    model, hardware, budget, kv_share, policy, prefix = CASES[name]
    replica = build_replica(model, hardware, max_batched_tokens=budget)
    requests = _requests(replica, seed=5, n=50, span_seconds=1.0, prefix=prefix, kv_share=kv_share)
    mixed, alone = (_run_checked(replica, requests, _limits(replica, requests, budget=budget, policy=policy,
                                                             mixed_prefill_decode=flag)) for flag in (True, False))

    # Decoders pausing for every prefill: output takes longer after the first token (TPOT grows).
    def decode_seconds(trace):  # type: ignore[no-untyped-def]
        return np.nanmean(trace.finish_seconds - trace.first_token_seconds)
    assert decode_seconds(alone) > decode_seconds(mixed)


@pytest.mark.parametrize("mixed", [True, False])
@pytest.mark.parametrize("name", ["dense-roomy", "dense-chunked-tight-kv", "dense-reserve-tight-kv", "moe-sliding-window"])
def test_per_sequence_step_overhead_matches_the_reference(name: str, mixed: bool) -> None:
    # An engine profile's step_overhead_seconds_per_sequence (CPU per sequence per step: sampling,
    # detokenize, streaming): the fast loop (in its decode tables and mixed steps) must charge it as the
    # step-by-step rule does: per decoding sequence that emits plus per prefill chunk, every step.
    model, hardware, budget, kv_share, policy, prefix = CASES[name]
    profile = load_engine("generic").model_copy(update={"id": "test-per-seq", "max_num_batched_tokens": budget,
                                                         "step_overhead_seconds_per_sequence": 40e-6})
    replica = build_replica(model, hardware, engine=engine_settings(profile))
    assert replica.timer.per_sequence_seconds == 40e-6
    requests = _requests(replica, seed=13, n=50, span_seconds=1.0, prefix=prefix, kv_share=kv_share)
    limits = _limits(replica, requests, budget=budget, policy=policy, mixed_prefill_decode=mixed)
    fast = _run_checked(replica, requests, limits)
    # And it costs time: the same requests without it finish sooner.
    r = requests
    bare = run_engine(build_replica(model, hardware, max_batched_tokens=budget).timer, arrival_seconds=r.arrival,
                      prompt_tokens=r.prompt, cached_tokens=r.cached, output_tokens=r.output, limits=limits)
    assert np.nanmax(bare.finish_seconds) < np.nanmax(fast.finish_seconds)


def test_long_prompts_among_decoders_match_the_reference() -> None:
    # 2,000-4,000-token prompts chunked into steps beside decoding sequences at long contexts: the chunks'
    # attention is compute-bound while the decoders' is memory-bound, so pricing attention per phase (not
    # max over the summed work) moves the step times; the fast loop must agree with the step-by-step rule.
    replica = build_replica("qwen3-30b-a3b", "h100-sxm", max_batched_tokens=2048)
    rng = np.random.default_rng(3)
    n = 40
    prompt = rng.integers(2000, 4000, size=n)
    requests = Requests(arrival=np.sort(rng.uniform(0.0, 2.0, size=n)), prompt=prompt, cached=np.zeros(n, np.int64),
                        output=rng.integers(50, 200, size=n), kv_capacity_bytes=replica.kv_budget_bytes_per_gpu)
    _run_checked(replica, requests, _limits(replica, requests, budget=2048, policy="reserve"))
