"""docs/serving-modes.md, number by number: each figure recomputed from the library."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.speculative import published_speculation
from costmodel.config import ReplicaConfig
from costmodel.expert_parallel import logical_bandwidth_bytes_per_s
from costmodel.scenario.distributions import LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import build_replica
from costmodel.serving.capacity import CapacitySearch, capacity_for_replica
from costmodel.serving.disaggregated import DisaggregatedLayout, kv_link
from costmodel.serving.disaggregated_capacity import best_ratio
from costmodel.serving.profile import engine_settings
from costmodel.serving.speculative import Speculation, dep_speedup, speedup
from costmodel.serving.speculative_timer import speculative_replica

PAGE = " ".join((Path(__file__).resolve().parents[1] / "docs" / "serving-modes.md").read_text(encoding="utf-8").split())
EAGLE = Speculation(method="eagle", acceptance_rates=(0.8, 0.6, 0.4))


def test_speedup_table() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    config = ReplicaConfig(shape=replica.shape, hardware=replica.hardware, gpus=1, weight_dtype="bf16",
                           kv_dtype="bf16", efficiency=replica.efficiency)
    assert f"(E = {EAGLE.tokens_per_step:.3f})" in PAGE
    for batch in (1, 64, 128, 256):
        s = speedup(config, EAGLE, batch=batch, context_tokens=1024)
        row = (f"| {batch} | {s.plain_step_seconds * 1e3:.3f} ms | {s.verify_seconds * 1e3:.3f} ms | "
               f"{s.draft_seconds * 1e3:.3f} ms | {s.speedup:.2f} |")
        assert row in PAGE, row


@cache
def _tp4():  # type: ignore[no-untyped-def]
    return build_replica("llama-3.1-70b", "h100-sxm", gpus=4, weight_dtype="fp8", kv_dtype="fp8",
                         engine=engine_settings("sglang"))


def test_kv_transfer_figures() -> None:
    replica = _tp4()
    assert f"{replica.memory.kv_bytes_per_token * 2048 / 1e6:.1f} MB of KV" in PAGE
    for choice, words in (("intra-node", "over four GPUs' NVLink"), ("inter-node", "over four 400 Gb/s NICs")):
        layout = DisaggregatedLayout(prefill=replica, decode=replica, prefill_instances=1, decode_instances=1,
                                     link=kv_link(replica, replica, choice=choice))
        assert f"{layout.transfer_seconds(np.array([2048]))[0] * 1e3:.3f} ms {words}" in PAGE


@pytest.mark.slow
def test_capacity_table() -> None:
    replica, engine = _tp4(), engine_settings("sglang")
    search = CapacitySearch(prompt_tokens=LognormalTokens(mean_tokens=2048, sigma=0.8),
                            output_tokens=LognormalTokens(mean_tokens=256, sigma=0.6),
                            slo=(SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.03)), requests=1000,
                            kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs)

    def row(name: str, rate: float, gpus: int, ttft: float, tpot: float) -> str:
        return f"| {name} | {rate:.2f} | {rate / gpus:.2f} | {ttft:.3f} s | {tpot * 1e3:.1f} ms |"

    agg = capacity_for_replica(replica, search)
    assert row("aggregated TP4 replica", agg.max_rate_requests_per_second, 4, agg.ttft_p90_seconds,
               agg.tpot_p90_seconds) in PAGE
    spec = capacity_for_replica(speculative_replica(replica, EAGLE), search)
    assert row("aggregated TP4 + EAGLE (0.8, 0.6, 0.4)", spec.max_rate_requests_per_second, 4, spec.ttft_p90_seconds,
               spec.tpot_p90_seconds) in PAGE
    layout = DisaggregatedLayout(prefill=replica, decode=replica, prefill_instances=1, decode_instances=1,
                                 link=kv_link(replica, replica, choice="inter-node"))
    ratio = best_ratio(layout, search, max_instances=3)
    best = ratio.best
    assert best is not None and best.at_capacity is not None and best.layout.name == "3P(4)1D(4)"
    assert row("disaggregated 3P(4)1D(4), 16 GPUs", best.max_rate_requests_per_second, 16,
               best.at_capacity.ttft.p90_seconds, best.at_capacity.tpot.p90_seconds) in PAGE
    assert (f"a prefill instance carries {ratio.prefill_rate_per_instance:.2f} requests/s at its limit and a decode "
            f"instance {ratio.decode_rate_per_instance:.2f}") in PAGE


def test_expert_parallel_figures() -> None:
    h100 = load_accelerator("h100-sxm")
    assert (f"{logical_bandwidth_bytes_per_s(h100, ep_gpus=16) / 1e9:.0f} GB/s at EP 16 and "
            f"{logical_bandwidth_bytes_per_s(h100, ep_gpus=32) / 1e9:.1f} GB/s at EP 32") in PAGE
    replica = build_replica("deepseek-v3", "h200", gpus=8, weight_dtype="fp8", kv_dtype="fp8",
                            engine=engine_settings("sglang"))
    config = ReplicaConfig(shape=replica.shape, hardware=replica.hardware, gpus=8, weight_dtype="fp8", kv_dtype="fp8",
                           efficiency=replica.efficiency)
    row = published_speculation(model_id="deepseek-v3", method="mtp", draft_tokens=2)
    step = dep_speedup(config, Speculation(method="mtp", acceptance_rates=row.acceptance_rates), ep_gpus=16,
                       batch_per_gpu=2, context_tokens=65536 + 2048)
    assert f"at a {65536 + 2048:,}-token context" in PAGE  # ISL 65,536 plus half the 4,096-token output
    assert (f"a plain step of {step.plain_step_seconds * 1e3:.2f} ms, a verify step of {step.verify_seconds * 1e3:.2f} ms,"
            f" speed-up {step.speedup:.2f}") in PAGE
