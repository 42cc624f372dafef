"""The break-even search skips volumes where the lines surely do not cross (decision/breakeven.py,
`known_false`); the answer must be the one the full scan gives, on fixed, autoscaled and mixed fleets.

Each scenario is decided once; then every self-host option's crossing is searched with and without the skip
(first_volume called with known_false dropped) and the two (u*, V*) pairs must be equal.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import costmodel.decision.breakeven as breakeven
from costmodel.decision.crossing import first_volume
from costmodel.decision.rank import decide
from costmodel.decision.volume import cost_model
from costmodel.scenario import parse_scenario


def _scenario(mode: str, requests_per_day: float, offering: str, gpus: int) -> dict[str, Any]:
    scaling: dict[str, Any] = {"mode": mode}
    if mode != "fixed":
        scaling["warmup_minutes"] = 30.0
    host = {"kind": "self-host", "name": "self", "model": "llama-3.1-8b", "hardware": "h100-sxm",
            "gpus_per_replica": gpus, "offering": offering, "scaling": scaling}
    return {"name": "skip", "as_of": "2026-12-01", "workload": {
        "requests_per_day": requests_per_day, "prompt_tokens": {"kind": "fixed", "tokens": 1500},
        "output_tokens": {"kind": "fixed", "tokens": 300},
        "hourly_traffic_weights": [1, 1, 1, 1, 1, 2, 4, 7, 10, 12, 12, 11, 10, 11, 12, 12, 11, 9, 7, 6, 5, 4, 3, 2]},
        "slo": {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.05},
        "options": [{"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b"}, host]}


def _offering(kind: str) -> str:
    from costmodel.pricing import load_gpu_prices
    rows = [r for r in load_gpu_prices().rows if r.accelerator_id == "h100-sxm" and r.offering == kind]
    return sorted(rows, key=lambda r: (-r.gpus_per_instance, r.id))[0].id  # a multi-GPU instance where sold


def _cost_model_or_skip(mode: str, kind: str, requests_per_day: float, gpus: int) -> Any:
    """The decided scenario's cost model; skips when it has no usable self-host option or API to cross."""
    scenario = parse_scenario(_scenario(mode, requests_per_day, _offering(kind), gpus))
    model = cost_model(decide(scenario, capacity_method="roofline"), scenario)
    if "self" not in {o.name for o in model.options} or "api" not in {o.name for o in model.options}:
        pytest.skip("no usable self-host option or API at this volume")
    return model


def _search_without(monkeypatch: pytest.MonkeyPatch, keyword: str) -> None:
    """From now on the break-even search runs without its `keyword` argument (the plain scan or bisection)."""
    full_scan = breakeven.first_volume

    def without(*args: Any, **kwargs: Any) -> float | None:
        kwargs.pop(keyword, None)
        return full_scan(*args, **kwargs)

    monkeypatch.setattr(breakeven, "first_volume", without)


@pytest.mark.parametrize("mode,kind", [("fixed", "on-demand"), ("autoscale", "on-demand"), ("mixed", "reserved")])
@pytest.mark.parametrize("requests_per_day", [3e3, 2e5, 1e7])
@pytest.mark.parametrize("gpus", [1, 2])
def test_skip_gives_the_full_scan(mode: str, kind: str, requests_per_day: float, gpus: int,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    model = _cost_model_or_skip(mode, kind, requests_per_day, gpus)
    skipped = breakeven.break_even_crossing(model, "self", against="api")
    _search_without(monkeypatch, "known_false")
    assert breakeven.break_even_crossing(model, "self", against="api") == skipped


@pytest.mark.parametrize("mode,kind", [("fixed", "on-demand"), ("autoscale", "on-demand"), ("mixed", "reserved")])
@pytest.mark.parametrize("requests_per_day", [3e3, 2e5, 1e7])
def test_interpolated_root_gives_the_bisection(mode: str, kind: str, requests_per_day: float,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpolation of the cost gap (decision/crossing.py `_interpolated`) ends where 40 bisections do, to
    within their resolution (a 0.1-decade grid interval / 2^40 = 2.1e-13 relative)."""
    model = _cost_model_or_skip(mode, kind, requests_per_day, 1)
    interpolated = breakeven.break_even_crossing(model, "self", against="api")
    _search_without(monkeypatch, "gap")
    bisected = breakeven.break_even_crossing(model, "self", against="api")
    assert (interpolated is None) == (bisected is None)
    if interpolated is not None and bisected is not None:
        assert math.isclose(interpolated.tokens_per_month, bisected.tokens_per_month, rel_tol=1e-12)
        assert math.isclose(interpolated.utilization, bisected.utilization, rel_tol=1e-12)


def test_interpolation_finds_a_linear_crossing_in_a_few_evaluations() -> None:
    """A fleet at $1,000 + $500 per replica (one replica per 0.37x of today's volume) against an API at
    $3,000 per 1x: 3 replicas cost $2,500 on (0.74, 1.11], where the API line reaches $2,500 at 0.8333x;
    the cost gap is linear there, so the root is bracketed within 5e-14 after the grid scan."""
    calls = 0

    def fleet(scale: float) -> float:
        return 1000.0 + 500.0 * math.ceil(scale / 0.37)

    def gap(scale: float) -> float:
        return fleet(scale) - 3000.0 * scale

    def happens(scale: float) -> bool:
        nonlocal calls
        calls += 1
        return fleet(scale) > 3000.0 * scale

    steps = tuple(0.37 * k for k in range(1, 4))
    found = first_volume(happens, upward=False, steps=steps, gap=gap)
    assert found is not None and math.isclose(found, 2500.0 / 3000.0, rel_tol=1e-13)
    plain_calls, calls = calls, 0
    assert math.isclose(first_volume(happens, upward=False, steps=steps) or 0.0, 2500.0 / 3000.0, rel_tol=1e-12)
    assert plain_calls + 30 < calls  # the plain search bisects 40 times
