"""Tensor-parallel all-reduce time minus the engine profile's overlap (issue 17, communication).

Serial cost (roofline.allreduce_seconds): 2 all-reduces per layer, each a ring of 2(N-1)/N * tokens *
hidden * 2 bytes (bf16 activations) over the accelerator row's one-way link bandwidth plus its latency.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from costmodel.catalog.engines import load_engine
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.estimate import estimate
from costmodel.roofline import Efficiency, step
from costmodel.serving import build_replica
from costmodel.serving.profile import engine_settings

SHAPE = derive_shape(load_model("llama-3.1-70b"))
# The ring formula under test: the row without its measured all-reduce table (tests/test_allreduce_curve.py).
H100 = load_accelerator("h100-sxm").model_copy(update={"allreduce_table": None})


def _step(overlap: float, *, batch: int, new_tokens: int) -> tuple[float, float]:
    eff = replace(Efficiency.from_accelerator(H100), comm_overlap_fraction=overlap)
    result = step(SHAPE, H100, batch=batch, new_tokens=new_tokens, context_tokens=1024, gpus=8, efficiency=eff)
    return result.step_seconds, result.comm_seconds


def test_overlap_zero_is_the_serial_cost_exactly() -> None:
    for batch, tokens in ((1, 2048), (256, 1)):
        plain = step(SHAPE, H100, batch=batch, new_tokens=tokens, context_tokens=1024, gpus=8)
        assert _step(0.0, batch=batch, new_tokens=tokens) == (plain.step_seconds, plain.comm_seconds)


def test_decode_allreduce_by_hand_and_overlap() -> None:
    # Llama 3.1 70B: 80 layers, hidden 8192 (config.json); H100 SXM: 370e9 B/s one way achieved on NVLink 4
    # (450e9 line rate less ~20% protocol overhead, nccl-tests issue #212), 20 us latency (accelerators.yaml).
    # TP8 decode at batch 1: ring bytes 2 * 7/8 * 1 * 8192 * 2 = 28,672 B per all-reduce.
    serial = 80 * 2 * (28_672 / 370e9 + 20e-6)
    total0, comm0 = _step(0.0, batch=1, new_tokens=1)
    assert comm0 == pytest.approx(serial, rel=1e-12)
    total, comm = _step(0.25, batch=1, new_tokens=1)
    assert comm == pytest.approx(0.75 * serial, rel=1e-12)
    assert total0 - total == pytest.approx(0.25 * serial, rel=1e-9)
    assert _step(1.0, batch=1, new_tokens=1)[1] == 0.0


def test_profile_overlap_reaches_estimate_and_the_simulator() -> None:
    hidden = load_engine("generic").model_copy(update={"id": "test-overlap", "tp_comm_overlap_fraction": 0.5})
    base = estimate("llama-3.1-70b", H100, gpus=4, batch=16)
    half = estimate("llama-3.1-70b", H100, gpus=4, batch=16, engine=hidden)
    assert half.decode.comm_seconds == pytest.approx(0.5 * base.decode.comm_seconds, rel=1e-12)
    assert half.engine_id == "test-overlap"
    replica = build_replica("llama-3.1-70b", H100, gpus=4, engine=engine_settings(hidden))
    generic = build_replica("llama-3.1-70b", H100, gpus=4)
    fields = (1.0, 0.0, 0.0, 0.0, 0.0)
    saved = generic.timer.seconds(1, fields) - replica.timer.seconds(1, fields)
    assert saved == pytest.approx(0.5 * _tp4_comm(tokens=1), rel=1e-9)


def _tp4_comm(*, tokens: int) -> float:
    # 2 * 3/4 * tokens * 8192 * 2 bytes per all-reduce on TP4.
    return 80 * 2 * (2 * 0.75 * tokens * 8192 * 2 / 370e9 + 20e-6)


def test_bundled_profiles_keep_serial_comm_until_a_source_says_otherwise() -> None:
    # Every bundled profile's tp_comm_overlap_fraction is 0 (no published share found; see each file's note).
    for engine in ("generic", "vllm", "sglang", "trtllm", "naive"):
        assert engine_settings(engine).comm_overlap_fraction == 0.0
