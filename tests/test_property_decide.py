"""Issue 10, section 3: property tests of `decide` over random valid and mutated scenarios.

Valid scenarios (2,000 examples) are drawn from the real catalogs and price sheets; mutated ones (1,000) take a
valid scenario and overwrite one field with a hostile value (NaN, inf, 1e308, 1e-320, negative, wrong type).
For every one: the only exception allowed is the project's input error (CostmodelError); a decision's
recommendation is one of its options and never an excluded one (or null, with a reason, when every option is
excluded); every dollar, utilization and break-even of a
usable option is finite and >= 0; running it again gives the identical result. The roofline capacity keeps it
fast (about 10 ms a decision); `derandomize=True` makes the draws the same on every run, so it cannot flake.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costmodel.catalog import accelerators
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.rank import decide
from costmodel.decision.results import Decision
from costmodel.errors import CostmodelError
from costmodel.pricing import load_api_prices, load_gpu_prices
from costmodel.scenario import parse_scenario

API = load_api_prices()
GPU = load_gpu_prices()
AS_OF = "2026-12-01"
LIVE_API_IDS = sorted(r.id for r in API.rows if r.deprecation_date is None)
OFFERINGS = sorted((r.id, r.accelerator_id) for r in GPU.rows if r.accelerator_id in accelerators())
MODELS = ["llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b", "gemma-3-27b"]
CACHE = CapacityCache(max_entries=4096)  # shared: the same option under the same workload is not recomputed


def _tokens() -> st.SearchStrategy[dict[str, Any]]:
    fixed = st.builds(lambda t: {"kind": "fixed", "tokens": t}, st.integers(1, 20_000))
    uniform = st.tuples(st.integers(1, 8_000), st.integers(0, 8_000)).map(
        lambda p: {"kind": "uniform", "low_tokens": p[0], "high_tokens": p[0] + p[1]})
    lognormal = st.builds(lambda m, s: {"kind": "lognormal", "mean_tokens": m, "sigma": s},
                          st.floats(1.0, 20_000.0), st.floats(0.05, 1.5))
    return st.one_of(fixed, uniform, lognormal)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    cached = draw(st.floats(0.0, 0.9))
    workload: dict[str, Any] = {
        "requests_per_day": draw(st.floats(1.0, 1e7)),
        "prompt_tokens": draw(_tokens()), "output_tokens": draw(_tokens()),
        "cached_prompt_fraction": cached,
        "cache_write_prompt_fraction": draw(st.floats(0.0, 1.0 - cached)),
        "growth_per_month": draw(st.floats(-0.5, 0.5)),
        "batch_allowed": draw(st.booleans()),
    }
    if draw(st.booleans()):
        workload["hourly_traffic_weights"] = draw(st.lists(st.floats(0.0, 10.0), min_size=24, max_size=24).filter(
            lambda w: sum(w) > 0.1))
    else:
        workload["peak_to_mean_ratio"] = draw(st.floats(1.0, 24.0))
    slo: dict[str, Any] = {"ttft_p90_seconds": draw(st.floats(0.01, 60.0)),
                           "tpot_p90_seconds": draw(st.floats(0.002, 1.0))}
    options: list[dict[str, Any]] = []
    for i, price_id in enumerate(draw(st.lists(st.sampled_from(LIVE_API_IDS), min_size=1, max_size=3, unique=True))):
        api: dict[str, Any] = {"kind": "api", "name": f"api-{i}", "price_id": price_id}
        if draw(st.booleans()):
            api |= {"ttft_p90_seconds": draw(st.floats(0.05, 5.0)), "tpot_p90_seconds": draw(st.floats(0.005, 0.2))}
        options.append(api)
    for i in range(draw(st.integers(0, 2))):
        offering, hardware = draw(st.sampled_from(OFFERINGS))
        host: dict[str, Any] = {"kind": "self-host", "name": f"self-{i}", "model": draw(st.sampled_from(MODELS)),
                                "hardware": hardware, "gpus_per_replica": draw(st.sampled_from([1, 2, 4, 8])),
                                "weight_dtype": draw(st.sampled_from(["bf16", "fp8"])),
                                "ops_usd_per_month": draw(st.floats(0.0, 20_000.0))}
        if draw(st.booleans()):
            host["offering"] = offering
        else:
            host["usd_per_gpu_hour"] = draw(st.floats(0.1, 20.0))
        options.append(host)
    if any(o["kind"] == "self-host" for o in options) and draw(st.booleans()):
        options.append({"kind": "hybrid", "name": "hybrid", "self_host": "self-0", "api": "api-0"})
    return {"name": "property", "as_of": AS_OF, "workload": workload, "slo": slo, "options": options}


def _check(decision: Decision) -> None:
    names = {o.name for o in decision.options}
    if decision.recommendation is None:  # every option excluded, or none known to meet the SLO: null, with why
        assert decision.reasons
        assert all(o.excluded_reason is not None or o.slo_status == "unverified" for o in decision.options)
        if decision.usable_options:  # the cheapest usable one is named with the check that would settle it
            assert decision.cheaper_unverified is not None
            assert decision.cheaper_unverified.option == decision.usable_options[0].name
    else:
        assert decision.recommendation in names
        assert decision.option(decision.recommendation).excluded_reason is None
    for option in decision.usable_options:
        for value in (option.usd_per_month, option.breakdown.gpu_usd_per_month, option.breakdown.api_usd_per_month,
                      option.breakdown.ops_usd_per_month):
            assert math.isfinite(value) and value >= 0, (option.name, value)
        for value in (option.utilization, option.break_even_tokens_per_month):
            assert value is None or (math.isfinite(value) and value >= 0), (option.name, value)
        value = option.break_even_utilization
        assert value is None or value >= 0, (option.name, value)  # > 1 (or inf: a free API) means "never"
    assert math.isfinite(decision.tokens_per_month) and decision.tokens_per_month >= 0


def _decide(data: Any) -> Decision | None:
    try:
        scenario = parse_scenario(data)
        return decide(scenario, capacity_method="roofline", api_sheet=API, gpu_sheet=GPU, capacity_cache=CACHE)
    except CostmodelError:
        return None


def _same_twice(data: Any) -> None:
    first = _decide(data)
    if first is None:
        return
    _check(first)
    again = _decide(data)
    assert again is not None
    assert json.dumps(first.contract(), default=str, sort_keys=True) == json.dumps(
        again.contract(), default=str, sort_keys=True)


@settings(max_examples=2_000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios())
def test_random_valid_scenarios_decide_cleanly(data: dict[str, Any]) -> None:
    _same_twice(data)


HOSTILE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-320, -1.0, 0, 2**63, "x", None, [], {}, True,
           [[[[[[[[[[]]]]]]]]]]]


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    data = draw(scenarios())
    path = draw(st.sampled_from(_paths(data)))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(st.sampled_from(HOSTILE))
    return data


@settings(max_examples=1_000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated())
def test_mutated_scenarios_are_refused_or_decided_cleanly(data: dict[str, Any]) -> None:
    _same_twice(data)
