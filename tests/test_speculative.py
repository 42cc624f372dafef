"""Speculative decoding / MTP: tokens per verify step, the roofline speed-up, the simulator's verify + draft steps.

Golden values are arithmetic written out here (Leviathan et al. 2023's expected tokens per step) or the roofline
itself (`roofline.step_from_work` on the verify work): the simulator's decode table must equal it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from costmodel.catalog.speculative import expected_tokens_per_step, published_speculation, speculation_rows
from costmodel.config import ReplicaConfig
from costmodel.errors import CostmodelError
from costmodel.scenario.distributions import FixedTokens
from costmodel.serving import build_replica, simulate
from costmodel.serving.speculative import Speculation, resolve_speculation, speedup
from costmodel.serving.speculative_timer import speculative_replica


def _config(replica):  # type: ignore[no-untyped-def]
    return ReplicaConfig(shape=replica.shape, hardware=replica.hardware, gpus=replica.gpus,
                         weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype, efficiency=replica.efficiency)


def test_expected_tokens_per_step_is_the_sum_of_prefix_products() -> None:
    # 1 + 0.8 + 0.8 * 0.5 = 2.2; one rate a for k positions: (1 - a^(k+1)) / (1 - a)
    assert expected_tokens_per_step((0.8, 0.5)) == pytest.approx(2.2)
    assert expected_tokens_per_step((0.7,) * 3) == pytest.approx((1 - 0.7**4) / (1 - 0.7))
    assert expected_tokens_per_step((0.0, 0.9)) == 1.0


def test_bundled_rows_reproduce_their_sources() -> None:
    rows = {r.id: r for r in speculation_rows()}
    # DeepSeek-V3 report: 85-90% second-token acceptance -> midpoint 0.875, 1.875 tokens per step
    assert expected_tokens_per_step(rows["deepseek-v3-mtp1"].acceptance_rates) == pytest.approx(1.875)
    for row in rows.values():
        if row.acceptance_length is not None:
            assert expected_tokens_per_step(row.acceptance_rates) == pytest.approx(row.acceptance_length, abs=0.01)
    assert published_speculation(model_id="deepseek-r1", method="mtp", draft_tokens=2).id == "deepseek-v3-mtp2"
    with pytest.raises(CostmodelError, match="--spec-acceptance"):
        published_speculation(model_id="llama-3.1-8b", method="eagle", draft_tokens=3)


@pytest.mark.parametrize("rates", [(), (1.2,), (math.nan,), (0.5,) * 17])
def test_bad_rates_name_the_flag(rates: tuple[float, ...]) -> None:
    with pytest.raises(CostmodelError, match="--spec-acceptance"):
        Speculation(method="eagle", acceptance_rates=rates)


def test_user_rates_must_match_the_draft_tokens() -> None:
    with pytest.raises(CostmodelError, match="--spec-draft-tokens 3"):
        resolve_speculation(model_id="llama-3.1-8b", method="eagle", draft_tokens=3, acceptance_rates=(0.8, 0.6))


def test_emissions_count_the_prefill_token_then_verify_steps() -> None:
    spec = Speculation(method="eagle", acceptance_rates=(0.5,))  # E = 1.5
    # N = 1: the prefill's token only; N = 4: 1 + ceil(3 / 1.5) = 3; N = 5: 1 + ceil(4 / 1.5) = 4
    assert spec.emissions(np.array([1, 4, 5])).tolist() == [1, 3, 4]


def test_speedup_falls_with_batch_on_a_dense_model() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    spec = Speculation(method="eagle", acceptance_rates=(0.8, 0.6, 0.4))
    curve = [speedup(_config(replica), spec, batch=b, context_tokens=1024) for b in (1, 64, 128, 256)]
    # Batch 1 is memory-bound: verifying 4 tokens costs about one plain step, so only the drafts (3 passes of one
    # layer plus the 0.53e9-parameter lm_head, ~9% of a step each) keep the speed-up below E = 1 + 0.8 + 0.48 + 0.192.
    assert spec.tokens_per_step == pytest.approx(2.472)
    assert curve[0].verify_seconds == pytest.approx(curve[0].plain_step_seconds, rel=0.05)
    assert 1.5 < curve[0].speedup < spec.tokens_per_step
    # Past ~64 sequences the 4-token verify turns the linear layers compute-bound: the speed-up falls.
    assert all(a.speedup > b.speedup for a, b in zip(curve, curve[1:], strict=False))
    assert curve[-1].speedup < 0.7 * curve[0].speedup
    assert curve[-1].verify_seconds > 1.8 * curve[-1].plain_step_seconds


@pytest.mark.parametrize(("model", "hardware", "gpus", "dtype", "method"), [
    ("llama-3.1-8b", "h100-sxm", 1, "bf16", "eagle"),
    ("deepseek-v3", "h200", 8, "fp8", "mtp"),
])
def test_decode_table_equals_verify_plus_draft(model: str, hardware: str, gpus: int, dtype: str, method: str) -> None:
    replica = build_replica(model, hardware, gpus=gpus, weight_dtype=dtype, kv_dtype=dtype)
    spec = Speculation(method=method, acceptance_rates=(0.8, 0.6))  # type: ignore[arg-type]
    fast = speculative_replica(replica, spec)
    static, lines = fast.timer.decode_tables()
    for batch, context in ((1, 100), (7, 3000), (64, 1500)):
        # The engine's decode step: static + per op max(compute, memory) with every sequence at `context`.
        seconds = static[batch] + sum(max(op[0] + op[2] * batch * context, op[4] + op[6] * batch * context)
                                      for op in lines[batch])
        step = speedup(_config(replica), spec, batch=batch, context_tokens=context)
        assert seconds == pytest.approx(step.verify_seconds + step.draft_seconds, rel=1e-9)


def test_simulated_tpot_at_low_load_follows_the_step_ratio() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    spec = Speculation(method="eagle", acceptance_rates=(0.8, 0.6))
    fast = speculative_replica(replica, spec)
    lengths = {"prompt_tokens": FixedTokens(tokens=512), "output_tokens": FixedTokens(tokens=257)}
    plain = simulate(replica, rate_per_second=0.2, requests=40, **lengths)
    spec_run = simulate(fast, rate_per_second=0.2, requests=40, **lengths)
    # Alone: 256 tokens after the first take ceil(256 / 2.28) = 113 verify steps instead of 256 decode steps.
    step = speedup(_config(replica), spec, batch=1, context_tokens=512 + 128)
    expected = plain.tpot.p50_seconds * (step.verify_seconds + step.draft_seconds) / step.plain_step_seconds * 113 / 256
    assert spec_run.tpot.p50_seconds == pytest.approx(expected, rel=0.02)
    assert spec_run.trace.output_tokens.tolist() == plain.trace.output_tokens.tolist()  # real tokens reported


def test_draft_memory_comes_out_of_the_kv_budget() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    fast = speculative_replica(replica, Speculation(method="draft-model", acceptance_rates=(0.7,),
                                                    draft_model_id="llama-3.2-1b"))
    # Llama 3.2 1B: ~1.24e9 params in bf16 = ~2.5 GB out of the budget; its KV adds 16 layers x 8 KV heads.
    assert replica.kv_budget_bytes_per_gpu - fast.kv_budget_bytes_per_gpu == pytest.approx(2 * 1.236e9, rel=0.02)
    assert fast.kv_bytes_per_token_per_gpu == pytest.approx(replica.kv_bytes_per_token_per_gpu + 2 * 16 * 8 * 64 * 2)
    assert replace(fast, speculation=None).speculation is None
