"""costmodel.charts.latency: percentiles vs load, capacity at the SLO and the interactivity curve come
straight from the serving simulator."""

from __future__ import annotations

import math

import pytest

from app.scenario_io import load_example
from costmodel.charts.latency import interactivity_floor, option_latency, self_host_options
from costmodel.decision.evidence import tightened_slo
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario, SelfHostOption, Slo
from costmodel.serving.profile import option_engine_settings
from costmodel.serving.replica import build_replica
from costmodel.serving.simulation import simulate

REQUESTS = 120  # small runs keep the test fast; the simulator is seeded, so results are exact repeats


def _chat_l40s() -> tuple[SelfHostOption, Scenario]:
    scenario = load_example("chat-assistant.yaml")
    option = scenario.option("llama-3.1-8b-l40s")
    assert isinstance(option, SelfHostOption)
    return option, scenario


def test_load_sweep_and_capacity_match_the_simulator() -> None:
    option, scenario = _chat_l40s()
    result = option_latency(option, scenario.workload, scenario.slo, requests=REQUESTS,
                            load_fractions=(0.25, 0.5, 1.0), concurrency=(1, 4, 16))
    assert result.feasible and result.reason == ""
    rates = [p.rate_requests_per_second for p in result.load]
    assert rates == sorted(rates)
    assert rates[-1] == pytest.approx(result.saturation_requests_per_second)
    assert result.capacity_requests_per_second in rates
    at_capacity = result.load[rates.index(result.capacity_requests_per_second)]
    assert at_capacity.meets_slo
    # The capacity is the one `compare` prints: the decision's, searched at the SLO tightened by the option's
    # engine's documented error (vllm, the default: decision/capacity.py self_host_capacity), and the page
    # says those limits.
    decided = decide(scenario).option(option.name)
    assert option.engine == "vllm"
    assert result.capacity_requests_per_second == pytest.approx(decided.capacity_requests_per_second, rel=1e-12)
    tight = tightened_slo(scenario.slo, engine=option.engine)
    assert tight.ttft_p90_seconds < scenario.slo.ttft_p90_seconds
    assert result.search_slo_limits == tight.limits() and result.slo_limits == scenario.slo.limits()
    # The same seeded run through the simulator directly, on the option's engine (vllm), gives the same percentiles.
    engine = option_engine_settings(option, longest_prompt_tokens=math.ceil(scenario.workload.mean_prompt_tokens()))
    replica = build_replica(option.model, option.hardware, gpus=option.gpus_per_replica,
                            weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype, engine=engine)
    direct = simulate(replica, prompt_tokens=scenario.workload.prompt_tokens,
                      output_tokens=scenario.workload.output_tokens,
                      rate_per_second=rates[0], requests=REQUESTS, seed=0, slo=scenario.slo,
                      prefix_cached_fraction=scenario.workload.cached_prompt_fraction,
                      kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs)
    assert result.load[0].ttft_p90_seconds == direct.ttft.p90_seconds
    assert result.load[0].tpot_p99_seconds == direct.tpot.p99_seconds
    # The curve: one point per concurrency; the verdict is TPOT p90 against the SLO's limit.
    assert [c.point.concurrency for c in result.curve] == [1, 4, 16]
    for c in result.curve:
        assert c.meets_tpot_limit == (c.point.tpot_p90_seconds <= scenario.slo.tpot_p90_seconds)
    # More concurrent users: more tokens/s per GPU, fewer tokens/s per user.
    per_gpu = [c.point.output_tokens_per_second_per_gpu for c in result.curve]
    per_user = [c.point.output_tokens_per_second_per_user for c in result.curve]
    assert per_gpu == sorted(per_gpu) and per_user == sorted(per_user, reverse=True)


def test_an_impossible_tpot_limit_is_reported_not_simulated() -> None:
    option, scenario = _chat_l40s()
    slo = Slo(ttft_p90_seconds=1.0, tpot_p90_seconds=0.001)  # 1 ms per token: below one decode step
    result = option_latency(option, scenario.workload, slo, requests=REQUESTS)
    assert not result.feasible
    assert "decode step" in result.reason and "TPOT p90" in result.reason
    assert result.load == () and result.curve == ()


def test_a_model_that_does_not_fit_is_reported() -> None:
    _, scenario = _chat_l40s()
    option = SelfHostOption(name="too-big", model="llama-3.1-405b", hardware="l4", usd_per_gpu_hour=1.0)
    result = option_latency(option, scenario.workload, scenario.slo, requests=REQUESTS)
    assert not result.feasible
    assert "does not fit" in result.reason


def test_interactivity_floor_and_option_filter() -> None:
    # TPOT p90 of 50 ms -> 1 / 0.05 s = 20 tokens/s per user.
    assert interactivity_floor(Slo(ttft_p90_seconds=1.0, tpot_p90_seconds=0.05)) == pytest.approx(20.0)
    scenario = load_example("chat-assistant.yaml")
    assert [o.name for o in self_host_options(scenario.options)] == ["llama-3.3-70b-h100-tp4", "llama-3.1-8b-l40s"]
    apis = [o for o in scenario.options if o.kind == "api"]
    with pytest.raises(CostmodelError, match="no self-host option"):
        self_host_options(apis)


def test_latency_owner_is_the_one_compare_prints() -> None:
    # The Latency page's owner comes from the same capacity search `decide` runs (seed 0, its request
    # count and tolerance), so the page and `compare` name the same owner and lever for the option.
    from costmodel.decision.rank import decide

    option, scenario = _chat_l40s()
    result = option_latency(option, scenario.workload, scenario.slo, requests=REQUESTS,
                            load_fractions=(0.5, 1.0), concurrency=(1,))
    decided = next(o for o in decide(scenario).options if o.name == option.name)
    assert decided.latency_owner and result.latency_owner == decided.latency_owner
    assert result.latency_owner.startswith("p90 TTFT is ")
