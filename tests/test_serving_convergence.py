"""Converged capacity: independent replications give it a 95% interval, and the decision (`compare`, the
memo) and the app's Latency page (`charts.latency.option_latency`) report the same capacity per option.

The interval is mean +- t(0.975, 4) x sd / sqrt(5) over five capacity searches with independent seeds
(t = 2.776, NIST/SEMATECH table 1.3.6.7.2); converged means its half-width is within 5% of the mean.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from costmodel.charts.latency import option_latency
from costmodel.decision.rank import decide
from costmodel.scenario import load_scenario
from costmodel.scenario.distributions import LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import CapacitySearch, build_replica, converged_capacity
from costmodel.serving.capacity import (
    CONVERGE_RATE_TOLERANCE,
    CONVERGE_START_REQUESTS,
    CONVERGED_HALF_WIDTH,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PROMPT, OUTPUT = LognormalTokens(mean_tokens=1024, sigma=0.8), LognormalTokens(mean_tokens=256, sigma=0.6)
SLO = (SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05))


def _search(*, seed: int = 0, requests: int = CONVERGE_START_REQUESTS) -> CapacitySearch:
    """The converging search's settings: start at the decision's request count and rate tolerance."""
    return CapacitySearch(prompt_tokens=PROMPT, output_tokens=OUTPUT, slo=SLO, seed=seed, requests=requests,
                          rate_tolerance=CONVERGE_RATE_TOLERANCE)


def test_converged_capacity_within_its_interval_across_seeds() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    results = [converged_capacity(replica, _search(seed=seed)) for seed in range(3)]
    for result in results:
        assert result.feasible and result.converged
        rate = result.max_rate_requests_per_second
        assert result.capacity_ci_low <= rate <= result.capacity_ci_high
        assert 0.5 * (result.capacity_ci_high - result.capacity_ci_low) <= CONVERGED_HALF_WIDTH * rate
    for a, b in itertools.combinations(results, 2):  # independent seeds: the intervals agree with each other
        assert a.capacity_ci_low <= b.capacity_ci_high and b.capacity_ci_low <= a.capacity_ci_high


def test_work_bound_says_not_converged() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    result = converged_capacity(replica, _search(requests=40), max_requests=40)
    assert result.requests_per_simulation == 40  # no doubling past the bound
    half_width = 0.5 * (result.capacity_ci_high - result.capacity_ci_low)
    assert result.converged == (half_width <= CONVERGED_HALF_WIDTH * result.max_rate_requests_per_second)


def test_latency_page_and_compare_report_the_same_capacity() -> None:
    scenario = load_scenario(EXAMPLES / "chat-assistant.yaml")
    decision = decide(scenario)
    option = next(o for o in scenario.options if o.kind == "self-host")
    compared = next(r for r in decision.options if r.name == option.name)
    page = option_latency(option, scenario.workload, scenario.slo, requests=200)
    assert compared.capacity_requests_per_second is not None and compared.capacity_requests_per_second > 0
    assert page.capacity_requests_per_second == pytest.approx(compared.capacity_requests_per_second, rel=1e-12)


def test_interval_covers_the_bisection_bracket_when_replications_agree() -> None:
    """Fixed lengths make every replication's flood (and so its saturation) identical; when the SLO holds up
    to saturation the five bisections end at the same rate. The interval must still cover the bracket the
    search left, [rate, lowest failing rate), not collapse to a point."""
    from costmodel.scenario.distributions import FixedTokens

    replica = build_replica("llama-3.1-8b", "h100-sxm")
    search = CapacitySearch(prompt_tokens=FixedTokens(tokens=1024), output_tokens=FixedTokens(tokens=256),
                            slo=(SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05)), seed=0,
                            requests=CONVERGE_START_REQUESTS, rate_tolerance=CONVERGE_RATE_TOLERANCE)
    result = converged_capacity(replica, search)
    rate = result.max_rate_requests_per_second
    assert result.feasible and result.failing_rate_requests_per_second > rate
    assert result.capacity_ci_low <= rate < result.failing_rate_requests_per_second <= result.capacity_ci_high
    assert result.converged == (0.5 * (result.capacity_ci_high - result.capacity_ci_low) <= CONVERGED_HALF_WIDTH * rate)
