"""A mixed step prices attention per phase: the prefill chunk's and the decoders' attention add.

TensorRT-LLM's attention op runs the context requests' kernel and then the generation requests' kernel
(NVIDIA/TensorRT-LLM cpp/tensorrt_llm/thop/attentionOp.cpp @00dbe288, `runner->run(..., is_context=true)`
then `is_context=false`), so a step's attention takes max(compute, memory) of the chunk plus that of the
decoders, not max over their sum (`serving/engine_steps.py`). Checked against the roofline run on each
part alone, on Llama 3.1 8B fp8 on an H100 (a constant eff_compute there: no fp8 GEMM fit on sm_90, so the
parts' rates do not depend on the step's token count).
"""

from __future__ import annotations

import pytest

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.ops import StepWork, uniform_work
from costmodel.roofline import Efficiency, step_from_work
from costmodel.serving.engine_steps import mix_op_table, mixed_step_seconds
from costmodel.serving.steptime import StepTimer

CHUNK, CHUNK_CONTEXT = 2048, 0  # one fresh prompt chunk
DECODERS, DECODE_CONTEXT = 256, 2000  # decoding sequences, each one new token after this many cached


def _setup() -> tuple[StepTimer, ModelShape, AcceleratorSpec, Efficiency]:
    shape = derive_shape(load_model("llama-3.1-8b"))
    hardware = load_accelerator("h100-sxm")
    efficiency = Efficiency.from_accelerator(hardware)
    timer = StepTimer(shape, hardware, weight_dtype="fp8", kv_dtype="fp8", gpus=1, efficiency=efficiency,
                      max_tokens=CHUNK + DECODERS)
    return timer, shape, hardware, efficiency


def _attention(shape: ModelShape, hardware: AcceleratorSpec, work: StepWork,
               efficiency: Efficiency) -> tuple[float, float]:
    """(compute seconds, memory seconds) of the roofline's attention op on `work`."""
    result = step_from_work(shape, hardware, work, weight_dtype="fp8", kv_dtype="fp8", gpus=1,
                            efficiency=efficiency)
    op = next(op for op in result.ops if op.name == "attention")
    rate = hardware.peak_flops_per_s["fp8"] * efficiency.eff_compute
    return op.flops / rate, op.bytes / (hardware.hbm_bytes_per_s * efficiency.eff_memory)


def _engine_seconds(timer: StepTimer) -> float:
    return mixed_step_seconds(
        mix_op_table(timer), timer.chunk_cost((CHUNK, CHUNK_CONTEXT, True)), step_tokens=CHUNK + DECODERS,
        static_seconds=timer.static_seconds, seconds_per_flop=timer.seconds_per_flop,
        seconds_per_byte=timer.seconds_per_byte, per_sequence_seconds=0.0, chunks=1, below_f=float(DECODERS),
        context_below_f=float(DECODERS * DECODE_CONTEXT), n_above=0, context_above=0)


def test_mixed_step_adds_the_two_attention_phases() -> None:
    timer, shape, hardware, efficiency = _setup()
    chunk = uniform_work(shape, batch=1.0, new_tokens=float(CHUNK), context_tokens=float(CHUNK_CONTEXT))
    decode = uniform_work(shape, batch=float(DECODERS), new_tokens=1.0, context_tokens=float(DECODE_CONTEXT))
    logit_rows = 1.0 + DECODERS  # the chunk ends its prompt: one logit row, plus one per decoder
    summed = StepWork(tokens=chunk.tokens + decode.tokens, logit_rows=logit_rows,
                      full_pairs=chunk.full_pairs + decode.full_pairs, sliding_pairs=0.0,
                      full_cached_tokens=chunk.full_cached_tokens + decode.full_cached_tokens, sliding_cached_tokens=0.0)
    # The chunk's phase carries the step's per-token attention bytes (KV writes, q/o activations) of all
    # 2,304 tokens; the decoders' phase only what their cached contexts and (query, key) pairs add.
    chunk_phase = StepWork(tokens=summed.tokens, logit_rows=0.0, full_pairs=chunk.full_pairs, sliding_pairs=0.0,
                           full_cached_tokens=chunk.full_cached_tokens, sliding_cached_tokens=0.0)
    decode_phase = StepWork(tokens=0.0, logit_rows=0.0, full_pairs=decode.full_pairs, sliding_pairs=0.0,
                            full_cached_tokens=decode.full_cached_tokens, sliding_cached_tokens=0.0)
    a, b = _attention(shape, hardware, chunk_phase, efficiency)  # chunk: compute, memory
    c, d = _attention(shape, hardware, decode_phase, efficiency)  # decoders: compute, memory
    assert a > b and d > c  # the chunk's attention is compute-bound, the decoders' memory-bound
    combined = step_from_work(shape, hardware, summed, weight_dtype="fp8", kv_dtype="fp8", gpus=1,
                              efficiency=efficiency)
    old_attention = next(op.seconds for op in combined.ops if op.name == "attention")
    assert old_attention == pytest.approx(max(a + c, b + d), rel=1e-9)
    # Every other op, the overhead and the all-reduce are priced as the roofline prices the summed step;
    # attention becomes max(a, b) + max(c, d) = a + d.
    expected = combined.step_seconds - old_attention + a + d
    assert _engine_seconds(timer) == pytest.approx(expected, rel=1e-9)
    assert a + d > max(a + c, b + d)  # the phases no longer hide one under the other


def test_prefill_only_step_is_priced_as_before() -> None:
    """Without decoders the phased op is the roofline's attention of the chunk: the same step time."""
    timer, shape, hardware, efficiency = _setup()
    engine = mixed_step_seconds(
        mix_op_table(timer), timer.chunk_cost((CHUNK, CHUNK_CONTEXT, True)), step_tokens=CHUNK,
        static_seconds=timer.static_seconds, seconds_per_flop=timer.seconds_per_flop,
        seconds_per_byte=timer.seconds_per_byte, per_sequence_seconds=0.0, chunks=1, below_f=0.0,
        context_below_f=0.0, n_above=0, context_above=0)
    work = uniform_work(shape, batch=1.0, new_tokens=float(CHUNK), context_tokens=float(CHUNK_CONTEXT))
    roofline = step_from_work(shape, hardware, work, weight_dtype="fp8", kv_dtype="fp8", gpus=1,
                              efficiency=efficiency)
    assert engine == pytest.approx(roofline.step_seconds, rel=1e-9)
