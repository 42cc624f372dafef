"""The simulator's fast step timer equals roofline.step_from_work on random mixes (1e-9 relative).

Mixes: prefill chunks (any length, any cached context, ending the prompt or not) plus decode sequences at
random contexts, summed into one StepWork with `ops.uniform_work`, as DESIGN.md defines a step.
Models cover dense GQA, MoE (nonlinear expert-touch term), MLA, sliding windows (some or all layers),
weight-only int4, fp8, fp4 (ops at three peaks) and tensor parallelism.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.ops import StepWork, uniform_work
from costmodel.roofline import Efficiency, step_from_work
from costmodel.serving.steptime import FIELDS, StepTimer

CONFIGS = [
    ("llama-3.1-8b", "h100-sxm", 1, "bf16", "bf16", None),
    ("llama-3.1-70b", "h100-sxm", 4, "fp8", "fp8", None),
    ("mixtral-8x7b", "a100-80gb", 2, "int4", "bf16", None),
    ("deepseek-v3", "h200", 8, "fp8", "bf16", None),
    ("gpt-oss-20b", "l40s", 1, "int4", "fp8", None),
    ("mistral-7b", "l4", 1, "int8", "bf16", Efficiency(0.5, 0.6, 1e-3, compute_half_saturation_tokens=64.0)),
    ("qwen2.5-72b", "h100-sxm", 8, "bf16", "bf16", Efficiency(0.6, 0.8, 5e-5, comm_overlap_fraction=0.4)),
    # fp4 linear layers, fp8 attention and a bf16 lm_head: three peaks in one step (dtypes.OpPrecision)
    ("llama-3.3-70b", "b200", 2, "fp4", "fp8", None),
    # the GEMM efficiency fit by shape caps eff_compute below ~1,000 tokens here (catalog/gemm_efficiency.py)
    ("llama-3.1-8b", "b200", 1, "fp8", "fp8", None),
    ("llama-3.1-70b", "h100-sxm", 8, "bf16", "bf16", None),
]
MAX_TOKENS = 4096


def _mix(rng: random.Random) -> tuple[list[tuple[int, int, bool]], list[int]]:
    chunks = [(rng.randint(1, 1500), rng.randint(0, 9000), rng.random() < 0.5) for _ in range(rng.randint(0, 3))]
    decodes = [rng.randint(0, 20000) for _ in range(rng.randint(0, 300))]
    return chunks, decodes


@pytest.mark.parametrize("config", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_fast_timer_equals_step_from_work(config: tuple) -> None:  # type: ignore[type-arg]
    model, hardware, gpus, weight_dtype, kv_dtype, efficiency = config
    spec, hw = load_model(model), load_accelerator(hardware)
    shape = derive_shape(spec)
    eff = efficiency or Efficiency.from_accelerator(hw)
    timer = StepTimer(shape, hw, weight_dtype=weight_dtype, kv_dtype=kv_dtype, gpus=gpus, efficiency=eff,
                      max_tokens=MAX_TOKENS)
    static, lines = timer.decode_tables()
    rng = random.Random(11)
    checked = 0
    while checked < 150:
        chunks, decodes = _mix(rng)
        tokens = sum(c[0] for c in chunks) + len(decodes)
        if not 1 <= tokens <= MAX_TOKENS:
            continue
        parts = [uniform_work(shape, batch=1.0, new_tokens=float(t), context_tokens=float(c)) for t, c, _ in chunks]
        parts += [uniform_work(shape, batch=1.0, new_tokens=1.0, context_tokens=float(c)) for c in decodes]
        totals = {f: sum(float(getattr(p, f)) for p in parts) for f in ("tokens", *FIELDS)}
        totals["logit_rows"] = len(decodes) + sum(1 for c in chunks if c[2])
        expected = step_from_work(shape, hw, StepWork(**totals), weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                                  gpus=gpus, efficiency=eff).step_seconds

        window = timer.window_tokens
        below = [c for c in decodes if c < window]
        above = [c for c in decodes if c >= window]
        fields = np.array(timer.decode_fields(below=len(below), below_context=sum(below), above=len(above),
                                              above_context=sum(above)))
        for t, c, emits in chunks:
            fields += np.array(timer.chunk_fields(new_tokens=t, context_tokens=c, emits=emits))
        assert timer.seconds(tokens, tuple(fields.tolist())) == pytest.approx(expected, rel=1e-9)

        # Chunk costs (vectorized and scalar paths) agree with the fields they come from.
        for t, c, emits in chunks:
            vector = timer.chunk_costs(new_tokens=np.array([t]), context_tokens=np.array([c]), emits=emits)[0]
            np.testing.assert_allclose(timer.chunk_cost((t, c, emits)), vector, rtol=1e-12)

        if not chunks and decodes:  # the engine's decode-only path: static table + context lines
            batch = len(decodes)
            seconds = static[batch]
            for f0, fa, fb, fab, m0, ma, mb, mab in lines[batch]:
                compute = f0 + fa * len(above) + fb * sum(below) + fab * sum(above)
                memory = m0 + ma * len(above) + mb * sum(below) + mab * sum(above)
                seconds += max(compute, memory)
            assert seconds == pytest.approx(expected, rel=1e-9)
        checked += 1


def test_window_models_are_linear_in_context_on_each_side_of_the_window() -> None:
    """The decode-field decomposition needs uniform_work affine in the context below and above W."""
    shape = derive_shape(load_model("gpt-oss-20b"))
    window = shape.sliding_window_tokens
    fields = [np.array([float(getattr(uniform_work(shape, batch=1.0, new_tokens=1.0, context_tokens=float(c)), f))
                        for f in FIELDS]) for c in (0, 50, window - 1, window, window + 70, 10 * window)]
    np.testing.assert_allclose(fields[1] - fields[0], 50 * (fields[2] - fields[0]) / (window - 1))
    np.testing.assert_allclose(fields[5] - fields[3], (10 * window - window) * (fields[4] - fields[3]) / 70)
