"""An engine profile (`catalog/engines/<id>.yaml`) turned into the settings the simulator runs with.

The profile gives the scheduler defaults (sequence cap, token budget, KV policy), the per-request CPU cost
(added before the request reaches the scheduler, so it is a TTFT floor), the fixed per-step CPU cost and
the CPU cost per sequence in a step (`StepTimer.per_sequence_seconds`), the streaming granularity (ITL) and the
rule that sizes the KV cache (`memory.reserve_bytes`).
Explicit settings (CLI flags) win over the profile. `generic` reproduces the pre-profile numbers exactly:
256 sequences, 8192 tokens, preempt, no per-request cost, the accelerator row's step overhead.
Where a profile leaves a limit open (`None`): no sequence cap means the token budget caps it (every running
sequence needs one token of the step budget); no token budget (`naive`: the whole prompt in one pass) means
a budget of the longest prompt (at least `memory.MAX_BATCHED_TOKENS`), so no prompt is chunked.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.catalog.engines import GENERIC_ENGINE_ID, EngineProfile, load_engine
from costmodel.errors import CostmodelError
from costmodel.memory import DEFAULT_KV_MEMORY_FRACTION, MAX_BATCHED_TOKENS, KvMemoryRule
from costmodel.scenario.options import SelfHostOption
from costmodel.serving.engine_io import KvPolicy


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """What one engine profile (plus any explicit overrides) sets on a simulated replica."""

    engine_id: str
    max_num_seqs: int
    max_batched_tokens: int
    kv_policy: KvPolicy
    request_overhead_seconds: float
    step_overhead_seconds: float | None  # None = the accelerator row's (or a calibration's) overhead
    comm_overlap_fraction: float  # share of TP all-reduce time hidden (profile tp_comm_overlap_fraction)
    mixed_prefill_decode: bool = True  # False: prefill-only steps, decoders wait (profile mixed_prefill_decode)
    # CPU s per sequence scheduled in a step (sampling, detokenize, stream), on top of the fixed step overhead
    step_overhead_seconds_per_sequence: float = 0.0
    # Multi-step scheduling (vLLM v0.6 --num-scheduler-steps): the scheduler runs once per this many decode steps
    scheduler_steps: int = 1
    streaming_tokens_per_chunk: int = 1  # tokens per streamed chunk after the first (profile stream interval)
    kv_memory_rule: KvMemoryRule = "total_fraction"  # how the KV cache is sized (memory.reserve_bytes)
    kv_memory_fraction: float = DEFAULT_KV_MEMORY_FRACTION  # vLLM gpu_memory_utilization / TRT-LLM free fraction


def engine_settings(
    engine: EngineProfile | str = GENERIC_ENGINE_ID,
    *,
    longest_prompt_tokens: int = 1,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
    kv_policy: KvPolicy | None = None,
    scheduler_steps: int | None = None,
    gpu_memory_utilization: float | None = None,
) -> EngineSettings:
    """The profile's settings; an explicit argument (not None) overrides the profile's value.

    `gpu_memory_utilization` replaces the profile's `kv_memory_fraction` under the profile's own rule: vLLM's
    share of all HBM, TensorRT-LLM's share of the memory the weights leave (free_gpu_memory_fraction).
    `scheduler_steps` > 1 is multi-step scheduling (no bundled profile uses it: vLLM V1 dropped it).
    """
    profile = load_engine(engine) if isinstance(engine, str) else engine
    check_scheduler_overrides(scheduler_steps=scheduler_steps, gpu_memory_utilization=gpu_memory_utilization)
    budget = max_batched_tokens or profile.max_num_batched_tokens or max(MAX_BATCHED_TOKENS, longest_prompt_tokens)
    sequences = max_num_seqs or min(profile.max_num_seqs or budget, budget)
    return EngineSettings(
        engine_id=profile.id,
        max_num_seqs=sequences,
        max_batched_tokens=budget,
        kv_policy=kv_policy or profile.kv_policy,
        request_overhead_seconds=profile.request_overhead_seconds,
        step_overhead_seconds=profile.step_overhead_seconds,
        comm_overlap_fraction=profile.tp_comm_overlap_fraction,
        mixed_prefill_decode=profile.mixed_prefill_decode,
        step_overhead_seconds_per_sequence=profile.step_overhead_seconds_per_sequence,
        scheduler_steps=scheduler_steps or 1,
        streaming_tokens_per_chunk=profile.streaming_tokens_per_chunk,
        kv_memory_rule=profile.kv_memory_rule,
        kv_memory_fraction=profile.kv_memory_fraction if gpu_memory_utilization is None else gpu_memory_utilization,
    )


MAX_SCHEDULER_STEPS = 1024


def option_engine_settings(option: SelfHostOption, *, longest_prompt_tokens: int) -> EngineSettings:
    """A scenario self-host option's engine profile with the scheduler settings the option sets over it."""
    return engine_settings(option.engine, longest_prompt_tokens=longest_prompt_tokens, max_num_seqs=option.max_num_seqs,
                           max_batched_tokens=option.max_batched_tokens, scheduler_steps=option.scheduler_steps,
                           gpu_memory_utilization=option.gpu_memory_utilization)


def check_scheduler_overrides(*, scheduler_steps: int | None, gpu_memory_utilization: float | None) -> None:
    """Refuse a scheduler-step count or memory fraction no engine accepts (CostmodelError naming the field)."""
    if scheduler_steps is not None and (isinstance(scheduler_steps, bool) or not isinstance(scheduler_steps, int)
                                        or not 1 <= scheduler_steps <= MAX_SCHEDULER_STEPS):
        raise CostmodelError(f"scheduler_steps (--scheduler-steps) must be an integer in 1..{MAX_SCHEDULER_STEPS} "
                             f"(got {scheduler_steps!r}); 1 = a scheduling decision every step")
    if gpu_memory_utilization is not None and not (isinstance(gpu_memory_utilization, int | float)
                                                   and 0.05 <= gpu_memory_utilization <= 1.0):
        raise CostmodelError(f"gpu_memory_utilization (--gpu-memory-utilization) must be a fraction in 0.05..1 "
                             f"(got {gpu_memory_utilization!r}); engines default to 0.9")
