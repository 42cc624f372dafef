"""The simulator's DP-attention + EP replica (serving/expert_parallel_timer.py): its step tables against the uniform
DEP step, the all-to-all on the catalog links written out, the memory it frees, and the faces that take it."""

from __future__ import annotations

import json

import pytest

from costmodel.catalog.loader import load_accelerator
from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.expert_parallel import dep_step, exchange_seconds
from costmodel.serving import build_replica
from costmodel.serving.expert_parallel_timer import (
    DepSpeculativeStepTimer,
    dep_replica,
    replicated_attention_bytes_per_gpu,
)
from costmodel.serving.speculative import resolve_speculation
from costmodel.serving.speculative_timer import speculative_replica

H200 = load_accelerator("h200")


def _replica(gpus: int, *, budget: int = 2048):
    return build_replica("deepseek-r1", "h200", gpus=gpus, weight_dtype="fp8", kv_dtype="fp8", max_batched_tokens=budget)


@pytest.mark.parametrize("gpus", [8, 16])
def test_dep_timer_is_the_dep_step_on_uniform_decode(gpus: int) -> None:
    dep = dep_replica(_replica(gpus))
    for batch_per_gpu, context in ((1, 1000), (8, 3000), (32, 6000)):
        batch = batch_per_gpu * gpus
        fields = dep.timer.decode_fields(below=batch, below_context=batch * context, above=0, above_context=0)
        step = dep_step(dep.shape, H200, ep_gpus=gpus, batch_per_gpu=batch_per_gpu, new_tokens=1,
                        context_tokens=context, logit_rows_per_sequence=1.0, weight_dtype="fp8", kv_dtype="fp8",
                        efficiency=dep.efficiency)
        assert dep.timer.seconds(batch, fields) == pytest.approx(step.step_seconds, rel=1e-9)


def test_all_to_all_arithmetic_on_h200_links() -> None:
    # DeepSeek-R1: hidden 7168, top-8 routed experts, 58 MoE layers (61 layers, first 3 dense). 16 tokens per GPU.
    shape = _replica(8).shape
    assert (shape.hidden, shape.experts_per_token, shape.moe_layers) == (7168, 8, 58)
    dispatch = 16 * 8 * 7168 * 1.0  # fp8: 917,504 bytes sent per GPU
    combine = 16 * 8 * 7168 * 2.0  # bf16
    # One node (EP 8): 7/8 of the destinations over NVLink at the achieved 370 GB/s, plus 20 us.
    one_node = 58 * sum(b * 7 / 8 / 370e9 + 20e-6 for b in (dispatch, combine))
    assert exchange_seconds(shape, H200, tokens_per_gpu=16.0, ep_gpus=8) == pytest.approx(one_node, rel=1e-12)
    # Two nodes (EP 16): half the destinations across the 50 GB/s NIC (slower than the 7/16 on NVLink), plus the
    # 47.6 us two-node latency: 58 x (9.175 + 47.6 + 18.35 + 47.6) us = 7.118 ms.
    two_nodes = 58 * sum(b * 8 / 16 / 50e9 + 47.6e-6 for b in (dispatch, combine))
    assert exchange_seconds(shape, H200, tokens_per_gpu=16.0, ep_gpus=16) == pytest.approx(two_nodes, rel=1e-12)
    assert two_nodes == pytest.approx(7.118e-3, rel=1e-4)


def test_dep_step_tables_add_the_all_to_all_and_drop_the_all_reduce() -> None:
    tp, dep = _replica(16), dep_replica(_replica(16))
    zero = (0.0,) * 5
    tokens = 256  # 16 per GPU
    # MoE ops are the same N-GPU ops in both; attention projections run per rank; comm swaps all-reduce for a2a.
    difference = dep.timer.seconds(tokens, zero) - tp.timer.seconds(tokens, zero)
    step = dep_step(dep.shape, H200, ep_gpus=16, batch_per_gpu=16, new_tokens=1, context_tokens=0,
                    logit_rows_per_sequence=0.0, weight_dtype="fp8", kv_dtype="fp8", efficiency=dep.efficiency)
    assert dep.timer.seconds(tokens, zero) == pytest.approx(step.step_seconds, rel=1e-9)
    assert difference != 0.0


def test_dep_replica_memory_mla_latent_stored_once() -> None:
    tp = _replica(16)
    dep = dep_replica(tp)
    # MLA: tensor parallelism keeps the whole latent on every GPU; DP attention keeps each sequence on one.
    assert dep.kv_bytes_per_token_per_gpu == pytest.approx(tp.kv_bytes_per_token_per_gpu / 16)
    # Attention weights replicated: 61 layers x (q, kv, o projection params) x 1 byte (fp8) x (1 - 1/16) per GPU.
    params = 61 * (tp.shape.qkv_params_per_layer + tp.shape.o_params_per_layer)
    assert replicated_attention_bytes_per_gpu(tp) == pytest.approx(params * 1.0 * 15 / 16)
    assert dep.kv_budget_bytes_per_gpu == pytest.approx(tp.kv_budget_bytes_per_gpu - params * 15 / 16)
    assert dep.max_batched_tokens == 16 * tp.max_batched_tokens and dep.parallelism == "dep"
    assert dep.running_cap(256) == 16 * 256 and tp.running_cap(256) == 256


def test_dep_with_mtp_keeps_verify_steps() -> None:
    speculation = resolve_speculation(model_id="deepseek-r1", method="mtp", draft_tokens=1, acceptance_rates=None,
                                      draft_model_id=None)
    dep = dep_replica(speculative_replica(_replica(8, budget=1024), speculation))
    assert isinstance(dep.timer, DepSpeculativeStepTimer) and dep.speculation is speculation
    assert dep.timer.decode_tokens_per_sequence == 2


def test_dep_refuses_a_dense_model_and_one_gpu() -> None:
    with pytest.raises(CostmodelError, match="no MoE layers"):
        dep_replica(build_replica("llama-3.1-8b", "h100-sxm", gpus=2, max_batched_tokens=512))
    with pytest.raises(CostmodelError, match="2 or more GPUs"):
        dep_replica(build_replica("qwen3-30b-a3b", "h100-sxm", gpus=1, max_batched_tokens=512))


def test_simulate_parallelism_dep_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--model", "deepseek-r1", "--hardware", "h200", "--gpus", "16", "--weight-dtype", "fp8",
                 "--kv-dtype", "fp8", "--prompt-tokens", "1000", "--output-tokens", "100", "--rate", "4",
                 "--requests", "60", "--max-batched-tokens", "1024", "--parallelism", "dep", "--json", "--quiet"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["parallelism"] == "dep" and payload["nodes"] == 2 and payload["gpus"] == 16
    assert main(["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "2", "--rate", "1",
                 "--requests", "10", "--parallelism", "dep", "--quiet"]) == 2
    assert "no MoE layers" in capsys.readouterr().err


def test_serving_modes_doc_states_these_figures() -> None:
    from pathlib import Path

    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "serving-modes.md").read_text().split())
    shape = _replica(8).shape
    seconds = float(exchange_seconds(shape, H200, tokens_per_gpu=16.0, ep_gpus=16))
    assert f"= {seconds * 1e3:.3f} ms per step" in page
    assert f"{16 * 8 * 7168:,} fp8 bytes per GPU per dispatch" in page
