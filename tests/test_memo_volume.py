"""The memo's economics sweep (costmodel.decision.volume) against decide() and against hand arithmetic."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from test_memo_sample import sample_decision

from costmodel.decision.rank import Overrides, decide
from costmodel.decision.sensitivity import model_advantage
from costmodel.decision.volume import Scaling, cost_model, serves, throttled, usd_per_month
from costmodel.scenario import load_scenario, parse_scenario
from costmodel.units import HOURS_PER_MONTH

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
TODAY = dt.date(2026, 12, 1)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_model_reproduces_every_option_at_month_zero(path):
    scenario = load_scenario(path)
    decision = decide(scenario, today=TODAY)
    model = cost_model(decision, scenario)
    for option in decision.usable_options:  # the model holds what can be chosen (excluded: retired, ...)
        assert usd_per_month(model, option.name) == pytest.approx(option.usd_per_month, rel=1e-9), option.name
        assert throttled(model, option.name) == option.throttled, option.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize(("override", "scaling"), [
    (Overrides(volume=0.3), Scaling(volume=0.3)),
    (Overrides(volume=1.7), Scaling(volume=1.7)),
    (Overrides(volume=6.0), Scaling(volume=6.0)),
    (Overrides(volume=30.0), Scaling(volume=30.0)),
    (Overrides(gpu_price=0.8), Scaling(usd_per_gpu_hour=0.8)),
    (Overrides(api_price=1.25), Scaling(api_usd_per_mtok=1.25)),
], ids=lambda x: "-".join(f"{k}={v}" for k, v in vars(x).items() if v != 1.0))
def test_model_matches_decide_under_overrides(path, override, scaling):
    scenario = load_scenario(path)
    model = cost_model(decide(scenario, today=TODAY), scenario)
    again = decide(scenario, today=TODAY, overrides=override)
    for option in again.usable_options:
        assert usd_per_month(model, option.name, scaling) == pytest.approx(option.usd_per_month, rel=1e-9), option.name
        assert throttled(model, option.name, scaling) == option.throttled, option.name


def test_rate_limit_throttles_at_the_volume_where_peak_minute_passes_the_limit():
    # chat-assistant peak: 200,000/day x 30.4375 / 2,629,800 s x 12 x 24 / 156 = 4.27350 req/s = 256.41 req/min.
    # A 400 requests/min limit binds at 400 / 256.41 = 1.56x the volume.
    # The limit goes on llama-3.3-70b-deepinfra, the cheapest usable API (gpt-4.1-mini, the example's first
    # option, is excluded: its published TTFT p90 misses the 1 s SLO, so the volume sweep does not hold it).
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    (deepinfra,) = (o for o in data["options"] if o["name"] == "llama-3.3-70b-deepinfra")
    deepinfra["requests_per_minute_limit"] = 400
    scenario = parse_scenario(data)
    model = cost_model(decide(scenario, today=TODAY), scenario)
    name = "llama-3.3-70b-deepinfra"
    assert not throttled(model, name, Scaling(volume=1.55))
    assert throttled(model, name, Scaling(volume=1.57))
    for volume in (1.55, 1.57):
        again = decide(scenario, today=TODAY, overrides=Overrides(volume=volume))
        assert again.option(name).throttled == throttled(model, name, Scaling(volume=volume))


def test_self_host_steps_with_volume_by_hand():
    # Hand sample (tests/test_memo_sample.py): 70B on 4 x H100 at $3.99, 6.2557 req/s per replica, $8,000 ops.
    # At 2x volume the peak is 8.5470 req/s -> ceil(8.5470 / 6.2557) = 2 replicas.
    scenario, decision = sample_decision()
    model = cost_model(decision, scenario)
    expected = 2 * 4 * 3.99 * HOURS_PER_MONTH + 8000
    assert usd_per_month(model, "llama-3.3-70b-h100-tp4", Scaling(volume=2.0)) == pytest.approx(expected)
    # 20% cheaper GPUs scale only the GPU part.
    expected = 4 * 3.99 * 0.8 * HOURS_PER_MONTH + 8000
    assert usd_per_month(model, "llama-3.3-70b-h100-tp4", Scaling(usd_per_gpu_hour=0.8)) == pytest.approx(expected)


def test_token_mix_moves_api_cost_by_its_price_split():
    # gpt-4.1-mini: prompt side $0.000420, output side $0.000560 per request (sample docstring).
    # 20% more output tokens: 0.000420 + 1.2 x 0.000560 = $0.001092 per request, x 6,087,500 requests.
    scenario, decision = sample_decision()
    model = cost_model(decision, scenario)
    got = usd_per_month(model, "gpt-4.1-mini", Scaling(output_tokens=1.2))
    assert got == pytest.approx(6_087_500 * 0.001092)


def test_flip_volume_is_where_the_second_l40s_replica_costs_less_than_the_api():
    # deepinfra costs $2,952.4375/month at 1x and scales linearly. The 8B on one L40S ($1.5484 x 730.5 h =
    # $1,131.1062 per replica, + $4,000 ops) serves a peak of 7.3646 req/s per replica: one replica up to
    # 7.3646 / 4.2735 = 1.7233x, where the API still costs less (2,952 x 1.7233 = $5,088 < $5,131).
    # With two replicas ($6,262.21) the API passes it at 6,262.2124 / 2,952.4375 = 2.12103x.
    scenario, decision = sample_decision()
    model = cost_model(decision, scenario)
    assert not model_advantage(model, Scaling(volume=2.120), strict=True).flips
    flipped = model_advantage(model, Scaling(volume=2.122), strict=True)
    assert flipped.flips and flipped.alternative == "llama-3.1-8b-l40s"
    replica = 1.5484 * HOURS_PER_MONTH
    crossing = (2 * replica + 4000) / 2952.4375
    assert math.isclose(crossing, 2.12103, rel_tol=1e-5)


def test_capacity_factors_scale_one_option_and_zero_removes_it():
    # Half the 8B's 7.3646 req/s is 3.6823 < the 4.2735 req/s peak: two L40S replicas (2 x $1,131.11 + $4,000).
    scenario, decision = sample_decision()
    model = cost_model(decision, scenario)
    half = Scaling(capacity_factors=(("llama-3.1-8b-l40s", 0.5),))
    assert usd_per_month(model, "llama-3.1-8b-l40s", half) == pytest.approx(2 * 1.5484 * HOURS_PER_MONTH + 4000)
    assert usd_per_month(model, "llama-3.3-70b-h100-tp4", half) == pytest.approx(4 * 3.99 * HOURS_PER_MONTH + 8000)
    gone = Scaling(capacity_factors=(("llama-3.1-8b-l40s", 0.0),))
    assert not serves(model, "llama-3.1-8b-l40s", gone)
    # Without the 8B the best alternative to deepinfra is gpt-4.1-mini: $5,965.75 - $2,952.44.
    advantage = model_advantage(model, gone, strict=True)
    assert advantage.alternative == "gpt-4.1-mini"
    assert advantage.usd_per_month == pytest.approx(6_087_500 * (0.000980 - 0.000485))
