"""An engine profile (`catalog/engines/<id>.yaml`) turned into the settings the simulator runs with.

The profile gives the scheduler defaults (sequence cap, token budget, KV policy), the per-request CPU cost
(added before the request reaches the scheduler, so it is a TTFT floor), the fixed per-step CPU cost and
the CPU cost per sequence in a step (`StepTimer.per_sequence_seconds`).
Explicit settings (CLI flags) win over the profile. `generic` reproduces the pre-profile numbers exactly:
256 sequences, 8192 tokens, preempt, no per-request cost, the accelerator row's step overhead.
Where a profile leaves a limit open (`None`): no sequence cap means the token budget caps it (every running
sequence needs one token of the step budget); no token budget (`naive`: the whole prompt in one pass) means
a budget of the longest prompt (at least `memory.MAX_BATCHED_TOKENS`), so no prompt is chunked.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.catalog.engines import GENERIC_ENGINE_ID, EngineProfile, load_engine
from costmodel.memory import MAX_BATCHED_TOKENS
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


def engine_settings(
    engine: EngineProfile | str = GENERIC_ENGINE_ID,
    *,
    longest_prompt_tokens: int = 1,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
    kv_policy: KvPolicy | None = None,
) -> EngineSettings:
    """The profile's settings; an explicit argument (not None) overrides the profile's value."""
    profile = load_engine(engine) if isinstance(engine, str) else engine
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
    )
