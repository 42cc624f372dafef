"""Engine profiles wired into the serving model: --engine, the scenario's `engine:`, generic = before."""

from __future__ import annotations

import json

import numpy as np
import pytest

from costmodel.catalog.engines import load_engine
from costmodel.cli import main
from costmodel.estimate import estimate
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.scenario.distributions import FixedTokens
from costmodel.scenario.options import SelfHostOption
from costmodel.serving import MAX_NUM_SEQS, build_replica, simulate
from costmodel.serving.profile import engine_settings

BASE = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "512", "--output-tokens", "64"]
PROMPT, OUTPUT = FixedTokens(tokens=512), FixedTokens(tokens=64)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_generic_settings_are_the_pre_profile_defaults() -> None:
    settings = engine_settings("generic")
    assert (settings.max_num_seqs, settings.max_batched_tokens) == (MAX_NUM_SEQS, MAX_BATCHED_TOKENS)
    assert settings.kv_policy == "preempt" and settings.request_overhead_seconds == 0.0
    assert settings.step_overhead_seconds is None


def test_profile_values_and_explicit_overrides() -> None:
    # vllm.yaml: max_num_seqs 1024, max_num_batched_tokens 8192 (vLLM arg_utils.py, >= 70 GiB GPUs).
    vllm = engine_settings("vllm")
    assert (vllm.max_num_seqs, vllm.max_batched_tokens, vllm.kv_policy) == (1024, 8192, "preempt")
    # trtllm.yaml: kv_policy reserve (GUARANTEED_NO_EVICT).
    assert engine_settings("trtllm").kv_policy == "reserve"
    # sglang.yaml leaves max_num_seqs open: the token budget caps it.
    sglang = engine_settings("sglang")
    assert sglang.max_num_seqs == sglang.max_batched_tokens
    # naive.yaml: one sequence, no budget -> the longest prompt in one pass.
    naive = engine_settings("naive", longest_prompt_tokens=20_000)
    assert (naive.max_num_seqs, naive.max_batched_tokens, naive.kv_policy) == (1, 20_000, "reserve")
    assert engine_settings("naive", longest_prompt_tokens=100).max_batched_tokens == MAX_BATCHED_TOKENS
    over = engine_settings("vllm", max_num_seqs=8, max_batched_tokens=2048, kv_policy="reserve")
    assert (over.max_num_seqs, over.max_batched_tokens, over.kv_policy) == (8, 2048, "reserve")


def test_generic_engine_reproduces_the_simulator_exactly() -> None:
    kwargs = {"prompt_tokens": PROMPT, "output_tokens": OUTPUT, "rate_per_second": 6.0, "requests": 300, "seed": 3}
    before = simulate(build_replica("llama-3.1-8b", "h100-sxm"), **kwargs).contract()
    after = simulate(build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings("generic")), **kwargs).contract()
    assert after.pop("engine") == "generic" and before.pop("engine") == "generic"
    assert after == before


def test_request_overhead_is_a_ttft_floor() -> None:
    generic = load_engine("generic")
    slow = generic.model_copy(update={"id": "test-slow", "request_overhead_seconds": 0.05})
    kwargs = {"prompt_tokens": PROMPT, "output_tokens": OUTPUT, "rate_per_second": 1.0, "requests": 1}
    base = simulate(build_replica("llama-3.1-8b", "h100-sxm"), **kwargs)
    slowed = simulate(build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings(slow)), **kwargs)
    # One request alone: TTFT = 0.05 s of CPU + the same prefill; TPOT is untouched.
    assert slowed.ttft.p50_seconds - base.ttft.p50_seconds == pytest.approx(0.05, abs=1e-12)
    assert slowed.tpot.p50_seconds == base.tpot.p50_seconds and slowed.engine == "test-slow"
    est = estimate("llama-3.1-8b", "h100-sxm", engine=slow)
    assert est.ttft_seconds == pytest.approx(estimate("llama-3.1-8b", "h100-sxm").ttft_seconds + 0.05, abs=1e-12)


def test_profile_step_overhead_replaces_the_accelerators() -> None:
    fixed = load_engine("generic").model_copy(update={"id": "test-step", "step_overhead_seconds": 0.0})
    base, bare = estimate("llama-3.1-8b", "h100-sxm"), estimate("llama-3.1-8b", "h100-sxm", engine=fixed)
    # The difference is the accelerator row's overhead_seconds_per_step, no longer charged per step.
    assert base.tpot_seconds - bare.tpot_seconds == pytest.approx(base.efficiency.overhead_seconds_per_step, rel=1e-9)


def test_per_sequence_step_overhead_reaches_the_step_timer_and_tpot() -> None:
    # 10 us per sequence per step: a decode step of B sequences costs B * 10 us more (the engine loop
    # charges it per scheduled sequence; tests/test_serving_reference.py checks it step by step).
    profile = load_engine("generic").model_copy(update={"id": "test-per-seq", "step_overhead_seconds_per_sequence": 1e-5})
    settings = engine_settings(profile)
    assert settings.step_overhead_seconds_per_sequence == 1e-5
    replica = build_replica("llama-3.1-8b", "h100-sxm", engine=settings)
    bare = build_replica("llama-3.1-8b", "h100-sxm")
    static, _ = replica.timer.decode_tables()
    static_bare, _ = bare.timer.decode_tables()
    assert static[32] - static_bare[32] == pytest.approx(32 * 1e-5, rel=1e-9)
    kwargs = {"prompt_tokens": PROMPT, "output_tokens": OUTPUT, "rate_per_second": 20.0, "requests": 200}
    assert simulate(replica, **kwargs).tpot.p50_seconds > simulate(bare, **kwargs).tpot.p50_seconds


def test_naive_serves_one_request_at_a_time() -> None:
    settings = engine_settings("naive", longest_prompt_tokens=512)
    kwargs = {"prompt_tokens": PROMPT, "output_tokens": OUTPUT, "rate_per_second": 20.0, "requests": 200}
    naive = simulate(build_replica("llama-3.1-8b", "h100-sxm", engine=settings), kv_policy=settings.kv_policy,
                     max_num_seqs=settings.max_num_seqs, **kwargs)
    generic = simulate(build_replica("llama-3.1-8b", "h100-sxm"), **kwargs)
    assert naive.max_running == 1 and generic.max_running > 1
    # Each request alone runs prefill + 63 batch-1 decode steps; one at a time, throughput is 64 tokens
    # per (prefill + 63 TPOT) at most, far below the continuous-batching replica.
    alone = naive.ttft.p50_seconds - naive.queue.p50_seconds + 63 * naive.tpot.p50_seconds
    assert naive.output_tokens_per_second <= 64 / alone * (1 + 1e-6)
    assert generic.output_tokens_per_second > 3 * naive.output_tokens_per_second


def test_cli_engine_flag(capsys: pytest.CaptureFixture[str]) -> None:
    plain = _json(capsys, ["simulate", *BASE, "--rate", "4", "--requests", "100", "--json"])
    generic = _json(capsys, ["simulate", *BASE, "--rate", "4", "--requests", "100", "--engine", "generic", "--json"])
    assert plain == generic and plain["engine"] == "generic"
    naive = _json(capsys, ["simulate", *BASE, "--rate", "4", "--requests", "100", "--engine", "naive", "--json"])
    assert naive["engine"] == "naive" and naive["max_running"] == 1 and naive["kv_policy"] == "reserve"
    flagged = _json(capsys, ["simulate", *BASE, "--rate", "4", "--requests", "100", "--engine", "trtllm",
                             "--kv-policy", "preempt", "--json"])
    assert flagged["kv_policy"] == "preempt"  # an explicit flag wins over the profile
    est = _json(capsys, ["estimate", *BASE, "--engine", "vllm", "--json"])
    # The vllm profile's TTFT = generic + its per-request overhead + its step overhead in place of the
    # accelerator row's (H100: 4e-4 s) on the one prefill step.
    vllm = load_engine("vllm")
    assert vllm.step_overhead_seconds is not None
    expected = (_json(capsys, ["estimate", *BASE, "--json"])["ttft_seconds"] + vllm.request_overhead_seconds
                + vllm.step_overhead_seconds - 4e-4)
    assert est["engine"] == "vllm" and est["ttft_seconds"] == pytest.approx(expected, rel=1e-9)
    cap = _json(capsys, ["capacity", *BASE, "--requests", "200", "--engine", "naive", "--slo-ttft-p90", "5", "--json"])
    assert cap["feasible"] is True
    with pytest.raises(SystemExit) as exc:
        main(["simulate", *BASE, "--rate", "4", "--engine", "bogus"])
    assert exc.value.code == 2


def test_scenario_engine_field() -> None:
    option = {"name": "h", "model": "llama-3.1-8b", "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0}
    assert SelfHostOption.model_validate(option).engine == "vllm"  # the realistic default; generic is explicit
    assert SelfHostOption.model_validate({**option, "engine": "generic"}).engine == "generic"
    assert SelfHostOption.model_validate({**option, "engine": "sglang"}).engine == "sglang"
    with pytest.raises(ValueError, match="unknown engine 'vlm'"):
        SelfHostOption.model_validate({**option, "engine": "vlm"})


def test_scenario_engine_changes_the_simulated_capacity() -> None:
    from costmodel.decision.rank import decide
    from costmodel.scenario import parse_scenario

    def scenario(engine: str) -> dict:  # type: ignore[type-arg]
        return {
            "name": "t",
            "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 512},
                         "output_tokens": {"kind": "fixed", "tokens": 64}, "peak_to_mean_ratio": 2.0},
            "slo": {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.1},
            # One replica allowed, so the engine's capacity (not the N+1 floor) sets the fleet.
            "fleet": {"min_replicas": 1},
            "options": [{"kind": "self-host", "name": "h", "model": "llama-3.1-8b", "hardware": "h100-sxm",
                         "usd_per_gpu_hour": 2.0, "engine": engine}],
        }

    generic = decide(parse_scenario(scenario("generic"))).option("h")
    naive = decide(parse_scenario(scenario("naive"))).option("h")
    assert naive.capacity_requests_per_second < generic.capacity_requests_per_second
    assert naive.replicas > generic.replicas
    assert np.isfinite(generic.usd_per_month) and naive.usd_per_month > generic.usd_per_month


def test_latency_page_runs_the_options_engine() -> None:
    from costmodel.charts.latency import option_latency
    from costmodel.scenario import Slo, Workload

    workload = Workload.model_validate({"requests_per_day": 100_000, "peak_to_mean_ratio": 2.0,
                                        "prompt_tokens": {"kind": "fixed", "tokens": 512},
                                        "output_tokens": {"kind": "fixed", "tokens": 64}})
    slo = Slo(ttft_p90_seconds=2.0, tpot_p90_seconds=0.1)
    option = {"name": "h", "model": "llama-3.1-8b", "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0}
    generic = option_latency(SelfHostOption.model_validate(option), workload, slo, requests=200,
                             load_fractions=(0.5,), concurrency=(1,))
    naive = option_latency(SelfHostOption.model_validate({**option, "engine": "naive"}), workload, slo,
                           requests=200, load_fractions=(0.5,), concurrency=(1,))
    assert 0 < naive.capacity_requests_per_second < generic.capacity_requests_per_second
