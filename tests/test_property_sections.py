"""Property tests of `decide` over the scenario sections the first property tests left at their defaults:
`scaling`, `fleet`, `horizon_months`, `quality`, `substitutes` and `calibration` (inline measurement files).

Each section gets its own strategy of >= 1,000 scenarios, legal but extreme: every value inside the schema's
range, its end points included (MAX_MIN_REPLICAS replicas, 0 or 60 warm-up minutes, a spot share of 1, an
interruption every hour, a 120-month horizon at +1000%/month, eff_compute 1e-6, a 1e-300 measured capacity).
For every one: the only exception allowed is the project's input error (CostmodelError); the
recommendation is one of the options and never an excluded one (or None); every dollar of a usable option is
finite and >= 0; a rerun gives the identical result (checked on one scenario in RERUN_EVERY).

Speed: the roofline capacity method (no simulation), one or two options per scenario, one shared capacity
cache and every sheet loaded once for all examples, and `derandomize=True` so the draws are the same on every
run (it cannot flake). Hypothesis draws one seed per example and the scenario's values come from a generator
seeded with it (`_Draw`): drawing the ~40 values of a scenario through hypothesis cost 3-6 ms an example, about
as much as the two decisions it fed. Each value keeps its range: an end point one draw in four, otherwise
log-uniform (small magnitudes) or uniform (large ones) inside. A failure names its seed, which reproduces it;
the seed does not shrink to a smaller scenario. bench/ is where speed is measured; this file only keeps its
examples small.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costmodel.catalog import accelerators
from costmodel.catalog.quality import load_quality_scores
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.rank import decide
from costmodel.decision.results import Decision
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import (
    MAX_HBM_BYTES_PER_S,
    MAX_HOLDOUT_MEDIAN_ABS_ERROR,
    MAX_PEAK_FLOPS_PER_S,
)
from costmodel.pricing import load_api_prices, load_gpu_prices
from costmodel.pricing.dispersion import load_latency_dispersion
from costmodel.pricing.latency import load_api_latency
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import parse_scenario
from costmodel.scenario.limits import (
    MAX_GROWTH_PER_MONTH,
    MAX_MIN_REPLICAS,
    MIN_GROWTH_PER_MONTH,
    MIN_TARGET_PEAK_UTILIZATION,
)

API = load_api_prices()
GPU = load_gpu_prices()
AS_OF = "2026-12-01"
LIVE_API_IDS = sorted(r.id for r in API.rows if r.deprecation_date is None)
ROWS = [r for r in GPU.rows if r.accelerator_id in accelerators()]
BY_KIND = {kind: sorted(r.id for r in ROWS if r.offering == kind) for kind in {r.offering for r in ROWS}}
HARDWARE_OF = {r.id: r.accelerator_id for r in ROWS}
MODELS = ["llama-3.1-8b", "qwen2.5-7b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b"]
CACHE = CapacityCache(max_entries=8192)
QUALITY = load_quality_scores(open_model_ids=open_model_ids(API))
LATENCY = load_api_latency()
DISPERSION = load_latency_dispersion()  # loaded once, as the other sheets: decide reads it from disk otherwise
# Day shapes: flat, business hours, all traffic in one hour (peak 24x the mean), one busy hour among near-idle
# ones, and idle nights (zero weights). Drawn from a list: 24 free floats per example cost more to draw than
# the decision does, and these span the range (the peak-to-mean bisection is covered by test_property_decide).
PROFILES = [
    [1.0] * 24,
    [2, 1, 1, 1, 1, 2, 4, 7, 10, 12, 12, 11, 10, 11, 12, 12, 11, 9, 7, 6, 5, 4, 3, 2],
    [0.0] * 23 + [1.0],
    [1e-9] * 12 + [10.0] + [1e-9] * 11,
    [0.0] * 8 + [5.0] * 10 + [0.0] * 6,
]
EXAMPLES = int(__import__("os").environ.get("PROPERTY_EXAMPLES", "1000"))
# The rerun check (identical contract twice) on one scenario in 4: >= 250 a section, the rest of the decide
# budget spent on new scenarios (a rerun shares the capacity cache, so what it adds is the cached path's answer).
RERUN_EVERY = 4
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


SEEDS = st.integers(0, 2**64 - 1)


class _Draw:
    """The values of one scenario, from a generator seeded by hypothesis's draw: `draw(spec)` samples a spec."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, spec: Callable[[random.Random], Any]) -> Any:
        return spec(self.rng)


@dataclass(frozen=True)
class _Floats:
    """Floats in [low, high]: one draw in four an extreme (the extremes are what these tests are for: mostly
    an end point, else the float next to one, or the smallest subnormal above a 0 floor), else log-uniform in
    magnitude down to 1e-12 of the bound (tiny values) or uniform (values near the top)."""

    low: float
    high: float

    def extremes(self) -> tuple[float, ...]:
        low, high = self.low, self.high
        subnormal = (5e-324,) if low == 0 < high else ()
        return (low, high, low, high, math.nextafter(low, high), math.nextafter(high, low), *subnormal)

    def __call__(self, rng: random.Random) -> float:
        pick = rng.random()
        if pick < 0.25:
            return rng.choice(self.extremes())
        if pick < 0.625:
            return self._log_uniform(rng)
        return rng.uniform(self.low, self.high)

    def _log_uniform(self, rng: random.Random) -> float:
        top = self.high if self.high > 0 and (self.low >= 0 or rng.random() < 0.5) else self.low
        floor = self.low if 0 < self.low <= top else abs(top) * 1e-12
        magnitude = math.exp(rng.uniform(math.log(floor), math.log(abs(top)))) if floor > 0 else 0.0
        return min(self.high, max(self.low, math.copysign(magnitude, top)))


@dataclass(frozen=True)
class _Ints:
    """Integers in [low, high]: an end point one draw in four, else log-uniform or uniform inside."""

    low: int
    high: int

    def __call__(self, rng: random.Random) -> int:
        pick = rng.random()
        if pick < 0.25:
            return rng.choice((self.low, self.high))
        if pick < 0.625:
            span = self.high - self.low
            return self.low + min(span, int(math.exp(rng.uniform(0.0, math.log(span + 1)))) - 1)
        return rng.randint(self.low, self.high)


@dataclass(frozen=True)
class _Choice:
    values: Sequence[Any]

    def __call__(self, rng: random.Random) -> Any:
        return rng.choice(self.values)


@dataclass(frozen=True)
class _Maybe:
    """None one draw in two, else the spec's value."""

    spec: Callable[[random.Random], Any]

    def __call__(self, rng: random.Random) -> Any:
        return None if rng.random() < 0.5 else self.spec(rng)


BOOLEANS = _Choice((True, False))


def test_value_specs_reach_both_end_points_and_stay_inside() -> None:
    """The seeded specs keep hypothesis's job of finding the extremes: both end points, tiny and large values
    inside, never a value outside the range."""
    rng = random.Random(0)
    for spec in (_Floats(1e-300, 1e6), _Floats(0.0, 1.0), _Floats(-1e6, 1e6), _Ints(1, 8_000), _Ints(0, 1)):
        values = [spec(rng) for _ in range(400)]
        assert all(spec.low <= v <= spec.high for v in values)
        assert {spec.low, spec.high} <= set(values)
        if isinstance(spec, _Floats):
            inside = [v for v in values if spec.low < v < spec.high]
            assert min(abs(v) for v in inside) < 1e-3 * max(abs(spec.low), spec.high) < max(inside)


REQUESTS_PER_DAY = _Floats(1.0, 1e8)
PROMPT_TOKENS = _Ints(1, 8_000)
OUTPUT_TOKENS = _Ints(1, 4_000)
TTFT = _Floats(0.01, 600.0)
TPOT = _Floats(0.002, 5.0)
OPS = _Floats(0.0, 20_000.0)
UNIT = _Floats(0.0, 1.0)
WARMUP = _Floats(0.0, 60.0)
REPLICAS = _Ints(1, MAX_MIN_REPLICAS)
FLOOR = _Maybe(_Ints(0, MAX_MIN_REPLICAS))
API_IDS = _Choice(LIVE_API_IDS)
MODEL_IDS = _Choice(MODELS)
GPUS = _Choice([1, 2, 4, 8])
DTYPES = _Choice(["bf16", "fp8"])
PROFILE = _Choice(PROFILES)
OFFERING_BY_KIND = {kind: _Choice(ids) for kind, ids in BY_KIND.items() if ids}


def _kinds(offering_kinds: tuple[str, ...]) -> _Choice:
    return _Choice([k for k in offering_kinds if k in OFFERING_BY_KIND])


def _base(draw: _Draw, *, offering_kinds: tuple[str, ...] = ("on-demand",), self_hosts: int = 1) -> dict[str, Any]:
    """A small valid scenario: one API option and `self_hosts` self-host options on offerings of those kinds."""
    workload: dict[str, Any] = {
        "requests_per_day": draw(REQUESTS_PER_DAY),
        "prompt_tokens": {"kind": "fixed", "tokens": draw(PROMPT_TOKENS)},
        "output_tokens": {"kind": "fixed", "tokens": draw(OUTPUT_TOKENS)},
        "batch_allowed": draw(BOOLEANS),
        "hourly_traffic_weights": draw(PROFILE),
    }
    slo = {"ttft_p90_seconds": draw(TTFT), "tpot_p90_seconds": draw(TPOT)}
    options: list[dict[str, Any]] = [{"kind": "api", "name": "api-0", "price_id": draw(API_IDS)}]
    for i in range(self_hosts):
        offering = draw(OFFERING_BY_KIND[draw(_kinds(offering_kinds))])
        options.append({"kind": "self-host", "name": f"self-{i}", "model": draw(MODEL_IDS),
                         "hardware": HARDWARE_OF[offering], "gpus_per_replica": draw(GPUS),
                         "weight_dtype": draw(DTYPES), "offering": offering, "ops_usd_per_month": draw(OPS)})
    return {"name": "property", "as_of": AS_OF, "horizon_months": 1, "workload": workload, "slo": slo,
            "options": options}


def _check(decision: Decision) -> None:
    names = {o.name for o in decision.options}
    if decision.recommendation is not None:
        assert decision.recommendation in names
        assert decision.option(decision.recommendation).excluded_reason is None
    for option in decision.usable_options:
        for value in (option.usd_per_month, option.usd_per_mtok, option.breakdown.gpu_usd_per_month,
                      option.breakdown.api_usd_per_month, option.breakdown.ops_usd_per_month):
            assert math.isfinite(value) and value >= 0, (option.name, value)
        for value in (option.utilization, option.break_even_tokens_per_month, option.usd_horizon_total):
            assert value is None or (math.isfinite(value) and value >= 0), (option.name, value)
        for month in option.usd_by_month or ():
            assert math.isfinite(month) and month >= 0, (option.name, month)


def _decide(data: dict[str, Any]) -> Decision | None:
    try:
        return decide(parse_scenario(data), capacity_method="roofline", api_sheet=API, gpu_sheet=GPU,
                      capacity_cache=CACHE, quality_sheet=QUALITY, latency_sheet=LATENCY,
                      dispersion_sheet=DISPERSION)
    except CostmodelError:
        return None


def _same_twice(data: dict[str, Any], *, seed: int) -> None:
    """Decided and checked; decided again (one seed in RERUN_EVERY) and compared, contract for contract."""
    first = _decide(json.loads(json.dumps(data)))
    if first is None:
        return
    _check(first)
    if seed % RERUN_EVERY:
        return
    again = _decide(json.loads(json.dumps(data)))
    assert again is not None
    assert json.dumps(first.contract(), default=str, sort_keys=True) == json.dumps(
        again.contract(), default=str, sort_keys=True)


# --- scaling ----------------------------------------------------------------------------------------------

MODES = _Choice(["fixed", "autoscale", "mixed"])
MODE_OFFERINGS = {"fixed": ("on-demand", "spot", "reserved", "owned"), "autoscale": ("on-demand", "spot"),
                  "mixed": ("reserved", "owned")}
SPOT_HARDWARE = {HARDWARE_OF[r] for r in BY_KIND.get("spot", [])}


def scaling_scenarios(draw: _Draw) -> dict[str, Any]:
    mode = draw(MODES)  # each on the offerings it may run on: autoscale on rented GPUs, mixed from a paid base
    data = _base(draw, offering_kinds=MODE_OFFERINGS[mode])
    host = data["options"][1]
    scaling: dict[str, Any] = {"mode": mode}
    if mode != "fixed":
        scaling["warmup_minutes"] = draw(WARMUP)
        low = draw(FLOOR)
        high = draw(_Maybe(REPLICAS))
        if low is not None and high is not None and low > high:
            low, high = high, low
        scaling |= {k: v for k, v in (("min_replicas", low), ("max_replicas", high)) if v is not None}
    on_spot = host["offering"] in BY_KIND.get("spot", [])
    if mode == "autoscale" and on_spot:
        scaling["interruption_rate_per_hour"] = draw(UNIT)
    if mode == "mixed":
        if draw(BOOLEANS):
            scaling["base_replicas"] = min(draw(FLOOR) or 0, scaling.get("max_replicas", MAX_MIN_REPLICAS))
        if HARDWARE_OF[host["offering"]] in SPOT_HARDWARE and draw(BOOLEANS):
            scaling["spot_share"] = draw(UNIT)
            scaling["interruption_rate_per_hour"] = draw(UNIT)
    host["scaling"] = scaling
    return data


@SETTINGS
@given(SEEDS)
def test_scaling_section(seed: int) -> None:
    _same_twice(scaling_scenarios(_Draw(seed)), seed=seed)


# --- fleet ------------------------------------------------------------------------------------------------

POLICY_FIELDS = {"target_peak_utilization": _Floats(MIN_TARGET_PEAK_UTILIZATION, 1.0), "min_replicas": REPLICAS}


def _policy(rng: random.Random) -> dict[str, Any]:
    """A fleet policy with each field present one draw in two."""
    return {key: spec(rng) for key, spec in POLICY_FIELDS.items() if rng.random() < 0.5}


def fleet_scenarios(draw: _Draw) -> dict[str, Any]:
    data = _base(draw)
    data["fleet"] = draw(_policy)
    for host in data["options"][1:]:
        host.update(draw(_policy))
    if draw(BOOLEANS):
        data["options"].append({"kind": "hybrid", "name": "hybrid", "self_host": "self-0", "api": "api-0"})
    return data


@SETTINGS
@given(SEEDS)
def test_fleet_section(seed: int) -> None:
    _same_twice(fleet_scenarios(_Draw(seed)), seed=seed)


# --- horizon_months ---------------------------------------------------------------------------------------

HORIZON = _Ints(1, 120)
GROWTH = _Floats(MIN_GROWTH_PER_MONTH, MAX_GROWTH_PER_MONTH)


def horizon_scenarios(draw: _Draw) -> dict[str, Any]:
    data = _base(draw, offering_kinds=("on-demand", "reserved", "owned"))
    data["horizon_months"] = draw(HORIZON)
    data["workload"]["growth_per_month"] = draw(GROWTH)
    return data


@SETTINGS
@given(SEEDS)
def test_horizon_months_section(seed: int) -> None:
    _same_twice(horizon_scenarios(_Draw(seed)), seed=seed)


# --- quality ----------------------------------------------------------------------------------------------

SCORED = sorted({row.subject for row in QUALITY.rows})
SUBJECTS = _Choice([s for s in MODELS + LIVE_API_IDS if s in SCORED] + SCORED)
SCORES = _Floats(-1e6, 1e6)
BENCHMARKS = _Choice(list(QUALITY.benchmarks()))


def quality_scenarios(draw: _Draw) -> dict[str, Any]:
    data = _base(draw)
    data["options"].append({"kind": "api", "name": "api-1", "price_id": draw(API_IDS)})
    if draw(BOOLEANS):
        data["quality"] = {"at_least_as_good_as": draw(SUBJECTS)}
    else:
        data["quality"] = {"min_score": draw(SCORES), "benchmark": draw(BENCHMARKS)}
    return data


@SETTINGS
@given(SEEDS)
def test_quality_section(seed: int) -> None:
    _same_twice(quality_scenarios(_Draw(seed)), seed=seed)


# --- substitutes ------------------------------------------------------------------------------------------

def substitutes_scenarios(draw: _Draw) -> dict[str, Any]:
    data = _base(draw)
    data["options"].append({"kind": "api", "name": "api-1", "price_id": draw(API_IDS)})
    if draw(BOOLEANS):
        data["options"].append({"kind": "hybrid", "name": "hybrid", "self_host": "self-0", "api": "api-0"})
    names = [o["name"] for o in data["options"]]
    shuffled = draw.rng.sample(names, len(names))
    cuts = sorted(draw.rng.randint(0, len(names)) for _ in range(draw.rng.randint(0, 3)))
    groups, start = [], 0
    for cut in [*cuts, len(names)]:
        if cut > start:
            groups.append(list(shuffled[start:cut]))
        start = max(start, cut)
    data["substitutes"] = draw(_Choice([groups, groups[:1], []]))  # some options in no group
    return data


@SETTINGS
@given(SEEDS)
def test_substitutes_section(seed: int) -> None:
    _same_twice(substitutes_scenarios(_Draw(seed)), seed=seed)


# --- calibration (inline measurement files) ---------------------------------------------------------------

EFFICIENCY = _Floats(1e-6, 1.0)
HALF_SATURATION = _Floats(0.0, 8192.0)
WEIGHT_READS = _Floats(1.0, 16.0)
PEAK_FLOPS = _Maybe(_Floats(1e9, MAX_PEAK_FLOPS_PER_S))
HBM = _Maybe(_Floats(1e9, MAX_HBM_BYTES_PER_S))
HOLDOUT = {False: _Floats(0.0, MAX_HOLDOUT_MEDIAN_ABS_ERROR), True: _Floats(0.0, 10.0)}
CAPACITY = _Floats(1e-300, 1e6)
STEP = _Floats(1e-6, 10.0)
PREFILL_TOKEN = _Floats(0.0, 1e-2)
CONCURRENCY = _Maybe(_Ints(1, 4096))
ONE_IN_EIGHT = _Choice([True] + [False] * 7)


def _roofline_calibration(draw: _Draw, hardware: str) -> dict[str, Any]:
    forced = draw(BOOLEANS)  # a forced file may carry any held-out error
    median = draw(HOLDOUT[forced])
    return {
        "hardware_id": hardware, "device_name": "property", "eff_compute": draw(EFFICIENCY),
        "eff_memory": draw(EFFICIENCY), "overhead_seconds_per_step": draw(UNIT),
        "compute_half_saturation_tokens": draw(HALF_SATURATION), "weight_reads_max_rows": draw(WEIGHT_READS),
        "peak_flops_per_s": draw(PEAK_FLOPS), "hbm_bytes_per_s": draw(HBM),
        "holdout_median_abs_error": median, "holdout_max_abs_error": median * 2, "points_fit": 13,
        "points_holdout": 4, "source": "property.json", "created": "2026-12-01T00:00:00Z", "forced": forced,
    }


def _endpoint_calibration(draw: _Draw) -> dict[str, Any]:
    capacity, step = draw(CAPACITY), draw(STEP)
    return {
        "kind": "endpoint_calibration", "base_url": "http://127.0.0.1:8000/v1", "model": "served",
        "overhead_seconds": step,
        "prefill_token_seconds": draw(PREFILL_TOKEN), "decode_sequence_seconds": step / 2,
        "context_token_seconds": 0.0, "request_fixed_seconds": draw(UNIT), "concurrency_limit": draw(CONCURRENCY),
        "levels_fit": [1.0, 2.0], "levels_held_out": [4.0], "held_out": [], "holdout_ttft_p50_abs_error": 0.0,
        "holdout_tpot_p50_abs_error": 0.0, "holdout_throughput_abs_error": 0.0, "holdout_relative_error_bound": 0.35,
        "slo_ttft_p90_seconds": None, "slo_tpot_p90_seconds": None, "capacity_requests_per_second": capacity,
        "capacity_p10": capacity, "capacity_p90": capacity, "binding_limit": "tpot_p90_slo",
        "ttft_p90_at_capacity_seconds": draw(TTFT), "tpot_p90_at_capacity_seconds": draw(TPOT),
        "bootstrap_samples": 0,
    }


def calibration_scenarios(draw: _Draw) -> dict[str, Any]:
    data = _base(draw)
    # An endpoint calibration's capacity comes from its step simulator, whose steps grow with the output
    # length (up to its step cap per bisection point: seconds per decision at thousands of tokens), so the
    # outputs here stay short; the lengths themselves are covered by the other sections.
    output = data["workload"]["output_tokens"]
    output["tokens"] = min(output["tokens"], 32)
    host, api = data["options"][1], data["options"][0]
    if draw(ONE_IN_EIGHT):  # a step-simulated capacity search costs tens of ms (each one cached): 1 time in 8
        host["calibration"] = json.dumps(_endpoint_calibration(draw))
    else:
        host["calibration"] = json.dumps(_roofline_calibration(draw, host["hardware"]))
    if draw(BOOLEANS):
        api["calibration"] = json.dumps(_endpoint_calibration(draw))
    return data


@SETTINGS
@given(SEEDS)
def test_calibration_section(seed: int) -> None:
    _same_twice(calibration_scenarios(_Draw(seed)), seed=seed)
