"""Tornado, flip volume and chart data of the memo, against arithmetic written out here.

The tornado and flip tests run on their own scenario, a copy of chat-assistant made to exercise the mechanism
(a self-hosted alternative whose cost steps with replicas, next to per-token APIs): the bundled example's quality
floor (at least llama-3.3-70b) excludes the 8B, and without it the runner-up is claude-haiku-4.5, the GPU price
moves nothing and the decision never flips. The copy drops the floor, accepts unverified API latency (so the
unmeasured deepinfra row can be recommended), and keeps a 1-month horizon; the fleet policy is the production
default (interactive: 80% target, at least 2 replicas, N+1).

chat-assistant at today's sheet prices (pricing_data/*.csv, checked 2026-11-29):
- deepinfra/llama-3.3-70b: 1500 x $0.23 + 350 x $0.40 per M = $0.000485/request x 6,087,500 = $2,952.4375/month.
- openai/gpt-4.1-mini: 900 x 0.40 + 600 x 0.10 (cached) + 350 x 1.60 per M = $0.000980 -> $5,965.75/month; never an
  alternative: its published TTFT p90 (1.58 s) misses the 1 s SLO.
- anthropic/claude-haiku-4-5: 900 x 1.00 + 600 x 0.10 + 350 x 5.00 per M = $0.002710 -> $16,497.125/month.
- llama-3.1-8b fp8 on L40S (nebius, $1.5484/GPU-h): $1.5484 x 730.5 h = $1,131.1062 per replica-month; today's
  peak 4.27 req/s needs max(2 (floor), ceil(4.27 / (0.8 mu)), ceil(4.27 / mu) + 1) = 2 replicas at mu = 5.92 req/s
  per replica (capacity at the SLO tightened by vllm's documented error): 2 x 1,131.1062 + $4,000 ops = $6,262.2124.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from statistics import NormalDist

import pytest
from test_memo_sample import sample_decision

from costmodel.decision.rank import decide
from costmodel.decision.sensitivity import Advantage, sensitivity
from costmodel.decision.volume import cost_model
from costmodel.memo.curves import peak_concurrency, quantile_tokens, traffic_curves, volume_range
from costmodel.memo.text import sensitivity_blocks
from costmodel.scenario import FixedTokens, LognormalTokens, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
TODAY = dt.date(2026, 12, 1)
DEEPINFRA = 6_087_500 * 0.000485
MINI = 6_087_500 * 0.000980
L40S_REPLICA = 1.5484 * 730.5
SMALL = 2 * L40S_REPLICA + 4000  # two replicas: the interactive floor, and N+1 at today's peak
PEAK = 200_000 * 30.4375 / 2_629_800 * 12 * 24 / 156  # 4.27350 req/s: the peak hour of the diurnal profile


@pytest.fixture(scope="module")
def chat():
    # The mechanism's own scenario (module docstring): no quality floor, so the 8B L40S is the self-hosted
    # alternative; unmeasured APIs rank as verified (accept_unverified_latency) so deepinfra is recommended; a
    # 1-month horizon keeps the figures month 0's.
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data.update(quality=None, horizon_months=1, accept_unverified_latency=True)
    scenario = parse_scenario(data)
    decision = decide(scenario, today=TODAY)
    return scenario, decision, sensitivity(scenario, decision, cost_model(decision, scenario), today=TODAY)


def bar(result, factor):
    return next(b for b in result.bars if b.factor == factor)


def test_base_advantage_is_the_runner_up_minus_the_recommendation(chat):
    _, decision, result = chat
    assert decision.recommendation == "llama-3.3-70b-deepinfra"
    assert decision.option("llama-3.1-8b-l40s").replicas == 2
    assert result.base == Advantage(pytest.approx(SMALL - DEEPINFRA), "llama-3.1-8b-l40s")


def test_gpu_price_moves_only_the_self_hosted_alternative(chat):
    # +-20% on the GPU part of the 8B's two replicas (ops and replica count unchanged): 3,309.77 -+ 452.44.
    gpu = bar(chat[2], "gpu_price")
    assert gpu.method == "decide"
    assert gpu.low == Advantage(pytest.approx(SMALL - 0.2 * 2 * L40S_REPLICA - DEEPINFRA), "llama-3.1-8b-l40s")
    assert gpu.high == Advantage(pytest.approx(SMALL + 0.2 * 2 * L40S_REPLICA - DEEPINFRA), "llama-3.1-8b-l40s")


def test_api_price_moves_the_recommendation_but_no_api_becomes_the_alternative(chat):
    # Every API x 0.8 / x 1.2. gpt-4.1-mini would be the cheapest alternative at -20% (0.8 x 5,965.75 = 4,772.60 <
    # 6,262.21), but its published TTFT p90 misses the SLO, so it is never eligible; haiku at -20% is still
    # 13,197.70 > 6,262.21. The 8B stays the alternative at both ends and only the recommendation's cost moves.
    _, decision, result = chat
    assert decision.option("gpt-4.1-mini").slo_status == "misses"
    assert 0.8 * MINI < SMALL  # it would have been the alternative had it met the SLO
    assert decision.option("claude-haiku-4.5").usd_per_month == pytest.approx(16_497.125)
    assert SMALL < 0.8 * 16_497.125  # haiku at -20% stays dearer than the 8B
    api = bar(result, "api_price")
    assert api.low == Advantage(pytest.approx(SMALL - 0.8 * DEEPINFRA), "llama-3.1-8b-l40s")
    assert api.high == Advantage(pytest.approx(SMALL - 1.2 * DEEPINFRA), "llama-3.1-8b-l40s")


def test_efficiency_changes_nothing_while_one_replica_still_covers_the_peak(chat):
    # The 8B serves 5.92 req/s per replica at the SLO; about 20% less (~4.74) is still above the 4.27 req/s peak,
    # so N+1 still needs ceil(4.27 / 4.74) + 1 = 2 replicas, and 80% of two such replicas (7.6) covers it: the
    # fleet stays at the floor of 2.
    efficiency = bar(chat[2], "efficiency")
    assert efficiency.low.usd_per_month == pytest.approx(chat[2].base.usd_per_month)
    assert efficiency.high.usd_per_month == pytest.approx(chat[2].base.usd_per_month)
    assert efficiency.swing_usd_per_month == pytest.approx(0.0, abs=1e-6)


def test_bars_are_sorted_by_swing_and_none_flips(chat):
    swings = [b.swing_usd_per_month for b in chat[2].bars]
    assert swings == sorted(swings, reverse=True)
    assert not any(b.low.flips or b.high.flips for b in chat[2].bars)


def replicas_8b(*, volume: float, mu: float) -> int:
    """The 8B fleet at `volume` x today (decision/fleet.py): floor 2, 80% target, N+1."""
    peak = PEAK * volume
    return max(2, math.ceil(peak / (0.8 * mu)), math.ceil(peak / mu) + 1)


def test_flip_volume_is_the_third_l40s_replica_crossing(chat):
    # Two 8B replicas ($6,262.21) would cost less than deepinfra from 6,262.2124 / 2,952.4375 = 2.121x today, but
    # two replicas carry the peak only up to min(0.8 x 2, 1) x mu / 4.27350 = 5.9250 / 4.27350 = 1.3864x (N+1: one
    # down, the other alone); from there to 2 mu / 4.27350 = 2.7729x the fleet is 3 replicas, $7,393.3186, which deepinfra reaches
    # at 7,393.3186 / 2,952.4375 = 2.50414x today: the first crossing.
    _, decision, result = chat
    mu = decision.option("llama-3.1-8b-l40s").capacity_requests_per_second
    assert mu == pytest.approx(5.92, abs=0.01)  # the simulated capacity (vllm profile, its fitted CPU costs)
    flip = (3 * L40S_REPLICA + 4000) / DEEPINFRA
    assert flip == pytest.approx(2.50414, rel=1e-5)
    assert replicas_8b(volume=1.0, mu=mu) == 2 and replicas_8b(volume=1.38, mu=mu) == 2
    assert replicas_8b(volume=1.39, mu=mu) == 3
    assert replicas_8b(volume=flip, mu=mu) == 3 and replicas_8b(volume=2.80, mu=mu) == 4
    assert result.flip_below is None
    assert result.flip_above is not None
    assert result.flip_above.new_choice == "llama-3.1-8b-l40s"
    assert result.flip_above.volume_scale == pytest.approx(flip, rel=1e-6)
    lo, hi = volume_range(chat[1], result)
    assert lo <= 0.1 and hi >= 2 * result.flip_above.volume_scale


def test_advantage_flips_when_the_recommendation_fails():
    assert Advantage(500.0, "x", recommendation_fails=True).flips
    assert Advantage(0.0, "x").flips
    assert not Advantage(1.0, "x").flips
    assert not Advantage(math.inf, None).flips


def test_p99_tokens_of_a_lognormal_and_a_fixed_distribution():
    # Lognormal with mean m and sigma s: mu = ln m - s^2/2, p99 = exp(mu + z_0.99 s), z_0.99 = 2.3263.
    dist = LognormalTokens(mean_tokens=1500, sigma=0.8)
    expected = math.exp(math.log(1500) - 0.32 + NormalDist().inv_cdf(0.99) * 0.8)  # 7,009.2 tokens
    assert quantile_tokens(dist, quantile=0.99) == math.ceil(expected)
    assert quantile_tokens(FixedTokens(tokens=4096), quantile=0.99) == 4096


def test_peak_concurrency_is_littles_law():
    # Hand sample: 70B, one replica, peak 4.27350 req/s, p90 TTFT 0.21 s, TPOT 0.046 s, 350 output tokens:
    # L = 4.27350 x (0.21 + 349 x 0.046) = 4.27350 x 16.264 = 69.504 sequences.
    _, decision = sample_decision()
    option = decision.option("llama-3.3-70b-h100-tp4")
    assert peak_concurrency(decision, option) == pytest.approx(12 / 156 * 24 * 200_000 / 86_400 * 16.264, rel=1e-9)
    assert peak_concurrency(decision, decision.option("gpt-4.1-mini")) is None


def test_traffic_is_mean_times_profile_against_replicas_times_capacity():
    _, decision = sample_decision()
    traffic = traffic_curves(decision)
    assert max(traffic.requests_per_second) == pytest.approx(decision.peak_requests_per_second)
    assert sum(traffic.requests_per_second) / 24 == pytest.approx(decision.mean_requests_per_second)
    assert dict(traffic.provisioned) == {"llama-3.3-70b-h100-tp4": pytest.approx(6.2557),
                                         "llama-3.1-8b-l40s": pytest.approx(7.3646)}


def test_growth_reaches_the_flip_in_about_twelve_months(chat):
    # 2.50414x at 8%/month growth is ln(2.50414) / ln(1.08) = 11.93 months, i.e. "about 12";
    # 2.50414 x 200,000 x 30.4375 x 1,850 tokens = 28.20B tokens/month.
    scenario, decision, result = chat
    assert result.flip_above is not None
    assert result.flip_above.tokens_per_month == pytest.approx(2.50414 * 200_000 * 30.4375 * 1850, rel=1e-5)
    assert math.log(2.50414) / math.log(1.08) == pytest.approx(11.93, abs=0.01)
    (para,) = sensitivity_blocks(decision, scenario, result)
    assert "28.20B tokens/month (2.5x today)" in para.text
    assert "about 12 months" in para.text
