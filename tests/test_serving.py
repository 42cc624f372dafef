"""Serving simulator against queueing theory and the roofline, plus bad input.

Theory used (no fitted numbers):
- M/D/1 (Poisson arrivals, deterministic service D, one server): Pollaczek-Khinchine mean wait
  Wq = lambda * E[S^2] / (2 (1 - rho)) = rho * D / (2 (1 - rho)), rho = lambda * D (Kleinrock, Queueing
  Systems vol. 1, eq. 5.86 with E[S^2] = D^2). Batch size 1 makes the replica such a server.
- Little's law: mean number in system = throughput x mean time in system.
- Zero load: TTFT is one prefill step at batch 1, TPOT the mean batch-1 decode step over the contexts
  the request decodes at (prompt .. prompt + output - 2), both from `roofline.step`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from costmodel.errors import CostmodelError
from costmodel.estimate import estimate
from costmodel.roofline import step
from costmodel.scenario.distributions import FixedTokens, LognormalTokens, UniformTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import (
    CapacitySearch,
    build_replica,
    capacity_for_replica,
    simulate,
    throughput_interactivity_curve,
)
from costmodel.serving.engine import run_engine
from costmodel.serving.engine_io import EngineLimits
from costmodel.serving.simulation import simulate_requests


@pytest.fixture(scope="module")
def replica():
    return build_replica("llama-3.1-8b", "h100-sxm")


CHAT = {"prompt_tokens": LognormalTokens(mean_tokens=1000, sigma=0.8), "output_tokens": LognormalTokens(mean_tokens=250, sigma=0.6)}


def test_md1_mean_queueing_delay_matches_pollaczek_khinchine(replica) -> None:
    fixed = {"prompt_tokens": FixedTokens(tokens=512), "output_tokens": FixedTokens(tokens=64)}
    alone = simulate(replica, rate_per_second=1.0, requests=1, **fixed)
    service_seconds = alone.e2e.mean_seconds  # one prefill step + 63 decode steps, nothing else running
    rho = 0.5
    result = simulate(replica, rate_per_second=rho / service_seconds, requests=40_000, seed=3, max_num_seqs=1, **fixed)
    expected_wait = rho * service_seconds / (2.0 * (1.0 - rho))
    assert result.queue.mean_seconds == pytest.approx(expected_wait, rel=0.05)
    # Deterministic service: every request's E2E is its wait plus D.
    np.testing.assert_allclose(result.trace.values("e2e") - result.trace.queue_seconds(), service_seconds, rtol=1e-9)


def test_littles_law_on_the_simulated_trace(replica) -> None:
    result = simulate(replica, rate_per_second=8.0, requests=6000, seed=5, **CHAT)
    waiting, running = result.series.time_average(end_seconds=result.duration_seconds)
    in_system = waiting + running  # from the engine's event series
    throughput = result.completed / result.duration_seconds
    assert in_system == pytest.approx(throughput * result.e2e.mean_seconds, rel=0.03)
    assert result.mean_batch > 5  # a batching regime, not a trivial one


def test_event_series_and_step_groups_arrays_match_the_loops_lists(replica) -> None:
    # The arrays are built on first use from the lists the loop kept: same values, one per event / group.
    result = simulate(replica, rate_per_second=8.0, requests=500, seed=2, **CHAT)
    series = result.series
    assert series.seconds.dtype == np.float64 and series.running.dtype == np.int64
    assert series.seconds.tolist() == series.seconds_by_event and series.waiting.tolist() == series.waiting_by_event
    assert len(series.running) == result.events and result.max_running == int(series.running.max())
    assert np.all(np.diff(series.seconds) >= 0.0)  # event times never go back
    groups = result.itl_groups
    assert groups.shape == (len(result.step_groups[0]), 4)
    assert groups[:, 2].tolist() == [float(k) for k in result.step_groups[2]]
    # Every decoded token after the first is one gap: the groups hold (output - 1) gaps per request.
    assert float(np.dot(groups[:, 2], groups[:, 3])) == float((result.trace.output_tokens - 1).sum())


def test_tiny_rate_gives_prefill_ttft_and_batch1_decode_tpot(replica) -> None:
    prompt, output = 1000, 65
    result = simulate(replica, prompt_tokens=FixedTokens(tokens=prompt), output_tokens=FixedTokens(tokens=output),
                      rate_per_second=1e-4, requests=20, seed=1)
    prefill = step(replica.shape, replica.hardware, batch=1, new_tokens=prompt, context_tokens=0)
    decode_steps = [step(replica.shape, replica.hardware, batch=1, new_tokens=1, context_tokens=prompt + j).step_seconds
                    for j in range(output - 1)]
    np.testing.assert_allclose(result.trace.values("ttft"), prefill.step_seconds, rtol=1e-9)
    np.testing.assert_allclose(result.trace.values("tpot"), np.mean(decode_steps), rtol=1e-9)
    est = estimate("llama-3.1-8b", "h100-sxm", batch=1, prompt_tokens=prompt, output_tokens=output)
    assert result.ttft.p50_seconds == pytest.approx(est.ttft_seconds, rel=1e-9)
    assert result.tpot.p50_seconds == pytest.approx(est.tpot_seconds, rel=1e-3)  # estimate: mid-context step


def test_prefix_cache_skips_that_share_of_prefill(replica) -> None:
    result = simulate(replica, prompt_tokens=FixedTokens(tokens=2000), output_tokens=FixedTokens(tokens=10),
                      rate_per_second=1e-4, requests=3, prefix_cached_fraction=0.75)
    prefill = step(replica.shape, replica.hardware, batch=1, new_tokens=500, context_tokens=1500)
    np.testing.assert_allclose(result.trace.values("ttft"), prefill.step_seconds, rtol=1e-9)
    # A fully cached prompt still computes its last token, whose logits give the first output token.
    whole = simulate(replica, prompt_tokens=FixedTokens(tokens=2000), output_tokens=FixedTokens(tokens=10),
                     rate_per_second=1e-4, requests=1, prefix_cached_fraction=1.0)
    last = step(replica.shape, replica.hardware, batch=1, new_tokens=1, context_tokens=1999)
    np.testing.assert_allclose(whole.trace.values("ttft"), last.step_seconds, rtol=1e-9)


def test_latency_percentiles_never_fall_as_the_rate_rises(replica) -> None:
    previous = None
    for rate in (0.5, 2.0, 5.0, 8.0, 11.0, 14.0):
        result = simulate(replica, rate_per_second=rate, requests=3000, seed=2, **CHAT)
        current = np.array([getattr(getattr(result, m), f"p{p}_seconds") for m in ("ttft", "tpot", "e2e")
                            for p in (50, 90, 99)])
        if previous is not None:
            assert np.all(current >= previous), (rate, current - previous)
        previous = current


def test_burstier_arrivals_queue_more_at_the_same_rate(replica) -> None:
    poisson = simulate(replica, rate_per_second=9.0, requests=3000, seed=4, **CHAT)
    bursty = simulate(replica, rate_per_second=9.0, requests=3000, seed=4, burstiness=0.25, **CHAT)
    assert bursty.ttft.p90_seconds > poisson.ttft.p90_seconds
    gaps = np.diff(bursty.trace.arrival_seconds)
    assert gaps.mean() == pytest.approx(1 / 9.0, rel=0.1)
    assert gaps.std() / gaps.mean() == pytest.approx(2.0, rel=0.15)  # gamma shape 1/4: CV = 1/sqrt(0.25)


def test_replayed_arrivals_and_goodput(replica) -> None:
    times = [0.0, 0.0, 0.5, 3.0]
    lax = [SloLimit("ttft", 90, 10.0), SloLimit("tpot", 90, 1.0)]
    result = simulate(replica, prompt_tokens=FixedTokens(tokens=100), output_tokens=FixedTokens(tokens=20),
                      rate_per_second=None, replay_seconds=times, slo=lax)
    np.testing.assert_array_equal(result.trace.arrival_seconds, times)
    assert result.meets_slo and result.slo_attainment == 1.0
    assert result.goodput_requests_per_second == pytest.approx(result.requests_per_second)
    strict = simulate(replica, prompt_tokens=FixedTokens(tokens=100), output_tokens=FixedTokens(tokens=20),
                      rate_per_second=None, replay_seconds=times, slo=[SloLimit("ttft", 50, 1e-6)])
    assert strict.goodput_requests_per_second == 0.0 and strict.meets_slo is False


def test_kv_pressure_preempts_and_reserve_never_does() -> None:
    small = build_replica("llama-3.1-8b", "l4")  # ~4 GB of KV after 16 GB of bf16 weights
    heavy = {"prompt_tokens": UniformTokens(low_tokens=2000, high_tokens=4000),
             "output_tokens": UniformTokens(low_tokens=500, high_tokens=1500)}
    preempt = simulate(small, rate_per_second=5.0, requests=300, seed=1, **heavy)
    reserve = simulate(small, rate_per_second=5.0, requests=300, seed=1, kv_policy="reserve", **heavy)
    assert preempt.preemptions > 0 and reserve.preemptions == 0
    assert preempt.completed == reserve.completed == 300


def test_capacity_is_the_edge_of_the_slo(replica) -> None:
    slo = [SloLimit("ttft", 90, 0.5), SloLimit("tpot", 90, 0.03)]
    cap = capacity_for_replica(replica, CapacitySearch(slo=slo, requests=1500, seed=9, **CHAT))
    assert cap.feasible and cap.reason == ""
    assert 0 < cap.max_rate_requests_per_second <= cap.saturation_rate_requests_per_second
    assert cap.at_capacity is not None and cap.at_capacity.meets_slo
    above = simulate(replica, rate_per_second=cap.max_rate_requests_per_second * 1.1, requests=1500, seed=9, slo=slo, **CHAT)
    assert above.meets_slo is False
    assert cap.output_tokens_per_second == pytest.approx(cap.at_capacity.output_tokens_per_second)


def test_capacity_infeasible_says_why(replica) -> None:
    long_prompt = {"prompt_tokens": FixedTokens(tokens=8000), "output_tokens": FixedTokens(tokens=100)}
    cap = capacity_for_replica(replica, CapacitySearch(slo=[SloLimit("ttft", 90, 0.05)], requests=200, **long_prompt))
    prefill = step(replica.shape, replica.hardware, batch=1, new_tokens=8000, context_tokens=0).step_seconds
    assert not cap.feasible and cap.max_rate_requests_per_second == 0.0
    assert "prefill of a 8000-token prompt" in cap.reason and f"{prefill:.3g} s" in cap.reason
    assert "TTFT p90 limit 0.05 s" in cap.reason
    tpot = capacity_for_replica(replica, CapacitySearch(slo=[SloLimit("tpot", 90, 1e-4)], requests=50, **long_prompt))
    assert not tpot.feasible and "decode step alone" in tpot.reason
    too_big = capacity_for_replica(build_replica("llama-3.1-405b", "l4"),
                                   CapacitySearch(slo=[SloLimit("ttft", 90, 1.0)], **long_prompt))
    assert not too_big.feasible and "does not fit" in too_big.reason


def test_throughput_rises_and_interactivity_falls_with_concurrency(replica) -> None:
    points = throughput_interactivity_curve(replica, prompt_tokens=FixedTokens(tokens=500),
                                            output_tokens=FixedTokens(tokens=100), concurrency=(1, 4, 16, 64))
    per_gpu = [p.output_tokens_per_second_per_gpu for p in points]
    per_user = [p.output_tokens_per_second_per_user for p in points]
    assert per_gpu == sorted(per_gpu) and per_user == sorted(per_user, reverse=True)
    # Concurrency 1 is batch-1 decoding: tokens/s per user = 1 / TPOT = the whole replica's output rate.
    assert points[0].output_tokens_per_second_per_user == pytest.approx(1 / points[0].tpot_p50_seconds, rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_per_second": -1.0}, "--rate must be a positive number"),
        ({"rate_per_second": 0.0}, "--rate must be a positive number"),
        ({"rate_per_second": 1.0, "requests": 0}, "--requests must be between"),
        ({"rate_per_second": 1.0, "burstiness": 0.0}, "--burstiness must be > 0"),
        ({"rate_per_second": 1.0, "prefix_cached_fraction": 1.5}, "--prefix-cached-fraction"),
        ({"rate_per_second": 1.0, "max_num_seqs": 0}, "--max-num-seqs"),
    ],
)
def test_bad_input_names_the_flag(replica, kwargs: dict, message: str) -> None:
    with pytest.raises(CostmodelError, match=message):
        simulate(replica, prompt_tokens=FixedTokens(tokens=10), output_tokens=FixedTokens(tokens=10), **kwargs)


def test_zero_tokens_and_impossible_memory_are_refused(replica) -> None:
    with pytest.raises(CostmodelError, match=">= 1 prompt token"):
        simulate_requests(replica, arrival_seconds=np.zeros(2), prompt_tokens=np.array([5, 0]), output_tokens=np.array([5, 5]))
    with pytest.raises(CostmodelError, match="does not fit"):
        simulate(build_replica("llama-3.1-405b", "l4"), prompt_tokens=FixedTokens(tokens=10),
                 output_tokens=FixedTokens(tokens=10), rate_per_second=1.0)
    with pytest.raises(CostmodelError, match="no request fits"):
        simulate(replica, prompt_tokens=FixedTokens(tokens=120_000), output_tokens=FixedTokens(tokens=20_000),
                 rate_per_second=1.0, requests=3)
    for bad in (0, 2000, 2.5, True):
        with pytest.raises(CostmodelError, match="scheduler_steps must be an integer"):
            simulate_requests(replica, arrival_seconds=np.zeros(2), prompt_tokens=np.array([5, 5]),
                              output_tokens=np.array([5, 5]), scheduler_steps=bad)


def test_some_requests_too_long_are_rejected_and_counted(replica) -> None:
    result = simulate_requests(replica, arrival_seconds=np.array([0.0, 0.1]), prompt_tokens=np.array([100, 131_000]),
                               output_tokens=np.array([10, 2000]), slo=[SloLimit("ttft", 50, 100.0)])
    assert result.rejected == 1 and result.completed == 1
    assert result.meets_slo is False  # a rejected request counts as an infinite latency


def test_runaway_simulation_is_bounded_and_says_so(replica) -> None:
    limits = EngineLimits(max_batched_tokens=64, max_num_seqs=8, kv_capacity_bytes=replica.kv_budget_bytes_per_gpu,
                          kv_bytes_per_token=replica.kv_bytes_per_token_per_gpu, kv_bytes_per_sequence=0.0,
                          kv_policy="preempt", max_events=50)
    with pytest.raises(CostmodelError, match="simulation stopped after 50 engine events"):
        run_engine(dataclasses.replace(replica).timer, arrival_seconds=np.zeros(10), prompt_tokens=np.full(10, 5000),
                   cached_tokens=np.zeros(10, dtype=np.int64), output_tokens=np.full(10, 10), limits=limits)
