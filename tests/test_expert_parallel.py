"""Expert parallelism with DP attention: all-to-all arithmetic on the catalog links, DeepEP's measured bandwidth,
the DEP step composed from the roofline's ops."""

from __future__ import annotations

import pytest

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.errors import CostmodelError
from costmodel.expert_parallel import (
    all_to_all_seconds,
    dep_step,
    logical_bandwidth_bytes_per_s,
    nodes_spanned,
)
from costmodel.roofline import Efficiency

H100 = load_accelerator("h100-sxm")
V3 = derive_shape(load_model("deepseek-v3"))


def test_logical_bandwidth_tracks_deepep_measurements() -> None:
    # deepseek-ai/DeepEP README (commit 0297fc80): SM90 + CX7, EP 8 x 2: 90 / 81 GB/s; EP 8 x 4: 61 / 61 GB/s.
    # Link model: 50 GB/s of NIC per GPU over the remote share of destinations, 8/16 and 24/32.
    assert logical_bandwidth_bytes_per_s(H100, ep_gpus=16) == pytest.approx(50e9 / (8 / 16))
    assert logical_bandwidth_bytes_per_s(H100, ep_gpus=32) == pytest.approx(50e9 / (24 / 32))
    for gpus, measured in ((16, (90e9, 81e9)), (32, (61e9, 61e9))):
        for value in measured:
            assert logical_bandwidth_bytes_per_s(H100, ep_gpus=gpus) == pytest.approx(value, rel=0.25)
    assert nodes_spanned(H100, ep_gpus=32) == 4


def test_all_to_all_seconds_by_hand() -> None:
    tokens = 128
    sent = tokens * 8 * 7168 * 2.0  # top-8 experts, hidden 7168, bf16 combine
    inside = all_to_all_seconds(V3, H100, tokens_per_gpu=tokens, ep_gpus=8, bytes_per_element=2.0)
    assert inside == pytest.approx(sent * 7 / 8 / 370e9 + 20e-6)  # 7 of 8 destinations over NVLink
    across = all_to_all_seconds(V3, H100, tokens_per_gpu=tokens, ep_gpus=16, bytes_per_element=2.0)
    assert across == pytest.approx(sent * 8 / 16 / 50e9 + 47.6e-6)  # the NIC share binds, plus the 2-node latency
    assert all_to_all_seconds(V3, H100, tokens_per_gpu=tokens, ep_gpus=1, bytes_per_element=2.0) == 0.0


def test_dep_step_attention_is_per_gpu_and_moe_is_spread() -> None:
    eff = Efficiency.from_accelerator(H100)
    one = dep_step(V3, H100, ep_gpus=16, batch_per_gpu=4, new_tokens=1, context_tokens=8000, logit_rows_per_sequence=1.0,
                   weight_dtype="fp8", kv_dtype="fp8", efficiency=eff)
    more = dep_step(V3, H100, ep_gpus=32, batch_per_gpu=4, new_tokens=1, context_tokens=8000,
                    logit_rows_per_sequence=1.0, weight_dtype="fp8", kv_dtype="fp8", efficiency=eff)
    # Same requests per GPU: attention work per GPU is unchanged; the experts per GPU halve.
    assert more.attention_seconds == pytest.approx(one.attention_seconds)
    assert more.moe_seconds < one.moe_seconds
    assert one.step_seconds == pytest.approx(one.attention_seconds + one.moe_seconds + one.all_to_all_seconds
                                             + eff.overhead_seconds_per_step)
    with pytest.raises(CostmodelError, match="no MoE layers"):
        dep_step(derive_shape(load_model("llama-3.1-8b")), H100, ep_gpus=8, batch_per_gpu=1, new_tokens=1,
                 context_tokens=1, logit_rows_per_sequence=1.0, weight_dtype="bf16", kv_dtype="bf16", efficiency=eff)
