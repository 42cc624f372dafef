"""ITL (inter-token latency) and the batch-means confidence intervals of simulated percentiles.

Checks written out from definitions, no fitted numbers:
- every gap of every request is one engine step a decoding sequence took part in, so with no preemption
  the gaps of all requests sum to sum(E2E - TTFT) and number sum(output - 1) (each request's last token
  minus its first, split into output - 1 gaps); with equal outputs the pooled mean gap equals mean TPOT;
- the pooled percentile is np.percentile of the gaps written out one per token (vLLM's `itls` list);
- a 95% batch-means interval of the median of independent normal samples covers the true median (0) in
  about 95% of seeded trials.
"""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.scenario.distributions import FixedTokens, LognormalTokens
from costmodel.serving import build_replica, simulate
from costmodel.serving.confidence import BATCHES, percentile_interval, weighted_percentiles
from costmodel.serving.itl import step_gaps

CHAT = {"prompt_tokens": LognormalTokens(mean_tokens=1000, sigma=0.8), "output_tokens": LognormalTokens(mean_tokens=250, sigma=0.6)}


@pytest.fixture(scope="module")
def replica():
    return build_replica("llama-3.1-8b", "h100-sxm")


def _assert_gaps_add_up(result) -> None:  # type: ignore[no-untyped-def]
    """Every completed request's output - 1 gaps, summed over the step groups, equal sum(E2E - TTFT)."""
    assert result.preemptions == 0
    seconds, sequences = step_gaps(result.itl_groups)
    outputs = result.trace.output_tokens[result.trace.completed]
    assert int(sequences.sum()) == int((outputs - 1).sum())
    decode_seconds = result.trace.values("e2e") - result.trace.values("ttft")
    assert float(np.dot(seconds, sequences)) == pytest.approx(float(decode_seconds.sum()), rel=1e-9)


def test_gaps_add_up_to_each_requests_decode_time(replica) -> None:
    _assert_gaps_add_up(simulate(replica, rate_per_second=8.0, requests=3000, seed=2, **CHAT))


def test_prefill_only_steps_keep_the_gaps_adding_up() -> None:
    # SGLang's default (no mixed prefill/decode): a decoder's gap spans the prefill-only steps it waited
    # through, so the gaps still sum to sum(E2E - TTFT); and those stalls lengthen the slowest gaps.
    from costmodel.serving.profile import engine_settings

    sglang = build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings("sglang", longest_prompt_tokens=4000))
    assert not sglang.mixed_prefill_decode
    result = simulate(sglang, rate_per_second=8.0, requests=2000, seed=2, **CHAT)
    _assert_gaps_add_up(result)
    mixed = simulate(sglang, rate_per_second=8.0, requests=2000, seed=2, mixed_prefill_decode=True, **CHAT)
    assert result.tpot.p90_seconds > mixed.tpot.p90_seconds


def test_itl_percentiles_are_the_per_token_gap_percentiles(replica) -> None:
    result = simulate(replica, rate_per_second=8.0, requests=800, seed=4, **CHAT)
    seconds, sequences = step_gaps(result.itl_groups)
    per_token = np.repeat(seconds, sequences)  # one entry per streamed token after the first
    expected = np.percentile(per_token, [50, 90, 99])
    got = (result.itl.p50_seconds, result.itl.p90_seconds, result.itl.p99_seconds)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert result.itl.mean_seconds == pytest.approx(float(per_token.mean()), rel=1e-12)
    # Stalls behind prefills: the slowest gaps (mixed steps) are longer than the median TPOT.
    assert result.itl.p99_seconds > result.tpot.p50_seconds


def test_pooled_mean_gap_equals_mean_tpot_with_equal_outputs(replica) -> None:
    result = simulate(replica, rate_per_second=5.0, requests=1500, seed=1,
                      prompt_tokens=LognormalTokens(mean_tokens=800, sigma=0.5), output_tokens=FixedTokens(tokens=128))
    assert result.itl.mean_seconds == pytest.approx(result.tpot.mean_seconds, rel=1e-9)


def test_weighted_percentiles_match_the_repeated_array() -> None:
    rng = np.random.default_rng(7)
    values, weights = rng.random(500), rng.integers(0, 5, 500)
    qs = (0.0, 12.5, 50.0, 90.0, 99.0, 100.0)
    np.testing.assert_allclose(weighted_percentiles(values, weights, qs), np.percentile(np.repeat(values, weights), qs),
                               rtol=1e-12)


def test_batch_means_interval_covers_the_true_median_about_95_percent() -> None:
    covered = 0
    trials = 400
    for seed in range(trials):
        values = np.random.default_rng(seed).standard_normal(2000)
        interval = percentile_interval(values, 50)
        covered += interval.low <= 0.0 <= interval.high
    assert 0.90 <= covered / trials <= 0.99


def test_simulated_percentiles_carry_intervals_around_them(replica) -> None:
    result = simulate(replica, rate_per_second=8.0, requests=3000, seed=3, **CHAT)
    payload = result.contract()
    for name in ("ttft", "tpot", "e2e", "queue", "itl"):
        for q in ("p50", "p90", "p99"):
            value = payload[f"{name}_{q}_seconds"]
            low, high = payload[f"{name}_{q}_seconds_ci_low"], payload[f"{name}_{q}_seconds_ci_high"]
            assert isinstance(value, float) and isinstance(low, float) and isinstance(high, float)
            assert 0.0 <= low <= value <= high, (name, q)
    few = simulate(replica, rate_per_second=8.0, requests=2 * BATCHES - 1, seed=3, **CHAT)
    assert np.isnan(few.ttft.p90_ci.low)  # too few requests for ten batches of two: no interval
