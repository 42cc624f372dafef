"""The capacity search's shortcuts give the full path's answers: a run stopped once its SLO miss is certain
(serving/early_stop.py) misses in the full run too, and a run that is not stopped is the full run; a
`FinishedRun`'s verdict and rate equal its summary's; the capacity is the same with and without them."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from costmodel.scenario.distributions import LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import CapacitySearch, build_replica, capacity_for_replica
from costmodel.serving import capacity as capacity_module
from costmodel.serving.early_stop import SloMissed, misses_needed
from costmodel.serving.simulation import draw_lengths, run_requests, unit_gaps

PROMPTS = LognormalTokens(mean_tokens=1500, sigma=0.8)
OUTPUTS = LognormalTokens(mean_tokens=300, sigma=0.7)


@pytest.fixture(scope="module")
def replica():
    return build_replica("llama-3.1-8b", "l40s", weight_dtype="fp8", kv_dtype="fp8")


def _same(a, b) -> bool:
    """Two simulation results alike in every reported figure and every request's times."""
    times = ("admitted_seconds", "first_token_seconds", "finish_seconds")
    return repr(a.contract()) == repr(b.contract()) and all(
        np.array_equal(getattr(a.trace, t), getattr(b.trace, t), equal_nan=True) for t in times)


def _random_limits(rng: np.random.Generator) -> list[SloLimit]:
    limits = [SloLimit("ttft", int(rng.choice([50, 90, 99])), float(rng.uniform(0.2, 3.0))),
              SloLimit("tpot", int(rng.choice([50, 90, 99])), float(rng.uniform(0.02, 0.08)))]
    if rng.random() < 0.5:
        limits.append(SloLimit("e2e", 90, float(rng.uniform(5.0, 30.0))))
    return limits


def test_percentile_with_that_many_values_over_the_limit_is_over_it() -> None:
    rng = np.random.default_rng(1)
    for _ in range(2000):
        values, percentile = int(rng.integers(1, 3000)), int(rng.choice([50, 90, 95, 99]))
        needed = misses_needed(values=values, percentile=percentile)
        assert 1 <= needed <= values
        sample = np.concatenate((rng.uniform(0.0, 1.0, values - needed), rng.uniform(1.0 + 1e-12, 2.0, needed)))
        assert np.percentile(rng.permutation(sample), percentile) > 1.0


def test_a_stopped_run_misses_and_a_finished_one_is_the_full_run(replica) -> None:
    rng = np.random.default_rng(7)
    stopped = finished = 0
    for trial in range(24):
        requests = int(rng.integers(200, 600))
        prompts, outputs = draw_lengths(prompt_tokens=PROMPTS, output_tokens=OUTPUTS, requests=requests, seed=trial)
        gaps = unit_gaps(requests=requests, burstiness=float(rng.choice([0.5, 1.0, 2.0])), seed=trial)
        rate = float(rng.uniform(1.0, 40.0))
        run = functools.partial(run_requests, replica, arrival_seconds=np.concatenate(([0.0], np.cumsum(gaps[:-1]))) / rate,
                                prompt_tokens=prompts, output_tokens=outputs, slo=_random_limits(rng), rate_per_second=rate,
                                prefix_cached_fraction=float(rng.choice([0.0, 0.4])),
                                kv_policy=str(rng.choice(["preempt", "reserve"])))
        full = run()
        try:
            early = run(stop_on_miss=True)
        except SloMissed:
            stopped += 1
            assert full.meets_slo is False
            continue
        finished += 1
        assert early.meets_slo == full.meets_slo
        assert _same(early.summary(), full.summary())
    assert stopped >= 3 and finished >= 3  # both paths taken (the test checks something either way)


def test_finished_run_answers_as_its_summary(replica) -> None:
    prompts, outputs = draw_lengths(prompt_tokens=PROMPTS, output_tokens=OUTPUTS, requests=300, seed=3)
    for arrivals in (np.zeros(300), np.arange(300) / 8.0):
        run = run_requests(replica, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
                           slo=[SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05)])
        summary = run.summary()
        assert (run.meets_slo, run.requests_per_second) == (summary.meets_slo, summary.requests_per_second)


def test_capacity_is_the_same_without_the_shortcuts(replica, monkeypatch: pytest.MonkeyPatch) -> None:
    search = CapacitySearch(prompt_tokens=PROMPTS, output_tokens=OUTPUTS, requests=400, rate_tolerance=0.05,
                            slo=[SloLimit("ttft", 90, 1.0), SloLimit("ttft", 99, 2.5), SloLimit("tpot", 90, 0.05)])
    fast = capacity_for_replica(replica, search)

    def full_run(*args, stop_on_miss: bool = False, **kwargs):  # every run to its end
        return run_requests(*args, **kwargs)

    monkeypatch.setattr(capacity_module, "run_requests", full_run)
    slow = capacity_for_replica(replica, search)
    assert fast.feasible and fast.simulations == slow.simulations
    for name in ("max_rate_requests_per_second", "failing_rate_requests_per_second",
                 "saturation_rate_requests_per_second", "output_tokens_per_second", "zero_load_seconds"):
        assert getattr(fast, name) == getattr(slow, name), name
    assert fast.at_capacity is not None and slow.at_capacity is not None
    assert _same(fast.at_capacity, slow.at_capacity)


def test_saturation_run_gives_up_as_the_search_would_after_it(replica, monkeypatch: pytest.MonkeyPatch) -> None:
    search = CapacitySearch(prompt_tokens=PROMPTS, output_tokens=OUTPUTS, requests=400, rate_tolerance=0.05,
                            slo=[SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05)])
    saturation = capacity_for_replica(replica, search).saturation_rate_requests_per_second
    stopped_in_flood = []

    def outcome(threshold: float) -> str:
        try:  # given up below `threshold` requests/s: monotone, as the search's test
            result = capacity_for_replica(replica, search, give_up=lambda upper: upper < threshold)
        except capacity_module.CapacityNotNeeded:
            return "not needed"
        return repr((result.max_rate_requests_per_second, result.simulations, result.upper_bound_requests_per_second))

    def watched(*args, **kwargs):
        try:
            return run_requests(*args, **kwargs)
        except capacity_module.CapacityNotNeeded:
            stopped_in_flood.append(kwargs.get("on_rate_bound") is not None)
            raise

    thresholds = [saturation * f for f in (0.3, 0.6, 0.9, 0.999, 1.001, 1.2, 3.0, 30.0)]
    monkeypatch.setattr(capacity_module, "run_requests", watched)
    fast = [outcome(t) for t in thresholds]

    def full_run(*args, on_rate_bound=None, **kwargs):  # the saturation run to its end
        return run_requests(*args, **kwargs)

    monkeypatch.setattr(capacity_module, "run_requests", full_run)
    assert fast == [outcome(t) for t in thresholds]
    assert "not needed" in fast and fast[0] != "not needed"
    assert any(stopped_in_flood)  # the shortcut was taken
