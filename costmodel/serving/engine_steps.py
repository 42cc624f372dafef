"""Step-time arithmetic of the engine loop (`costmodel.serving.engine.run_engine`).

The layout of the per-op rows a mixed step sums (`mix_op_table`); a mixed step's seconds
(`mixed_step_seconds`); a decode-only segment's line a + b * j with its regime and arrival cuts
(`decode_segment`). The scheduling rules (who runs, KV, heaps) stay in the loop. Every float expression
keeps the operand order the loop had, so results are bit-for-bit the same. One call per step or segment
(moved out of the loop: callgrind of 20,000 requests, 2,490.1M -> 2,488.6M instructions); the arrival cut
stays inside `decode_segment` (a call per cut cost ~2%, callgrind, 20,000-30,000 requests).

Attention in a mixed step is priced per phase: the prefill chunks' attention (with the step's per-token terms)
and the decoding sequences' attention each take max(compute, memory), and the two add. Engines run them as
two kernels one after the other: TensorRT-LLM's attention op launches the context requests' kernel, then
the generation requests' (`runner->run(..., /*is_context=*/true, ...)` then `/*is_context=*/false`,
NVIDIA/TensorRT-LLM cpp/tensorrt_llm/thop/attentionOp.cpp @00dbe288, read 2026-12-02), so a chunk's
compute-bound attention does not hide under the decoders' KV reads. The weight GEMMs and the lm_head stay
one op over all the step's rows (one GEMM each). A step without decoders is priced as before.
"""

from __future__ import annotations

from math import ceil, sqrt

from costmodel.serving.lazy_tables import TokenTable
from costmodel.serving.steptime import StepTimer

# One dynamic op of a mixed step: the slots of its FLOPs and bytes in a chunk-work row, its FLOPs and bytes
# by step tokens, then FLOPs per (decoding sequence below the window, context token below, sequence above,
# context token above) and bytes per the same four, then whether its prefill and decode parts run apart.
_MixOp = tuple[int, int, TokenTable, TokenTable, float, float, float, float, float, float, float, float, bool]
PHASED_OPS = ("attention",)  # ops whose prefill-chunk and decode parts are separate kernels (module docstring)


def mix_op_table(timer: StepTimer) -> list[_MixOp]:
    """One row per dynamic op for a mixed step (the layout `_MixOp` names)."""
    return [
        (2 * k, 2 * k + 1, op.flops_by_tokens, op.bytes_by_tokens, f[0], f[1], f[2], f[3], m[0], m[1], m[2], m[3],
         op.name in PHASED_OPS)
        for k, (op, (f, m)) in enumerate(zip(timer.dynamic, timer.decode_coefficients, strict=True))
    ]


def _phased_seconds(chunk: tuple[float, float], decode: tuple[float, float], *, per_flop: float,
                    per_byte: float) -> float:
    """A phased op's seconds: max(compute, memory) of the chunks' part plus that of the decoders' part."""
    chunk_compute, chunk_memory = chunk[0] * per_flop, chunk[1] * per_byte
    decode_compute, decode_memory = decode[0] * per_flop, decode[1] * per_byte
    return max(chunk_compute, chunk_memory) + max(decode_compute, decode_memory)


def mixed_step_seconds(
    mix_ops: list[_MixOp], chunk_work: tuple[float, ...], *, step_tokens: int, static_seconds: TokenTable,
    seconds_per_flop: TokenTable, seconds_per_byte: float, per_sequence_seconds: float, chunks: int,
    below_f: float, context_below_f: float, n_above: int, context_above: int,
) -> float:
    """Seconds of one step with `chunks` prefill chunks (their costs `chunk_work`) + the decoding sequences."""
    per_flop = seconds_per_flop[step_tokens]  # effective s/FLOP at this many tokens
    seconds = static_seconds[step_tokens]
    if per_sequence_seconds:  # the profile's CPU cost per sequence in the step: decoders + chunks
        seconds += per_sequence_seconds * (below_f + n_above + chunks)
    for (
        flops_slot, bytes_slot, flops_by_tokens, bytes_by_tokens,
        flops_seq_below, flops_ctx_below, flops_seq_above, flops_ctx_above,
        bytes_seq_below, bytes_ctx_below, bytes_seq_above, bytes_ctx_above, phased,
    ) in mix_ops:
        if phased and (below_f or n_above):  # context and generation kernels one after the other
            decode_flops = flops_seq_below * below_f + flops_ctx_below * context_below_f
            decode_bytes = bytes_seq_below * below_f + bytes_ctx_below * context_below_f
            if n_above:
                decode_flops += flops_seq_above * n_above + flops_ctx_above * context_above
                decode_bytes += bytes_seq_above * n_above + bytes_ctx_above * context_above
            seconds += _phased_seconds(
                (flops_by_tokens[step_tokens] + chunk_work[flops_slot], bytes_by_tokens[step_tokens] + chunk_work[bytes_slot]),
                (decode_flops, decode_bytes), per_flop=per_flop, per_byte=seconds_per_byte)
            continue
        flops = (flops_by_tokens[step_tokens] + chunk_work[flops_slot] + flops_seq_below * below_f
                 + flops_ctx_below * context_below_f)
        bytes_ = (bytes_by_tokens[step_tokens] + chunk_work[bytes_slot] + bytes_seq_below * below_f
                  + bytes_ctx_below * context_below_f)
        if n_above:
            flops += flops_seq_above * n_above + flops_ctx_above * context_above
            bytes_ += bytes_seq_above * n_above + bytes_ctx_above * context_above
        compute_seconds = flops * per_flop
        memory_seconds = bytes_ * seconds_per_byte
        seconds += compute_seconds if compute_seconds >= memory_seconds else memory_seconds
    return seconds


def decode_segment(
    lines: tuple[tuple[float, ...], ...], *, static_seconds: float, steps: int, below_f: float, context_below_f: float,
    n_above: int, context_above: int, gap_seconds: float, cut_at_arrival: bool,
) -> tuple[float, float, int, float]:
    """(a, b, steps, seconds) of a decode-only segment of at most `steps` steps: step j lasts a + b * j.

    The segment is cut where an op changes regime (compute vs memory bound) and, with `cut_at_arrival`, at
    the first step that ends at or after `gap_seconds` (the next arrival, which can then be admitted)."""
    a = static_seconds
    b = 0.0
    for (
        compute0, compute_per_above, compute_per_ctx_below, compute_per_ctx_above,
        memory0, memory_per_above, memory_per_ctx_below, memory_per_ctx_above,
    ) in lines:
        compute0 += compute_per_ctx_below * context_below_f  # compute seconds at j = 0 ...
        memory0 += memory_per_ctx_below * context_below_f
        compute1, memory1 = compute_per_ctx_below * below_f, memory_per_ctx_below * below_f  # ... and per step
        if n_above:
            compute0 += compute_per_above * n_above + compute_per_ctx_above * context_above
            memory0 += memory_per_above * n_above + memory_per_ctx_above * context_above
            compute1 += compute_per_ctx_above * n_above
            memory1 += memory_per_ctx_above * n_above
        last = steps - 1  # cut the segment where the op changes regime (compute vs memory bound)
        if compute0 >= memory0:
            if compute0 + compute1 * last < memory0 + memory1 * last:
                steps = int((memory0 - compute0) / (compute1 - memory1)) + 1
                steps = steps if steps > 1 else 1
            a += compute0
            b += compute1
        else:
            if compute0 + compute1 * last >= memory0 + memory1 * last:
                steps = int((memory0 - compute0) / (compute1 - memory1)) + 1
                steps = steps if steps > 1 else 1
            a += memory0
            b += memory1
    half_b = 0.5 * b
    seconds = (a + half_b * (steps - 1)) * steps  # sum of a + b * j over j < steps
    # Stop once the next arrival can be admitted: at the first k steps that end at or after it. The end
    # grows with k (a > 0, b >= 0): k < steps only if the whole segment reaches it (the gap is inf).
    gap = gap_seconds
    if seconds >= gap and cut_at_arrival:
        # The fewest steps k >= 1 whose summed time (a + b (k - 1) / 2) k reaches the gap: the positive
        # root of (b/2) k^2 + (a - b/2) k - gap = 0 rounded up, then whole-step fixes for float
        # rounding; `end` is the segment's own expression for k steps (same bits). Inline here, not a
        # call of its own: a call per cut cost ~2% of a run (callgrind).
        if b > 0:
            half = a - half_b
            k = ceil((sqrt(half * half + 2.0 * b * gap) - half) / b)
        else:
            k = ceil(gap / a)
        k = k if k > 1 else 1
        while k > 1 and (a + half_b * (k - 2)) * (k - 1) >= gap:
            k -= 1
        end = (a + half_b * (k - 1)) * k
        while end < gap:
            k += 1
            end = (a + half_b * (k - 1)) * k
        if k < steps:  # (multi-step: an arrival waits for the window's end)
            steps, seconds = k, end
    return a, b, steps, seconds
