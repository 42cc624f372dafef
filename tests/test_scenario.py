"""Scenario files: examples load and reference known ids, validation errors name field and fix,
volume/traffic arithmetic, distribution moments, and the exported JSON Schema is up to date."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from costmodel.errors import CostmodelError
from costmodel.pricing import load_api_prices, load_gpu_prices
from costmodel.scenario import (
    EmpiricalTokens,
    FixedTokens,
    LognormalTokens,
    UniformTokens,
    check_scenario_ids,
    load_scenario,
    parse_scenario,
    scenario_json_schema_text,
)
from costmodel.scenario.model import SCHEMA_PATH

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_NAMES = ["chat-assistant", "rag-service", "batch-summarizer"]
MODEL_IDS = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"}
HARDWARE_IDS = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-80gb", "a100-40gb", "l40s", "l4", "mi300x", "rtx-4090"}


def _example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples_load_and_reference_known_ids(name: str) -> None:
    scenario = load_scenario(EXAMPLES / f"{name}.yaml")
    kinds = [o.kind for o in scenario.options]
    assert kinds.count("api") >= 2 and kinds.count("self-host") >= 2 and kinds.count("hybrid") >= 1
    api, gpu = load_api_prices(), load_gpu_prices()
    check_scenario_ids(
        scenario, api_price_ids=api.ids(), gpu_offerings={r.id: r.accelerator_id for r in gpu.rows},
        model_ids=MODEL_IDS, hardware_ids=HARDWARE_IDS,
    )
    # Examples pin their evaluation date, so this holds on any day the suite runs.
    assert scenario.as_of is not None, "examples pin `as_of` so their output does not depend on the day"
    for option in scenario.options:  # examples must not lean on API models retired at their as_of
        if option.kind == "api":
            assert not api.get(option.price_id).is_retired(today=scenario.as_of), option.price_id


def test_json_and_yaml_load_the_same(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(_example("chat-assistant")), encoding="utf-8")
    assert load_scenario(path) == load_scenario(EXAMPLES / "chat-assistant.yaml")


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(CostmodelError) as err:
        parse_scenario(data, where="s.yaml")
    return str(err.value)


def test_negative_volume_names_the_field() -> None:
    data = _example("chat-assistant")
    data["workload"]["requests_per_day"] = -5
    message = _error(data)
    assert "s.yaml: workload.requests_per_day" in message and "greater than 0" in message and "-5" in message


def test_missing_slo_says_what_to_add() -> None:
    data = _example("chat-assistant")
    del data["slo"]
    assert "slo: missing; add an `slo:` section with ttft_p90_seconds and tpot_p90_seconds" in _error(data)
    data = _example("chat-assistant")
    del data["slo"]["tpot_p90_seconds"]
    assert "slo.tpot_p90_seconds: missing" in _error(data)


def test_volume_and_traffic_shape_must_be_given_once() -> None:
    data = _example("batch-summarizer")
    data["workload"]["tokens_per_month"] = 1e9
    assert "exactly one of requests_per_day or tokens_per_month" in _error(data)
    data = _example("batch-summarizer")
    del data["workload"]["peak_to_mean_ratio"]
    assert "hourly_traffic_weights (24 numbers) or peak_to_mean_ratio" in _error(data)
    data = _example("chat-assistant")
    data["workload"]["hourly_traffic_weights"] = [1.0] * 23
    assert "has 23 numbers; give 24" in _error(data)


def test_option_errors_name_the_option() -> None:
    data = _example("chat-assistant")
    data["options"][3]["gpus_per_replica"] = 0
    assert "options[3].gpus_per_replica" in _error(data)
    data = _example("chat-assistant")
    data["options"][0]["pricee_id"] = "x"
    assert "options[0].pricee_id: unknown field" in _error(data)
    data = _example("chat-assistant")
    data["options"][5]["api"] = "llama-3.3-70b-h100-tp4"
    assert "must name a api option" in _error(data)
    data = _example("chat-assistant")
    data["options"].append(copy.deepcopy(data["options"][0]))
    assert "rename the repeated gpt-4.1-mini" in _error(data)


def test_unknown_ids_raise_with_field_and_suggestion() -> None:
    scenario = load_scenario(EXAMPLES / "chat-assistant.yaml")
    api_ids = set(load_api_prices().ids()) - {"openai/gpt-4.1-mini"}
    with pytest.raises(CostmodelError, match=r"options\[0\] \('gpt-4.1-mini'\)\.price_id: unknown API price id"):
        check_scenario_ids(scenario, api_price_ids=api_ids)
    with pytest.raises(CostmodelError, match=r"options\[3\].*\.model: unknown model 'llama-3.3-70b'"):
        check_scenario_ids(scenario, model_ids={"llama-3.1-70b"})
    with pytest.raises(CostmodelError, match=r"\.offering: 'lambda/h100-sxm/on-demand-4x' is for h200, not h100-sxm"):
        check_scenario_ids(scenario, gpu_offerings={"lambda/h100-sxm/on-demand-4x": "h200",
                                                    "nebius/l40s/on-demand": "l40s"})


def test_volume_arithmetic() -> None:
    workload = load_scenario(EXAMPLES / "batch-summarizer.yaml").workload
    # 50,000 requests/day x 30.4375 days/month = 1,521,875 requests; x (4000 + 400) tokens = 6.69625e9 tokens.
    assert workload.requests_per_month() == pytest.approx(1_521_875)
    assert workload.tokens_per_month_total() == pytest.approx(6.69625e9)
    # growth 3%/month: twelve months ahead x 1.03^12 = 1.425761
    assert workload.requests_per_month(months_ahead=12) == pytest.approx(1_521_875 * 1.03**12)
    # tokens_per_month given instead: 6.69625e9 / 4400 tokens per request = 1,521,875 requests
    data = _example("batch-summarizer")
    del data["workload"]["requests_per_day"]
    data["workload"]["tokens_per_month"] = 6.69625e9
    assert parse_scenario(data).workload.requests_per_month() == pytest.approx(1_521_875)


def test_peak_to_mean_from_hourly_profile() -> None:
    workload = load_scenario(EXAMPLES / "chat-assistant.yaml").workload
    weights = _example("chat-assistant")["workload"]["hourly_traffic_weights"]
    # weights sum to 156, mean 6.5 per hour; the busiest hours weigh 12 -> peak/mean = 12 / 6.5
    assert sum(weights) == 156
    assert workload.peak_to_mean() == pytest.approx(12 / 6.5)
    factors = workload.hourly_load_factors()
    assert factors is not None and sum(factors) == pytest.approx(24.0)
    assert workload.peak_requests_per_second() == pytest.approx(200_000 / 86_400 * 12 / 6.5)


def test_distribution_moments_by_hand() -> None:
    fixed = FixedTokens(tokens=300)
    assert (fixed.expected_tokens(), fixed.probability_above(299), fixed.probability_above(300)) == (300, 1, 0)
    uniform = UniformTokens(low_tokens=1, high_tokens=10)
    # counts 1..10: mean 5.5; above 7 are 8, 9, 10: P = 3/10, E[X; X>7] = (8+9+10)/10 = 2.7
    assert uniform.expected_tokens() == 5.5
    assert uniform.probability_above(7) == pytest.approx(0.3)
    assert uniform.partial_expected_tokens_above(7) == pytest.approx(2.7)
    assert uniform.partial_expected_tokens_above(0) == pytest.approx(5.5)
    empirical = EmpiricalTokens(tokens=[100, 1000], weights=[3, 1])
    # P(100) = 0.75, P(1000) = 0.25: mean 325; above 500 only 1000: E = 250
    assert empirical.expected_tokens() == pytest.approx(325)
    assert empirical.partial_expected_tokens_above(500) == pytest.approx(250)
    lognormal = LognormalTokens(mean_tokens=1000, sigma=0.5)
    # At t = median = exp(mu): P(X > t) = 1/2; E[X; X>t] = mean x Phi(sigma) = 1000 x Phi(0.5) = 691.46
    median = math.exp(lognormal.mu)
    assert lognormal.probability_above(median) == pytest.approx(0.5)
    assert lognormal.partial_expected_tokens_above(median) == pytest.approx(691.4625, rel=1e-5)


def test_lognormal_closed_forms_match_samples() -> None:
    dist = LognormalTokens(mean_tokens=8000, sigma=0.6)
    draws = dist.sample(np.random.default_rng(0), 400_000).astype(float)
    assert draws.mean() == pytest.approx(8000, rel=0.01)
    assert (draws > 12_000).mean() == pytest.approx(dist.probability_above(12_000), abs=0.005)
    assert np.where(draws > 12_000, draws, 0).mean() == pytest.approx(dist.partial_expected_tokens_above(12_000), rel=0.02)


def test_exported_json_schema_is_up_to_date() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == scenario_json_schema_text(), (
        "docs/scenario.schema.json is stale; regenerate it with `.venv/bin/python -m costmodel.scenario`"
    )


def test_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed", encoding="utf-8")
    with pytest.raises(CostmodelError, match="not valid YAML"):
        load_scenario(bad)
    with pytest.raises(CostmodelError, match="not found"):
        load_scenario(tmp_path / "missing.yaml")
