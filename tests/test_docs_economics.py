"""docs/economics.md, number by number: each figure on the page recomputed with the library and, for the
pure economics, with the arithmetic written out here.

A Claim pairs a snippet of the page (copied verbatim; whitespace runs compare as one space, so rewrapping
the page does not break it) with values computed here and the format the page prints them in. The test
asserts that each formatted value lies in its snippet and that the snippet lies in the page. Where the
page writes the arithmetic out, the same snippet carries two claims, the written-out arithmetic and the
library's figure, so they must agree to the printed digits. Capacity at the SLO is read from
`costmodel.decision.rank.decide`'s OptionResult (the serving simulator), and the roofline closed form from
`decide(..., capacity_method="roofline")`. `capacity_at_slo` is run once more here with the decision's own
settings (the `vllm` engine profile, the SLO's limits divided by 1 + the profile's documented error), for
what the decision does not keep (the saturation rate, the number of simulations) and to check that it gives
the decision's μ. `decide` caches capacity per configuration within a process, so the
scenarios below that change only volume, prices or options reuse one simulation.
`test_every_number_on_the_page_is_claimed` fails when a number is added to the page without a claim.

Sources of the inputs written out below: prices are rows of pricing_data/api_prices.csv (LiteLLM 1.110.2,
cross-checked with genai-prices 0.2.3, checked 2026-11-29) and pricing_data/gpu_prices.csv (owned H100:
aiinframap.com TCO assumptions); the month is 365.25 / 12 days (DESIGN.md); the worked scenario is the YAML
block on the page itself.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import inspect
import json
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.cli import main
from costmodel.decision import capacity as decision_module
from costmodel.decision.attach import option_efficiency
from costmodel.decision.capacity import SIMULATED_REQUESTS, CapacityCache, self_host_capacity
from costmodel.decision.commitment import commitment_factor
from costmodel.decision.economics import (
    HOURS_PER_MONTH,
    SECONDS_PER_MONTH,
    break_even_utilization,
    diurnal_profile,
    plan_hybrid,
    size_self_host,
)
from costmodel.decision.evidence import slo_verdict, tightened_slo
from costmodel.decision.fleet import (
    BATCH_MIN_REPLICAS,
    BATCH_SPARE_REPLICAS,
    BATCH_TARGET_PEAK_UTILIZATION,
    INTERACTIVE_MIN_REPLICAS,
    INTERACTIVE_SPARE_REPLICAS,
    INTERACTIVE_TARGET_PEAK_UTILIZATION,
    autoscaled_day,
    fleet_ops_usd_per_month,
    fleet_policy,
    replicas_for_demand,
)
from costmodel.decision.horizon import committed_replicas
from costmodel.decision.instances import InstancePacking
from costmodel.decision.latency import batch_evidence
from costmodel.decision.mixed import cyclic_starts, mixed_day
from costmodel.decision.mode_capacity import with_option_speculation
from costmodel.decision.rank import decide
from costmodel.decision.reasons import decision_reasons
from costmodel.decision.recommend import Recommendation
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.warnings import scenario_warnings
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.errors import CostmodelError
from costmodel.memory import plan_memory
from costmodel.pricing import load_api_prices, load_gpu_prices
from costmodel.pricing import refresh as refresh_module
from costmodel.pricing.api_cost import (
    SECONDS_PER_MINUTE,
    TOKENS_PER_MTOK,
    api_request_cost,
    check_rate_limits,
    mean_request_usd,
)
from costmodel.pricing.batch_window import BatchChoice, choose_batch, load_batch_windows
from costmodel.pricing.hosts import host_row, host_share
from costmodel.pricing.schema import HOURS_PER_YEAR, MAX_API_USD_PER_MTOK
from costmodel.scenario import FleetPolicy, Scenario, SelfHostOption, parse_scenario
from costmodel.scenario.limits import MAX_LATENCY_SECONDS
from costmodel.scenario.slo import Slo
from costmodel.serving import build_replica
from costmodel.serving.analytic import Capacity
from costmodel.serving.capacity import CapacitySearch, capacity_for_replica
from costmodel.serving.error_bands import simulated_error
from costmodel.serving.profile import option_engine_settings
from costmodel.units import DAYS_PER_MONTH, SECONDS_PER_DAY

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "economics.md"
Value = float | int | str
Fmt = Callable[[Value], str]


def squash(text: str) -> str:
    """Whitespace runs as one space: snippets survive rewrapping."""
    return " ".join(text.split())


# ---- how the page prints numbers -------------------------------------------------------------------------
def n0(v: Value) -> str:
    """3,043,750"""
    return f"{float(v):,.0f}"


def fixed(digits: int, prefix: str = "", suffix: str = "") -> Fmt:
    return lambda v: f"{prefix}{float(v):,.{digits}f}{suffix}"


def usd(digits: int) -> Fmt:
    """'$1,461.00' for 2."""
    return fixed(digits, "$")


def pct(digits: int = 1) -> Fmt:
    return lambda v: f"{float(v) * 100:.{digits}f}%"


def billions(digits: int = 2) -> Fmt:
    """'14.61B' tokens."""
    return lambda v: f"{float(v) / 1e9:.{digits}f}B"


def ms(digits: int = 1) -> Fmt:
    return lambda v: f"{float(v) * 1e3:.{digits}f} ms"


def hour(v: Value) -> str:
    """'14:00' for hour 14."""
    return f"{int(v):02d}:00"


def times(digits: int) -> Fmt:
    """'2.46x'."""
    return fixed(digits, suffix="x")


def e_notation(v: Value) -> str:
    """'1e6' for 1e6."""
    return f"{float(v):.0e}".replace("e+0", "e").replace("e+", "e")


def text(v: Value) -> str:
    return str(v)


@dataclass(frozen=True)
class Claim:
    snippet: str  # verbatim text of the page
    value: Value  # recomputed here
    fmt: Fmt  # how the page prints it
    what: str  # for the test id


CLAIMS: list[Claim] = []
SNIPPETS: list[str] = []  # every snippet, including those whose numbers are inputs or definitions only
FACTS: list[tuple[str, bool]] = []  # the page's qualitative statements, checked against the library


def claim(snippet: str, *pairs: tuple[str, Value, Fmt]) -> None:
    """Register a snippet and the (name, value, format) figures it shows."""
    SNIPPETS.append(snippet)
    for what, value, fmt in pairs:
        CLAIMS.append(Claim(snippet=snippet, value=value, fmt=fmt, what=what))


def fact(statement: str, holds: bool) -> None:
    """Register a qualitative statement of the page and whether the library agrees."""
    FACTS.append((statement, bool(holds)))


# ---- the worked example, read from the page --------------------------------------------------------------
DOC_TEXT = DOC.read_text(encoding="utf-8")
YAML_BLOCK = DOC_TEXT.split("```yaml\n", 1)[1].split("```", 1)[0]
SCENARIO: Scenario = parse_scenario(yaml.safe_load(YAML_BLOCK), where="docs/economics.md")
TODAY = dt.date(2026, 11, 29)  # the sheets' `checked` date: price ages print as 0 days
API_SHEET = load_api_prices()
GPU_SHEET = load_gpu_prices()
CACHE = CapacityCache()  # one capacity cache for the module's decisions (ten times the volume reuses it)
DECISION: Decision = decide(SCENARIO, today=TODAY, capacity_cache=CACHE)
API: OptionResult = DECISION.option("cerebras-8b")
SELF: OptionResult = DECISION.option("h100-8b")
HYBRID: OptionResult = DECISION.option("h100-base-plus-cerebras")
SCENARIO_10X = SCENARIO.model_copy(
    update={"workload": SCENARIO.workload.model_copy(update={"requests_per_day": 1_000_000.0})}
)
DECISION_10X: Decision = decide(SCENARIO_10X, today=TODAY, capacity_cache=CACHE)

# Capacity per replica at the SLO: from the library's decision (the serving simulator).
MU = SELF.capacity_requests_per_second or 0.0
X_LIB = SELF.tokens_per_second_per_replica or 0.0
# The roofline closed form, the decision's fast method (and its source of φ and the KV ceiling).
ROOF: OptionResult = decide(SCENARIO, today=TODAY, capacity_method="roofline").option("h100-8b")
ROOF_MU = ROOF.capacity_requests_per_second or 0.0
ROOF_TP = ROOF.ttft_p90_seconds or 0.0  # the roofline's TTFT is t_p, the prefill of one request
# The capacity search with the settings costmodel.decision.capacity._simulated_capacity passes (the option's
# engine profile, the SLO tightened by that profile's documented error): the saturation rate and the number
# of simulations the decision drops.
RATE_TOLERANCE = decision_module.RATE_TOLERANCE
_OPTION = SCENARIO.option("h100-8b")
assert isinstance(_OPTION, SelfHostOption)
_SELF_OPTION: SelfHostOption = _OPTION  # typed once, so the functions below see a SelfHostOption
_HARDWARE, _EFFICIENCY = option_efficiency(_SELF_OPTION, None)
ENGINE = _SELF_OPTION.engine  # no `engine` in the YAML: the vllm profile
_TTFT_ERROR, _TPOT_ERROR = simulated_error(ENGINE, "ttft"), simulated_error(ENGINE, "tpot")
assert _TTFT_ERROR is not None and _TPOT_ERROR is not None
E_TTFT, E_TPOT = _TTFT_ERROR.median_abs_error, _TPOT_ERROR.median_abs_error  # documented error of the profile
TIGHT = tightened_slo(SCENARIO.slo, engine=ENGINE)  # the limits μ is searched at: limit / (1 + error)
_SETTINGS = option_engine_settings(_SELF_OPTION, longest_prompt_tokens=1000)
_REPLICA = build_replica(_SELF_OPTION.model, _HARDWARE, gpus=1, weight_dtype=_SELF_OPTION.weight_dtype,
                         kv_dtype=_SELF_OPTION.kv_dtype, efficiency=_EFFICIENCY,
                         max_batched_tokens=_SETTINGS.max_batched_tokens, engine=_SETTINGS)


def _search(slo: object) -> CapacitySearch:
    return CapacitySearch(prompt_tokens=SCENARIO.workload.prompt_tokens, output_tokens=SCENARIO.workload.output_tokens,
                          slo=slo, prefix_cached_fraction=0.0, requests=SIMULATED_REQUESTS,  # type: ignore[arg-type]
                          rate_tolerance=RATE_TOLERANCE, kv_policy=_SETTINGS.kv_policy,
                          max_num_seqs=_SETTINGS.max_num_seqs)


SIM = capacity_for_replica(with_option_speculation(_REPLICA, _SELF_OPTION), _search(TIGHT))
SATURATION = SIM.saturation_rate_requests_per_second

# The worked example's inputs, written out (the YAML block above; cerebras/llama-3.1-8b row of the sheet).
REQUESTS_PER_DAY = 100_000
PROMPT, OUTPUT = 1_000, 200
PEAK_TO_MEAN = 2.0
USD_PER_GPU_HOUR = 2.00
CEREBRAS_IN = CEREBRAS_OUT = 0.10  # $/M, LiteLLM 1.110.2 cerebras/llama-3.1-8b (genai-prices 0.2.3 agrees)
D = 365.25 / 12  # days per month
H = 24 * D  # hours per month
S = 3_600 * H  # seconds per month
Q = REQUESTS_PER_DAY * D
V = Q * (PROMPT + OUTPUT)
LAM = REQUESTS_PER_DAY / 86_400
LAM_PEAK = PEAK_TO_MEAN * LAM
API_PER_REQUEST = (PROMPT * CEREBRAS_IN + OUTPUT * CEREBRAS_OUT) / 1e6
API_MONTH = API_PER_REQUEST * Q
API_PER_M = API_MONTH / (V / 1e6)
X = MU * (PROMPT + OUTPUT)
T, M_FLOOR, SPARE = 0.8, 2, 1  # the interactive defaults (docs "Headroom and redundancy"): the YAML sets no fleet


def replicas_for(peak: float) -> int:
    """n = max(m, ceil(λ_peak / (t x μ)), ceil(λ_peak / μ) + s), written out."""
    return max(M_FLOOR, math.ceil(peak / (T * MU)), math.ceil(peak / MU) + SPARE)


REPLICAS = replicas_for(LAM_PEAK)
REPLICA_MONTH = 1 * USD_PER_GPU_HOUR * H
SELF_MONTH = REPLICAS * REPLICA_MONTH + 0.0
U = LAM / (REPLICAS * MU)
U_STAR = USD_PER_GPU_HOUR * 1 * 1e6 / (3_600 * X * API_PER_M)
# V*: the 2-replica fleet's cost crosses the API's at V* = 2 R x 1e6 / p_api, and the fleet re-sized for V*
# is still 2 replicas (checked in build_worked_example), so C(V*) = 2 x X x S.
V_STAR = (REPLICAS * REPLICA_MONTH + 0) * 1e6 / API_PER_M
FLEET_C = replicas_for(LAM_PEAK * V_STAR / V) * X * S  # the fleet sized for V*: tokens/month at the SLO


def build_intro() -> None:
    claim("$/M is dollars per million (1e6) tokens", ("Mtok", TOKENS_PER_MTOK, e_notation))
    claim("B is 10^9 tokens.")
    claim("| w_h | load factor of hour h of the day (mean 1 over the 24 hours) | |",
          ("hours", len(DECISION.hourly_profile), n0), ("mean", float(np.mean(DECISION.hourly_profile)), fixed(0)))


def build_time() -> None:
    claim("D = 365.25 / 12 = 30.4375 days, H = 24 x D = 730.5 h, S = 3,600 x H = 2,629,800 s.",
          ("D", D, fixed(4)), ("D lib", DAYS_PER_MONTH, fixed(4)), ("H", H, fixed(1)), ("H lib", HOURS_PER_MONTH, fixed(1)),
          ("S", S, n0), ("S lib", SECONDS_PER_MONTH, n0))
    claim("(which is requests/day / 86,400 s)", ("day", SECONDS_PER_DAY, n0))
    claim("Growth compounds: the volume m months ahead is (1 + growth per month)^m times today's.")
    grown = SCENARIO.workload.model_copy(update={"growth_per_month": 0.1})
    fact("growth compounds monthly", math.isclose(grown.requests_per_month(months_ahead=3), Q * 1.1**3))


def build_api_request() -> None:
    claim("$/request = [(T_in - T_r - T_w) p_in + T_r p_r + T_w p_w + T_out p_out] / 1e6",
          ("Mtok", TOKENS_PER_MTOK, e_notation))
    haiku = API_SHEET.get("anthropic/claude-haiku-4-5")
    claim("(Anthropic bills them at 1.25x input *instead of* 1x)",
          ("write ratio", (haiku.cache_write_usd_per_mtok or 0) / haiku.input_usd_per_mtok, times(2)))
    claim("(p_in = $1.00, p_r = $0.10, p_w = $1.25, p_out = $5.00 per M)",
          ("p_in", haiku.input_usd_per_mtok, usd(2)), ("p_r", haiku.cache_read_usd_per_mtok or 0, usd(2)),
          ("p_w", haiku.cache_write_usd_per_mtok or 0, usd(2)), ("p_out", haiku.output_usd_per_mtok, usd(2)))
    claim("1,000 prompt tokens of which 400 are read from the cache and 100 written to it, 200 output tokens:")
    cached = api_request_cost(haiku, prompt_tokens=1000, output_tokens=200, cached_prompt_tokens=400, cache_write_tokens=100)
    written = (500 * 1.00 + 400 * 0.10 + 100 * 1.25 + 200 * 5.00) / 1e6  # claude-haiku-4-5 row rates, $/M
    claim("(500 x 1.00 + 400 x 0.10 + 100 x 1.25 + 200 x 5.00) / 1e6 = (500 + 40 + 125 + 1,000) / 1e6 = **$0.001665**",
          ("input", cached.input_usd * 1e6, n0), ("read", cached.cache_read_usd * 1e6, n0),
          ("write", cached.cache_write_usd * 1e6, n0), ("output", cached.output_usd * 1e6, n0),
          ("total", written, usd(6)), ("total lib", cached.total_usd, usd(6)))
    plain = api_request_cost(haiku, prompt_tokens=1000, output_tokens=200)
    claim("against (1,000 x 1.00 + 200 x 5.00) / 1e6 = $0.002000 with no cache.",
          ("no cache", (1000 * 1.00 + 200 * 5.00) / 1e6, usd(6)), ("no cache lib", plain.total_usd, usd(6)))
    build_batch_window()
    claim("Every input-side rate (p_in, p_r, p_w) is scaled by batch input / input, p_out by batch output / output.")
    mini = API_SHEET.get("openai/gpt-4o-mini")
    claim("`openai/gpt-4o-mini` ($0.15 in, $0.60 out; batch $0.075 and $0.30): 1,000 + 200 tokens cost",
          ("in", mini.input_usd_per_mtok, usd(2)), ("out", mini.output_usd_per_mtok, usd(2)),
          ("batch in", mini.batch_input_usd_per_mtok or 0, usd(3)), ("batch out", mini.batch_output_usd_per_mtok or 0, usd(2)))
    claim("(1,000 x 0.15 + 200 x 0.60) / 1e6 = $0.000270 interactive and (1,000 x 0.075 + 200 x 0.30) / 1e6 = "
          "**$0.000135** through the batch API.",
          ("interactive", (1000 * 0.15 + 200 * 0.60) / 1e6, usd(6)),
          ("interactive lib", api_request_cost(mini, prompt_tokens=1000, output_tokens=200).total_usd, usd(6)),
          ("batch", (1000 * 0.075 + 200 * 0.30) / 1e6, usd(6)),
          ("batch lib", api_request_cost(mini, prompt_tokens=1000, output_tokens=200, batch=True).total_usd, usd(6)))
    pro = API_SHEET.get("google/gemini-2.5-pro")
    claim("`google/gemini-2.5-pro` ($1.25 / $10.00, above 200,000 prompt tokens $2.50 / $15.00), 1,000 output tokens:",
          ("in", pro.input_usd_per_mtok, usd(2)), ("out", pro.output_usd_per_mtok, usd(2)),
          ("threshold", pro.long_context_threshold_tokens or 0, n0),
          ("lc in", pro.long_context_input_usd_per_mtok or 0, usd(2)), ("lc out", pro.long_context_output_usd_per_mtok or 0, usd(2)))
    at_threshold = api_request_cost(pro, prompt_tokens=200_000, output_tokens=1000)
    above = api_request_cost(pro, prompt_tokens=250_000, output_tokens=1000)
    fact("a prompt of exactly t_LC tokens pays the base rates", not at_threshold.long_context)
    fact("a prompt past t_LC pays the tier's rates", above.long_context)
    claim("a 200,000-token prompt costs (200,000 x 1.25 + 1,000 x 10.00) / 1e6 = $0.260;",
          ("base", (200_000 * 1.25 + 1000 * 10.00) / 1e6, usd(3)), ("base lib", at_threshold.total_usd, usd(3)))
    claim("a 250,000-token prompt costs (250,000 x 2.50 + 1,000 x 15.00) / 1e6 = **$0.640**, 2.46x more for 25% more prompt.",
          ("long", (250_000 * 2.50 + 1000 * 15.00) / 1e6, usd(3)), ("long lib", above.total_usd, usd(3)),
          ("ratio", above.total_usd / at_threshold.total_usd, times(2)), ("more prompt", 250_000 / 200_000 - 1, pct(0)))
    claim("E[$/request] x 1e6 = a E[T_in; T_in <= t_LC] + a_LC E[T_in; T_in > t_LC]", ("Mtok", 1e6, e_notation))
    claim("where a = (1 - f_r - f_w) p_in + f_r p_r + f_w p_w is the input-side rate per prompt token")
    # Exactness: a uniform prompt length straddling the threshold, averaged request by request.
    straddle = type(SCENARIO.workload).model_validate({
        **SCENARIO.workload.model_dump(), "cached_prompt_fraction": 0.2,
        "prompt_tokens": {"kind": "uniform", "low_tokens": 199_990, "high_tokens": 200_010},
        "output_tokens": {"kind": "fixed", "tokens": 1000},
    })
    by_request = statistics.fmean(
        api_request_cost(pro, prompt_tokens=t, output_tokens=1000, cached_prompt_tokens=0.2 * t).total_usd
        for t in range(199_990, 200_011)
    )
    fact("the mean over a distribution is exact (uniform prompt across t_LC, request by request)",
         math.isclose(mean_request_usd(pro, straddle, batch=False)[0], by_request, rel_tol=1e-12))
    rows = API_SHEET.rows
    out_ratio = [r.output_usd_per_mtok / r.input_usd_per_mtok for r in rows if r.input_usd_per_mtok]
    read_ratio = [r.cache_read_usd_per_mtok / r.input_usd_per_mtok for r in rows
                  if r.cache_read_usd_per_mtok is not None and r.input_usd_per_mtok]
    batch_rows = [r for r in rows if r.has_batch]
    halved = [r for r in batch_rows if r.batch_input_usd_per_mtok == r.input_usd_per_mtok / 2
              and r.batch_output_usd_per_mtok == r.output_usd_per_mtok / 2]
    claim("in the bundled sheet an output token costs a median 3.35x an input token (up to 8.33x), a cache read "
          "0.1x to 0.7x of one, and 34 of the 35 rows with a batch API halve both rates.",
          ("median", statistics.median(out_ratio), times(2)), ("max", max(out_ratio), times(2)),
          ("read min", min(read_ratio), times(1)), ("read max", max(read_ratio), times(1)),
          ("halved", len(halved), n0), ("batch rows", len(batch_rows), n0))


def build_batch_window() -> None:
    """The batch route: its provider's completion window decides whether the batch price applies."""
    window = load_batch_windows()["openai"].window_seconds or 0.0
    day = Slo(ttft_p90_seconds=MAX_LATENCY_SECONDS, tpot_p90_seconds=0.5)
    sourced = [p for p in ("openai", "anthropic", "google", "fireworks", "groq") if load_batch_windows()[p].window_seconds]

    def choice(slo: Slo, provider: str = "openai") -> BatchChoice:
        return choose_batch(provider=provider, has_batch_price=True, batch_allowed=True, use_batch_api=True, slo=slo)

    claim("the batch price applies only when every TTFT and E2E limit the SLO sets (p50, p90, p99) is at least the window.")
    fact("a TTFT p99 or E2E p90 limit under the window declines the batch API, a TPOT limit does not",
         choice(day).batch and not choice(day.model_copy(update={"ttft_p99_seconds": window - 1})).batch
         and not choice(day.model_copy(update={"e2e_p90_seconds": window - 1})).batch
         and choice(day.model_copy(update={"tpot_p90_seconds": 1e-3})).batch)
    claim("OpenAI, Anthropic, Google (Gemini batch mode), Fireworks and Groq publish a 24 h window (86,400 s, the "
          "largest limit a scenario may set; each page is cited, with its words, in `pricing_data/batch_windows.csv`, "
          "read 2026-12-02)",
          ("hours", window / 3600, n0), ("seconds", window, n0), ("schema max", MAX_LATENCY_SECONDS, n0))
    fact("the five providers publish the same 24 h window",
         len(sourced) == 5 and all(load_batch_windows()[p].window_seconds == window for p in sourced))
    fact("each window cites its page and the date it was read",
         all("read 2026-12-02" in w.source and "https://" in w.source for w in load_batch_windows().values()))
    claim('xAI publishes only "most batch requests complete within 24 hours", no bound, so its batch API is not used.')
    fact("xAI: no window, no batch price", load_batch_windows()["xai"].window_seconds is None and not choice(day, "xai").batch)
    evidence = batch_evidence(load_batch_windows()["openai"])
    claim("(`published`, TTFT p90 = the band's high end = 86,400 s, no TPOT), so it `likely_meets` a limit of a day.",
          ("point", evidence.ttft.point or 0, n0), ("high", evidence.ttft.high or 0, n0))
    fact("a batch-priced option likely meets a day's TTFT limit on the window",
         evidence.source == "published" and not evidence.tpot_applies
         and slo_verdict(evidence, day).status == "likely_meets")
    declined = choice(day.model_copy(update={"ttft_p90_seconds": 60.0})).declined or ""
    claim('("batch API not used: its 24 h completion window exceeds the TTFT p90 limit of 60.00 s")')
    fact("the note is the library's", declined.startswith(
        "batch API not used: its 24 h completion window exceeds the TTFT p90 limit of 60.00 s"))


def build_api_month() -> None:
    claim("blended $/M = API $/month / V x 1e6 = E[$/request] x 1e6 / E[T_in + T_out]", ("Mtok", 1e6, e_notation))
    fact("an API's $/M does not depend on volume", math.isclose(
        DECISION_10X.option("cerebras-8b").usd_per_mtok, API.usd_per_mtok, rel_tol=1e-12))
    claim("weighted by the share of requests in the\nlong-context tier")
    data = yaml.safe_load(YAML_BLOCK)
    data["workload"]["prompt_tokens"] = {"kind": "fixed", "tokens": 250_000}
    data["options"] = [{"kind": "api", "name": "pro", "price_id": "google/gemini-2.5-pro"}]
    long_prompts = parse_scenario(data)
    pro_result = decide(long_prompts, today=TODAY).option("pro")
    pro = API_SHEET.get("google/gemini-2.5-pro")
    # All these prompts pass the threshold, so every output token is billed at the long-context rate.
    fact("long-context requests: the output $/M shown is the tier-weighted output rate",
         math.isclose(pro_result.usd_per_mtok_output, pro.long_context_output_usd_per_mtok or 0)
         and (pro.long_context_output_usd_per_mtok or 0) > pro.output_usd_per_mtok)
    claim("peak requests/min = 60 x λ_peak", ("minute", SECONDS_PER_MINUTE, n0))
    lite = API_SHEET.get("google/gemini-2.5-flash-lite")
    claim("`google/gemini-2.5-flash-lite` publishes 4,000 requests/min and 4,000,000 tokens/min on Tier 1 (paid)",
          ("rpm", lite.requests_per_minute or 0, n0), ("tpm", lite.tokens_per_minute or 0, n0))
    fact("flash-lite's limits are the paid tier's", lite.rate_limit_tier == "tier 1 (paid)")
    check = check_rate_limits(SCENARIO.workload, requests_per_minute_limit=lite.requests_per_minute,
                              tokens_per_minute_limit=lite.tokens_per_minute, batch=False)
    rpm = 60 * LAM_PEAK
    claim("The worked example below peaks at 60 x 2.315 = 138.9 requests/min and "
          "138.9 x 1,200 = 166,667 tokens/min, within both Tier 1 limits: not throttled.",
          ("peak", LAM_PEAK, fixed(3)), ("rpm", rpm, fixed(1)), ("rpm lib", check.peak_requests_per_minute, fixed(1)),
          ("tokens", PROMPT + OUTPUT, n0), ("tpm", rpm * (PROMPT + OUTPUT), n0), ("tpm lib", check.peak_tokens_per_minute, n0))
    fact("flash-lite on Tier 1: not throttled", not check.throttled)
    # Free tier (eonsr.com, "Gemini rate limits: Free vs Tier-1"): 15 requests/min, 250,000 tokens/min.
    free = check_rate_limits(SCENARIO.workload, requests_per_minute_limit=15, tokens_per_minute_limit=250_000,
                             batch=False)
    claim("its free tier allows 15 requests/min", ("free rpm", 15, n0))
    fact("flash-lite on the free tier: throttled by requests/min, not by tokens/min",
         free.throttled and "requests/min" in free.reason and "tokens/min" not in free.reason)
    batch = check_rate_limits(SCENARIO.workload, requests_per_minute_limit=1, tokens_per_minute_limit=1, batch=True)
    fact("batch options are never throttled", not batch.throttled)
    fact("no published limit: flagged, not throttled",
         not API.throttled and any("check your account's tier" in n for n in API.notes))


def build_headroom() -> None:
    """docs/economics.md "Headroom and redundancy": the policy defaults and the two sizing examples."""
    claim("replicas_h = max(m, ceil(λ_h / (t x μ)), ceil(λ_h / μ) + s)")
    fact("the spare term applies only in an hour with demand", replicas_for_demand(
        demand_requests_per_second=0.0, capacity_requests_per_second=MU, target_peak_utilization=0.8,
        min_replicas=0, spare_replicas=1) == 0)
    claim("Interactive defaults: t = 0.8 (20% headroom,", ("t", INTERACTIVE_TARGET_PEAK_UTILIZATION, fixed(1)),
          ("headroom", 1 - INTERACTIVE_TARGET_PEAK_UTILIZATION, pct(0)))
    claim("the \"keep ~15-20% headroom\" rule")
    claim("s = 1 (one replica can fail or be drained for an upgrade while the rest carry the peak) and m = 2.",
          ("s", INTERACTIVE_SPARE_REPLICAS, n0), ("m", INTERACTIVE_MIN_REPLICAS, n0))
    claim("Batch defaults: t = 1.0, s = 0 and m = 1", ("t", BATCH_TARGET_PEAK_UTILIZATION, fixed(1)),
          ("s", BATCH_SPARE_REPLICAS, n0), ("m", BATCH_MIN_REPLICAS, n0))
    claim("(`fleet: {target_peak_utilization: 0.9, min_replicas: 3, spare_replicas: 1}`)")
    claim("With s = 1 this is N+1 in the true sense:")
    policy_scenario = SCENARIO.model_copy(update={"fleet": FleetPolicy(target_peak_utilization=0.9, min_replicas=3,
                                                                       spare_replicas=0)})
    own = _SELF_OPTION.model_copy(update={"min_replicas": 4})
    fact("the fleet section sets the policy, the option's field wins",
         fleet_policy(_SELF_OPTION, policy_scenario).min_replicas == 3
         and fleet_policy(_SELF_OPTION, policy_scenario).target_peak_utilization == 0.9
         and fleet_policy(_SELF_OPTION, policy_scenario).spare_replicas == 0
         and fleet_policy(own, policy_scenario).min_replicas == 4)
    decided = SELF  # the worked example sets no fleet: the interactive defaults
    n_default = replicas_for(LAM_PEAK)
    claim("With the worked example's μ = 20.098 requests/s and the interactive defaults, 100,000 requests/day "
          "(λ_peak = 2.315) need max(2, ceil(2.315 / (0.8 x 20.098)), ceil(2.315 / 20.098) + 1) = max(2, 1, 2) = "
          "**2** replicas: the floor and N+1 bind and the fleet costs 2 x 1 x $2.00 x 730.5 h = **$2,922.00** a month.",
          ("mu", MU, fixed(3)), ("peak", LAM_PEAK, fixed(3)), ("ceil", math.ceil(LAM_PEAK / (0.8 * MU)), n0),
          ("n+1", math.ceil(LAM_PEAK / MU) + 1, n0), ("n", n_default, n0), ("n lib", decided.replicas, n0),
          ("min lib", decided.min_replicas or 0, n0), ("t lib", decided.target_peak_utilization or 0, fixed(1)),
          ("s lib", decided.spare_replicas, n0),
          ("cost", n_default * 1 * USD_PER_GPU_HOUR * H, usd(2)), ("cost lib", decided.usd_per_month, usd(2)))
    peak16 = 1_600_000 / 86_400 * PEAK_TO_MEAN

    def sized(target: float, spare: int) -> int:
        return size_self_host(mean_requests_per_second=peak16 / 2, peak_requests_per_second=peak16,
                              capacity_requests_per_second=MU, tokens_per_request=1200, gpus_per_replica=1,
                              usd_per_gpu_hour=2.0, min_replicas=2, target_peak_utilization=target,
                              spare_replicas=spare).replicas

    claim("At 1,600,000 requests/day (λ_peak = 37.037): ceil(37.037 / 20.098) = ceil(1.843) = 2 replicas carry the "
          "peak at t = 1, N+1 asks for 2 + 1 = 3, and the headroom ceil(37.037 / (0.8 x 20.098)) = ceil(2.304) = "
          "**3** at t = 0.8.",
          ("peak", peak16, fixed(3)), ("mu", MU, fixed(3)), ("ratio", peak16 / MU, fixed(3)),
          ("n1", math.ceil(peak16 / MU), n0), ("n1 lib", sized(1.0, 0), n0),
          ("n+1 lib", sized(1.0, 1), n0), ("ratio 80", peak16 / (0.8 * MU), fixed(3)),
          ("n80", math.ceil(peak16 / (0.8 * MU)), n0), ("n80 lib", sized(0.8, 0), n0), ("both lib", sized(0.8, 1), n0))
    fact("the worked example runs the interactive defaults",
         (SELF.min_replicas, SELF.target_peak_utilization, SELF.spare_replicas) == (2, 0.8, 1))


def build_autoscaling() -> None:
    """docs/economics.md "Autoscaling": the formulas and the nightly window."""
    claim("a warm-up of w_min minutes is billed w = ceil(w_min / 60) hours:", ("minutes", 60, n0))
    claim("starts = Σ_h max(0, replicas_h - replicas_(h-1)) (the day as a cycle: hour 23 -> hour 0 too)")
    fact("starts count the rise from hour 23 to hour 0", cyclic_starts([3] + [0] * 23) == 3)
    claim("GPU-hours/month = (Σ_h replicas_h + starts x w) x N x D")
    claim("`min_replicas` 0 lets an idle hour cost nothing")
    on_demand = GPU_SHEET.get("lambda/h100-sxm/on-demand").all_in_usd_per_gpu_hour()
    claim("A batch job at 30 requests/s for 7 hours a night and nothing the rest of the day, μ = 7.0 requests/s per "
          "replica (a stated capacity), t = 1, `min_replicas: 0`, a 10-minute warm-up and `lambda/h100-sxm/on-demand` "
          "at $3.99 per GPU-hour:", ("on-demand", on_demand, usd(2)))
    day = autoscaled_day(hourly_requests_per_second=[30.0] * 7 + [0.0] * 17, capacity_requests_per_second=7.0,
                         target_peak_utilization=1.0, min_replicas=0, max_replicas=10**6, warmup_minutes=10)
    n = math.ceil(30 / 7.0)
    claim("replicas_h = ceil(30 / 7.0) = ceil(4.286) = 5 in the window and 0 outside it.",
          ("ratio", 30 / 7.0, fixed(3)), ("n", n, n0), ("n lib", max(day.replicas_by_hour), n0))
    fact("the window's replicas are n for 7 hours and 0 outside", day.replicas_by_hour == (n,) * 7 + (0,) * 17)
    claim("Fixed, 5 x 1 x $3.99 x 730.5 h = $14,573 a month.", ("fixed", n * 1 * 3.99 * H, fixed(0, "$")))
    replica_hours = day.serving_replica_hours_per_day + day.warmup_replica_hours_per_day
    claim("Autoscaled, 5 starts a day billed 1 hour each: (7 x 5 + 5 x 1) x 30.4375 = 1,217.5 GPU-hours, $4,858 a "
          "month: 40 / 120 = 1/3 of the fixed fleet, 7/24 for the window plus 1/24 for the warm-ups.",
          ("starts", day.starts_per_day, n0), ("gpu-hours", (7 * n + n * 1) * D, fixed(1)),
          ("gpu-hours lib", replica_hours * D, fixed(1)), ("usd", replica_hours * D * on_demand, fixed(0, "$")),
          ("replica-hours", replica_hours, n0), ("fixed replica-hours", 24 * n, n0))
    claim("Autoscaling never pays more GPU-hours than the fixed fleet of n replicas:")
    fact("autoscaling never pays more replica-hours than the fixed fleet (the window)", replica_hours <= 24 * n)


def build_mixed() -> None:
    """docs/economics.md "Mixed fleets": the formula and the reserved-base example, with and without spot."""
    reserved = GPU_SHEET.get("semianalysis/h100-sxm/reserved").all_in_usd_per_gpu_hour()
    on_demand = GPU_SHEET.get("lambda/h100-sxm/on-demand").all_in_usd_per_gpu_hour()
    spot = GPU_SHEET.get("nebius/h100-sxm/spot").all_in_usd_per_gpu_hour()
    claim("$/GPU/day = 24 k c_b + (1 - s)(B + W) c_od + s (B + W + ρ B (w + r)) c_s")
    claim("r = (TTFT p90 + E[T_out] x TPOT p90) / 2")
    demand = [10.0] * 18 + [25.0] * 6
    kwargs = dict(hourly_requests_per_second=demand, capacity_requests_per_second=5.0, target_peak_utilization=1.0,
                  min_replicas=1, max_replicas=10**6, warmup_minutes=10, base_usd_per_gpu_hour=reserved,
                  on_demand_usd_per_gpu_hour=on_demand)
    chosen = mixed_day(**kwargs)  # type: ignore[arg-type]
    by_k = {k: mixed_day(**kwargs, base_replicas=k) for k in (0, 2, 5)}  # type: ignore[arg-type]
    claim("10 requests/s for 18 hours and 25 for 6, μ = 5.0 requests/s, t = 1: replicas_h is 2 and 5.",
          ("low", min(chosen.replicas_by_hour), n0), ("high", max(chosen.replicas_by_hour), n0))
    claim("Base `semianalysis/h100-sxm/reserved` at $1.30, burst `lambda/h100-sxm/on-demand` at $3.99, a 10-minute "
          "warm-up (w = 1 h).", ("reserved", reserved, usd(2)), ("on-demand", on_demand, usd(2)))
    claim("k = 2: the burst is 3 replicas for 6 hours, started once a day:",
          ("burst", max(by_k[2].burst_replicas_by_hour), n0),
          ("hours", sum(1 for b in by_k[2].burst_replicas_by_hour if b), n0))
    claim("24 x 2 x 1.30 + (18 + 3) x 3.99 = 62.40 + 83.79 = **$146.19** per GPU-day, $4,449.66 a month.",
          ("base", 24 * 2 * 1.30, fixed(2)), ("burst", (18 + 3) * 3.99, fixed(2)),
          ("lib", by_k[2].usd_per_gpu_per_day, usd(2)), ("month", by_k[2].usd_per_gpu_per_day * D, usd(2)))
    all_od = by_k[0]
    claim("All on demand (k = 0), 66 replica-hours and 3 starts: 69 x 3.99 = $275.31 a day, $8,379.75 a month.",
          ("hours", all_od.burst_serving_replica_hours_per_day, n0), ("starts", all_od.burst_starts_per_day, n0),
          ("paid", all_od.replica_hours_per_day, n0), ("day", all_od.usd_per_gpu_per_day, usd(2)),
          ("month", all_od.usd_per_gpu_per_day * D, usd(2)))
    claim("All reserved (k = 5): 24 x 5 x 1.30 = $156.00 a day, 5 x 1.30 x 730.5 = $4,748.25 a month. So k = 2.",
          ("day", by_k[5].usd_per_gpu_per_day, usd(2)), ("month", 5 * 1.30 * H, usd(2)),
          ("chosen", chosen.base_replicas, n0))
    fact("the chosen base is the cheapest of every integer base", all(
        mixed_day(**kwargs, base_replicas=k).usd_per_gpu_per_day >= chosen.usd_per_gpu_per_day - 1e-9  # type: ignore[arg-type]
        for k in range(8)))
    redo = (2 + 1_400 * 0.050) / 2
    with_spot = mixed_day(**kwargs, base_replicas=2, spot_usd_per_gpu_hour=spot, spot_share=0.5,  # type: ignore[arg-type]
                          interruptions_per_replica_hour=0.1, redo_seconds=redo)
    claim("With half the burst on `nebius/h100-sxm/spot` at $1.25, ρ = 0.1 and r = (2 s + 1,400 x 50 ms) / 2 = 36 s "
          "(0.01 h), the same base pays 0.5 x 18 x 0.1 x (1 + 0.01) = 0.909 replica-hours a day of interruptions and",
          ("spot", spot, usd(2)), ("redo", redo, n0), ("redo h", redo / 3600, fixed(2)),
          ("overhead", 0.5 * 18 * 0.1 * (1 + 0.01), fixed(3)),
          ("overhead lib", with_spot.spot_overhead_replica_hours_per_day, fixed(3)))
    claim("62.40 + 0.5 x 21 x 3.99 + (0.5 x 21 + 0.909) x 1.25 = 62.40 + 41.90 + 14.26 = $118.56 per GPU-day, "
          "$3,608.56 a month.", ("od", 0.5 * 21 * 3.99, fixed(2)), ("spot", (0.5 * 21 + 0.909) * 1.25, fixed(2)),
          ("day", with_spot.usd_per_gpu_per_day, usd(2)), ("month", with_spot.usd_per_gpu_per_day * D, usd(2)))
    claim("(here 24 x 1.30 / 3.99 = 7.8)", ("hours", 24 * reserved / on_demand, fixed(1)))
    fact("a reserved base at the trough costs less than all on demand", by_k[2].usd_per_gpu_per_day
         < all_od.usd_per_gpu_per_day)


def build_ops_and_hosts() -> None:
    """docs/economics.md "Ops and hosts": ops per GPU-month and the owned H100's host server."""
    claim("ops = O + o_GPU x GPU-hours/month / H (a fixed fleet: O + o_GPU x n x N)")
    two, ten = (size_self_host(mean_requests_per_second=0.0, peak_requests_per_second=0.0,
                               capacity_requests_per_second=MU, tokens_per_request=1200, gpus_per_replica=1,
                               usd_per_gpu_hour=2.0, ops_usd_per_month=500.0, ops_usd_per_gpu_month=100.0,
                               min_replicas=k) for k in (2, 10))
    claim("With O = $500 and o_GPU = $100, a 2-GPU fixed fleet pays $700 a month of ops and a 10-GPU one $1,500;",
          ("two", two.ops_usd_per_month, usd(0)), ("ten", ten.ops_usd_per_month, usd(0)))
    with_ops = _SELF_OPTION.model_copy(update={"ops_usd_per_month": 500.0, "ops_usd_per_gpu_month": 100.0})
    claim("the nightly window above (1,217.5 GPU-hours) pays 500 + 100 x 1,217.5 / 730.5 = $666.67.",
          ("gpu-hours", 40 * D, fixed(1)), ("ops", 500 + 100 * 40 * D / H, usd(2)),
          ("ops lib", fleet_ops_usd_per_month(with_ops, gpu_hours_per_month=40 * D), usd(2)))
    host = host_row("h100-sxm")
    assert host is not None
    claim("for `h100-sxm` an 8-GPU node at $325,000 (the midpoint of the $300,000-$350,000 \"H100 Node CapEx\") "
          "drawing 10.2 kW at most", ("gpus", host.gpus_per_server, n0), ("capex", host.server_capex_usd, usd(0)),
          ("midpoint", (300_000 + 350_000) / 2, usd(0)), ("kW", host.server_power_kw, fixed(1)))
    owned = GPU_SHEET.get("owned/h100-sxm/owned")
    share = host_share(owned, host=host)
    assert share is not None
    claim("host capex = 325,000 / 8 - 30,000 = $10,625 per GPU; host power = 10.2 / 8 - 0.7 = 0.575 kW per GPU",
          ("capex", 325_000 / 8 - 30_000, usd(0)), ("capex lib", share.capex_usd_per_gpu, usd(0)),
          ("power", 10.2 / 8 - 0.7, fixed(3)), ("power lib", share.power_kw_per_gpu, fixed(3)))
    parts = (10_625 / (4 * 8_766), 0.575 * 1.2 * 0.08, 0.575 * 200 / 730.5)
    claim("host $/GPU-h = 10,625 / (4 x 8,766) + 0.575 x 1.2 x 0.08 + 0.575 x 200 / 730.5 = 0.3030 + 0.0552 + 0.1574 "
          "= 0.5156", ("capex", parts[0], fixed(4)), ("power", parts[1], fixed(4)), ("colo", parts[2], fixed(4)),
          ("sum", sum(parts), fixed(4)), ("lib", share.usd_per_gpu_hour, fixed(4)))
    owned_scenario = SCENARIO.model_copy(update={"options": tuple(
        o.model_copy(update={"usd_per_gpu_hour": None, "offering": "owned/h100-sxm/owned"})
        if isinstance(o, SelfHostOption) else o for o in SCENARIO.options)})
    counted = decide(owned_scenario, today=TODAY, capacity_method="roofline").option("h100-8b")
    claim("(colocation $200 per kW-month = $140 / 0.7 kW), so an owned H100 costs 1.1144 + 0.5156 = **$1.630 per "
          "GPU-hour**", ("per kW", (owned.colocation_usd_per_gpu_month or 0) / (owned.power_kw_per_gpu or 1), usd(0)),
          ("gpu", owned.all_in_usd_per_gpu_hour(), fixed(4)), ("host", share.usd_per_gpu_hour, fixed(4)),
          ("total lib", counted.usd_per_gpu_hour or 0, usd(3)))
    fact("the host adds almost half again to an owned H100's hour",
         0.4 < share.usd_per_gpu_hour / owned.all_in_usd_per_gpu_hour() < 0.5)


def build_instances_and_commitments() -> None:
    """docs/economics.md "Instances" (in "Self-host"), the B200 / A100 hosts and "Commitments" (in "The horizon")."""
    p5 = GPU_SHEET.get("aws/h100-sxm/on-demand")
    p5_small = GPU_SHEET.get("aws/h100-sxm/on-demand-1gpu")
    sized = {row.id: size_self_host(mean_requests_per_second=0.1, peak_requests_per_second=0.2,
                                    capacity_requests_per_second=MU, tokens_per_request=1200, gpus_per_replica=1,
                                    usd_per_gpu_hour=row.all_in_usd_per_gpu_hour(), min_replicas=2,
                                    packing=InstancePacking(gpus_per_replica=1, gpus_per_instance=row.gpus_per_instance))
             for row in (p5, p5_small)}
    claim("Two 1-GPU replicas on `aws/h100-sxm/on-demand` (p5.48xlarge, $6.88/GPU-h) fill one instance: 8 x 6.88 x "
          "730.5 = **$40,206.72** a month, where `aws/h100-sxm/on-demand-1gpu` (p5.4xlarge) bills 2 x 6.88 x 730.5 = "
          "$10,051.68.", ("G", p5.gpus_per_instance, n0), ("price", p5.all_in_usd_per_gpu_hour(), fixed(2)),
          ("big", 8 * 6.88 * H, usd(2)), ("big lib", sized[p5.id].usd_per_month, usd(2)),
          ("small", 2 * 6.88 * H, usd(2)), ("small lib", sized[p5_small.id].usd_per_month, usd(2)))
    fact("the p5.48xlarge and the p5.4xlarge rows are 8 and 1 GPUs at $6.88",
         (p5.instance, p5_small.instance, p5_small.gpus_per_instance) == ("p5.48xlarge", "p5.4xlarge", 1)
         and p5_small.all_in_usd_per_gpu_hour() == 6.88)
    b200, a100 = host_row("b200"), host_row("a100-80gb")
    assert b200 is not None and a100 is not None
    b200_share = host_share(GPU_SHEET.get("owned/b200/owned"), host=b200)
    a100_share = host_share(GPU_SHEET.get("owned/a100-80gb/owned"), host=a100)
    assert b200_share is not None and a100_share is not None
    claim("`b200` (DGX B200: $515,000, vengineer.hatenablog.com 2025-03-16; 14.3 kW, madcoolstuff.com; $24,375 and "
          "0.7875 kW per GPU beyond the GPU)", ("capex", b200.server_capex_usd, usd(0)), ("kW", b200.server_power_kw, fixed(1)),
          ("share", b200_share.capex_usd_per_gpu, usd(0)), ("kW share", b200_share.power_kw_per_gpu, fixed(4)))
    claim("`a100-80gb` (DGX A100's $200,000 launch price, 2020-05-14, and 6.5 kW maximum; $13,500 and 0.4125 kW per GPU)",
          ("capex", a100.server_capex_usd, usd(0)), ("kW", a100.server_power_kw, fixed(1)),
          ("share", a100_share.capex_usd_per_gpu, usd(0)), ("kW share", a100_share.power_kw_per_gpu, fixed(4)))
    missing = [a for a in ("h200", "l40s", "l4", "mi300x", "rtx-4090", "h100-pcie") if host_row(a) is None]
    fact("no host row for H200, L40S, L4, MI300X, RTX 4090, H100 PCIe", len(missing) == 6)
    claim("For H200, L40S, L4, MI300X, RTX 4090 and H100 PCIe no server price with a public source\nwas found")
    reserved = GPU_SHEET.get("semianalysis/h100-sxm/reserved")
    claim("One 1-GPU replica on `semianalysis/h100-sxm/reserved` ($1.30, 36 months) in a 12-month horizon leaves "
          "24 x 1.30 x 730.5 = $22,791.60 owed.", ("price", reserved.all_in_usd_per_gpu_hour(), fixed(2)),
          ("term", reserved.term_months or 0, n0), ("owed", 24 * 1.30 * H, usd(2)))
    # The search's rank of a held fleet (decision/commitment.py): 1.60 x max(1, 36 / 12) = 4.80 per GPU-hour.
    factor = commitment_factor(term_months=36, horizon_months=12)
    claim("A 3-year row at $1.60/GPU-hour therefore ranks at $4.80 in\na 12-month horizon, behind an on-demand row "
          "under $4.80.", ("price", 1.60, usd(2)), ("ranked", 1.60 * factor, usd(2)))
    fact("a 36-month term held through a 12-month horizon ranks at 3x its price", factor == 3.0)


def build_fleets() -> None:
    build_autoscaling()
    build_mixed()
    build_ops_and_hosts()
    build_instances_and_commitments()


def build_self_host() -> None:
    claim("n = max(m, ceil(λ_peak / (t x μ)), ceil(λ_peak / μ) + s)")
    idle = size_self_host(mean_requests_per_second=0.0, peak_requests_per_second=0.0, capacity_requests_per_second=MU,
                          tokens_per_request=1200, gpus_per_replica=1, usd_per_gpu_hour=2.0)
    fact("at least one replica", idle.replicas == 1)
    build_headroom()
    build_fleets()
    claim("$/M at full utilization = c x N x 1e6 / (3,600 x X)", ("Mtok", 1e6, e_notation), ("hour", 3600, n0))
    claim("c = capex / (life x 8,766 h) + kW x PUE x $/kWh + colocation $/month / 730.5 h",
          ("year", HOURS_PER_YEAR, n0), ("year napkin", 365.25 * 24, n0), ("month", HOURS_PER_MONTH, fixed(1)))
    claim("(8,766 h is a Julian year;", ("year", HOURS_PER_YEAR, n0))
    owned = GPU_SHEET.get("owned/h100-sxm/owned")
    claim("`owned/h100-sxm/owned`: $30,000 over 4 years, 0.7 kW, PUE 1.2, $0.08/kWh, $140/month colocation:",
          ("capex", owned.capex_usd_per_gpu or 0, usd(0)), ("life", owned.life_years or 0, fixed(0)),
          ("kW", owned.power_kw_per_gpu or 0, fixed(1)), ("pue", owned.pue or 0, fixed(1)),
          ("kwh", owned.usd_per_kwh or 0, usd(2)), ("colo", owned.colocation_usd_per_gpu_month or 0, usd(0)))
    capex, power, colo = 30_000 / (4 * 8_766), 0.7 * 1.2 * 0.08, 140 / 730.5
    claim("30,000 / (4 x 8,766) + 0.7 x 1.2 x 0.08 + 140 / 730.5 = 0.8556 + 0.0672 + 0.1916 = **$1.1144 per GPU-hour**.",
          ("capex", capex, fixed(4)), ("power", power, fixed(4)), ("colo", colo, fixed(4)),
          ("sum", capex + power + colo, usd(4)), ("lib", owned.all_in_usd_per_gpu_hour(), usd(4)))
    claim("input $/M = $/month x φ / (Q x E[T_in]) x 1e6, output $/M = $/month x (1 - φ) / (Q x E[T_out]) x 1e6.")
    claim("At the roofline operating point prefill takes the share φ = μ(B) x t_p of the GPU's time.")
    fact("φ is the roofline's μ(B) t_p, with the simulator setting μ",
         math.isclose(SELF.usd_per_mtok_input * Q * PROMPT / 1e6 / SELF.usd_per_month, ROOF_MU * ROOF_TP, rel_tol=1e-9)
         and math.isclose(SELF.usd_per_mtok_input, ROOF.usd_per_mtok_input, rel_tol=1e-12))
    method = next(n for n in SELF.notes if n.startswith("capacity method: "))
    claim("(`capacity method: simulator`)", ("method", method, text))
    claim("The simulator replays 1,000 seeded requests with the workload's token distributions arriving as a Poisson "
          "stream, and μ is the highest rate whose simulated TTFT p90 and TPOT p90 both meet the SLO's limits divided "
          "by 1 + the engine profile's documented error",
          ("requests", SIMULATED_REQUESTS, n0), ("requests sim", SIM.requests_per_simulation, n0))
    # capacity_at_slo's default burstiness 1 is Poisson; the decision's μ is that run's.
    fact("the decision's μ is the capacity search's at the tightened limits (Poisson arrivals)",
         SIM.max_rate_requests_per_second == MU)
    fact("the saturation rate counts as failing", MU < SATURATION)
    claim("Between 0 and saturation it bisects until the bracket is within 5% of the rate, so μ is the highest rate "
          "tried that meets the SLO and the true limit lies less than 5% above it.",
          ("tolerance", RATE_TOLERANCE, pct(0)))
    option = SCENARIO.option("h100-8b")
    assert isinstance(option, SelfHostOption)
    fact("capacity is cached per configuration: ten times the volume reuses the same result",
         self_host_capacity(SCENARIO, option, calibration=None, cache=CACHE)[0]
         is self_host_capacity(SCENARIO_10X, option, calibration=None, cache=CACHE)[0])
    claim("(`costmodel/serving/analytic.py`; `decide(..., capacity_method=\"roofline\")`) is the fast method.")
    fact("capacity_method='roofline' names its method", "capacity method: roofline" in ROOF.notes)
    claim("μ(B) = 1 / (t_p + T_out x t_d(B) / B) and TPOT = t_d(B) / (1 - μ(B) t_p)")
    big = option.model_copy(update={"model": "llama-3.1-70b"})
    too_big = self_host_capacity(SCENARIO, big, calibration=None)[0]
    fact("a model that does not fit is rejected by the roofline, before any simulation",
         not too_big.feasible and too_big.method == "roofline" and "does not fit" in too_big.reason)
    fact("the KV ceiling on the batch comes from the roofline's memory plan",
         self_host_capacity(SCENARIO, option, calibration=None)[0].max_batch
         == self_host_capacity(SCENARIO, option, calibration=None, method="roofline")[0].max_batch)


def build_break_even() -> None:
    claim("c x N x 1e6 / (3,600 x u x X) = p_api => u* = c x N x 1e6 / (3,600 x X x p_api)",
          ("Mtok", 1e6, e_notation), ("hour", 3600, n0))
    claim("serves 3,600 x u x X tokens.", ("hour", 3600, n0))
    claim("u* > 1 means never.")
    fact("u* > 1 when the API is cheaper than a fully busy replica",
         break_even_utilization(usd_per_gpu_hour=2.0, gpus_per_replica=1, tokens_per_second_per_replica=X_LIB,
                                api_usd_per_mtok=0.01) > 1)
    # u* with operations cost: at utilization u* (1 + O / (n R)) the self-host $/M equals p_api.
    ops, n = 500.0, 2
    u_ops = U_STAR * (1 + ops / (n * REPLICA_MONTH))
    with_ops = size_self_host(mean_requests_per_second=u_ops * n * MU, peak_requests_per_second=n * MU,
                              capacity_requests_per_second=MU, tokens_per_request=PROMPT + OUTPUT, gpus_per_replica=1,
                              usd_per_gpu_hour=USD_PER_GPU_HOUR, ops_usd_per_month=ops)
    claim("the library reports u* x (1 + O / (n x R))")
    fact("with ops, self-host $/M equals the API's at u* x (1 + O / (n R))",
         with_ops.replicas == n and math.isclose(with_ops.usd_per_mtok, API_PER_M, rel_tol=1e-9))
    fact("the library's u* with ops is u* x (1 + O / (n R))", math.isclose(
        break_even_utilization(usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus_per_replica=1, tokens_per_second_per_replica=X_LIB,
                               api_usd_per_mtok=API_PER_M, ops_usd_per_month=ops, replicas=n),
        break_even_utilization(usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus_per_replica=1, tokens_per_second_per_replica=X_LIB,
                               api_usd_per_mtok=API_PER_M) * (1 + ops / (n * REPLICA_MONTH)), rel_tol=1e-9))
    claim("preferring an API that serves the same\nopen model as the self-host option when the scenario has one.")
    data = yaml.safe_load(YAML_BLOCK)
    # deepinfra/qwen2.5-7b: blended (1,000 x 0.04 + 200 x 0.10) / 1,200 = $0.050/M, cheaper than Cerebras's Llama.
    data["options"].append({"kind": "api", "name": "qwen", "price_id": "deepinfra/qwen2.5-7b"})
    mixed = decide(parse_scenario(data), today=TODAY)
    fact("break-even prefers the API serving the self-host option's model over a cheaper other model",
         mixed.option("qwen").usd_per_mtok < API.usd_per_mtok and mixed.option("h100-8b").break_even_against == "cerebras-8b")
    claim("Since u <= 1 / r when replicas are sized for the peak")
    fact("u <= 1 / r", (SELF.utilization or 0) <= 1 / PEAK_TO_MEAN)
    claim("V* is the monthly volume nearest today's, within 1/100x to 100x, at which the self-host option's $/month, "
          "its fleet re-sized for that volume by its own policy")
    claim("F(V*) = V* x p_api / 1e6 and carries at most C(V*) = sum_h R_h x D x 3,600 x X tokens a month at the SLO "
          "(R_h its replicas in hour h; a fixed fleet of n replicas: C = n x X x S).", ("Mtok", 1e6, e_notation),
          ("hour", 3600, n0))
    claim("u* = V* / C(V*) = F(V*) x 1e6 / (p_api x C(V*))", ("Mtok", 1e6, e_notation))
    claim("the break-even utilization above, on the fleet at the break-even volume (ops included).")
    # The pair with operations cost, on a 2-replica fleet: V* = (2 R + O) 1e6 / p and u* = V* / (2 X S) is the
    # library's u* x (1 + O / (n R)) above.
    pair_volume = (n * REPLICA_MONTH + ops) * 1e6 / API_PER_M
    fact("u* = V* / C is the break-even utilization with ops", math.isclose(
        pair_volume / (n * X_LIB * SECONDS_PER_MONTH),
        break_even_utilization(usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus_per_replica=1, tokens_per_second_per_replica=X_LIB,
                               api_usd_per_mtok=API_PER_M, ops_usd_per_month=ops, replicas=n), rel_tol=1e-9))
    fact("the library's pair is on one fleet, the one sized for V*: V* = u* x C(V*)",
         math.isclose(SELF.break_even_tokens_per_month or 0, (SELF.break_even_utilization or 0) * FLEET_C, rel_tol=1e-9))


def build_profile() -> None:
    profile = np.asarray(diurnal_profile(peak_to_mean=PEAK_TO_MEAN))
    claim("day peaking at 14:00:", ("peak hour", int(np.argmax(profile)), hour))
    claim("w_h = exp(a cos(2π (h - 14) / 24)) / mean over the 24 hours",
          ("peak hour", int(np.argmax(profile)), n0), ("hours", len(profile), n0))
    claim("A scenario gives either 24 hourly weights (scaled to mean 1) or only r.", ("hours", len(profile), n0))
    claim("The 24-point mean of exp(a cos θ) equals the modified Bessel function I0(a)")
    # Written out: solve e^a / I0(a) = 2 by bisection (numpy's I0), then build the 24 hours.
    low, high = 0.0, 10.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if math.exp(mid) / float(np.i0(mid)) < PEAK_TO_MEAN else (low, mid)
    hours = np.arange(24)
    weights = np.exp(high * np.cos(2 * np.pi * (hours - 14) / 24))
    weights = weights / weights.mean()
    fact("the library's profile is exp(a cos) with e^a / I0(a) = r", np.allclose(weights, profile, rtol=1e-9))
    a_lib = math.log(profile.max() / profile.min()) / 2  # max / min = e^(2a)
    claim("For r = 2, a = 0.877: the peak factor is 2.000 at 14:00, the trough 0.346 at 02:00, and 11 of the 24 hours "
          "are above the mean.",
          ("r", PEAK_TO_MEAN, fixed(0)), ("a", high, fixed(3)), ("a lib", a_lib, fixed(3)),
          ("peak", weights.max(), fixed(3)), ("peak lib", profile.max(), fixed(3)), ("peak hour", int(np.argmax(profile)), hour),
          ("trough", weights.min(), fixed(3)), ("trough lib", profile.min(), fixed(3)),
          ("trough hour", int(np.argmin(profile)), hour), ("above", int((profile > 1).sum()), n0),
          ("hours", len(profile), n0))
    fact("the decision uses this profile for a peak-to-mean scenario", np.allclose(DECISION.hourly_profile, profile))


def build_hybrid_formulas() -> None:
    claim("overflow requests/month = Σ_h (λ_h - served_h) x 3,600 x D", ("hour", 3600, n0))
    claim("hybrid $/month(k) = k x R + (O if k > 0) + overflow requests/month x API $/request")
    claim("k is 0 (all API) or runs from the self-host option's replica floor m to the n it needs; the cheapest k wins, "
          "the smaller k on a tie.")
    # 0.5 and 1.5 requests/s half the day each, μ = 1, R = $1,000, $0.001 a request: k = 0, 1, 2 cost
    # $2,629.80, $1,657.45 and $2,000.00, so one replica is cheapest; with a floor of 2, k is 0 or 2.
    floored = [plan_hybrid(mean_requests_per_second=1.0, hourly_profile=[0.5] * 12 + [1.5] * 12,
                           capacity_requests_per_second=1.0, replica_usd_per_month=1000.0, ops_usd_per_month=0.0,
                           api_usd_per_request=1e-3, max_base_replicas=2, min_base_replicas=m) for m in (1, 2)]
    fact("the hybrid's base respects the floor m", floored[0].base_replicas == 1 and floored[1].base_replicas == 2)
    # A tie: one replica costs exactly the API bill it would replace (flat day, all served).
    tie = plan_hybrid(mean_requests_per_second=1.0, hourly_profile=[1.0] * 24, capacity_requests_per_second=2.0,
                      replica_usd_per_month=1.0 * 3600 * HOURS_PER_MONTH * 1e-3, ops_usd_per_month=0.0,
                      api_usd_per_request=1e-3, max_base_replicas=1)
    fact("a tie goes to fewer base replicas", tie.base_replicas == 0)
    claim("of the curve between (k - 1) μ and k μ.")


def build_ranking() -> None:
    claim("more than 0.5% dearer", ("margin", 0.005, pct(1)))

    def saving_line(dearer_by: float) -> bool:
        runner_up = dataclasses.replace(SELF, usd_per_month=API.usd_per_month * (1 + dearer_by))
        ranked = (API, runner_up)
        pick = Recommendation(chosen=API, cheapest_usable=API, cheaper_unverified=None, premium_usd_per_month=0.0)
        return any(r.startswith("It costs") for r in decision_reasons(ranked, pick))

    fact("the runner-up is named at 0.6% dearer, not at 0.4%", saving_line(0.006) and not saving_line(0.004))
    fact("ties go to the simpler option (API before the hybrid at the same cost)",
         [o.kind for o in DECISION.options] == ["api", "hybrid", "self-host"]
         and math.isclose(API.usd_per_month, HYBRID.usd_per_month))
    claim("A self-host option that cannot meet the SLO at any load is priced at one replica, with $/M = n/a")
    strict = SCENARIO.model_copy(update={"slo": SCENARIO.slo.model_copy(update={"ttft_p90_seconds": 0.001})})
    infeasible = decide(strict, today=TODAY).option("h100-8b")
    fact("infeasible self-host: one replica, $/M infinite, misses the SLO with a reason",
         not infeasible.meets_slo and math.isinf(infeasible.usd_per_mtok)
         and math.isclose(infeasible.usd_per_month, REPLICA_MONTH) and "no load meets it" in infeasible.slo_reason)
    searched = strict.slo.ttft_p90_seconds / (1 + E_TTFT)  # the limit the search runs at, limit / (1 + e)
    zero_load = capacity_for_replica(with_option_speculation(_REPLICA, _SELF_OPTION),
                                     _search(tightened_slo(strict.slo, engine=ENGINE)))
    claim(f'With a 1 ms TTFT limit the worked example\'s h100-8b reads "{infeasible.slo_reason}" (the limit printed '
          'is the searched one, 1 ms / 1.165).',
          ("limit", strict.slo.ttft_p90_seconds, ms(0)), ("searched", searched, lambda v: f"{float(v):.3g}"),
          ("prompt", PROMPT, text), ("prefill", zero_load.zero_load_seconds["ttft_p90_seconds"], lambda v: f"{float(v):.3g}"),
          ("factor", 1 + E_TTFT, fixed(3)))
    fact("a self-host option that misses the SLO is excluded", infeasible.excluded_kind == "misses_slo")
    workload = SCENARIO.workload

    def warns(**update: object) -> tuple[str, ...]:
        changed = type(workload).model_validate({**workload.model_dump(), **update})
        return scenario_warnings(SCENARIO.model_copy(update={"workload": changed}), (), capacities={})

    def has(found: tuple[str, ...], start: str) -> bool:
        return any(w.startswith(start) for w in found)

    claim("| Spiky traffic | r >= 2 |", ("r", 2, n0))
    fact("spiky at r = 2, not at 1.99", has(warns(peak_to_mean_ratio=2.0), "Spiky")
         and not has(warns(peak_to_mean_ratio=1.99), "Spiky"))
    claim("| Prefill-heavy | E[T_in] / E[T_out] >= 8 |", ("ratio", 8, n0))
    fact("prefill-heavy at 8x, not at 7.99x",
         has(warns(prompt_tokens={"kind": "fixed", "tokens": 1600}), "Prefill-heavy")
         and not has(warns(prompt_tokens={"kind": "fixed", "tokens": 1598}), "Prefill-heavy"))
    claim("| KV growth | a self-host replica's mean batch at μ is >= 80% of its KV-memory batch ceiling |", ("kv", 0.8, pct(0)))

    def kv_warns(batch: int) -> bool:
        cap = Capacity(feasible=True, reason="", requests_per_second=1.0, batch=batch, ttft_seconds=0.1,
                       tpot_seconds=0.01, prefill_time_fraction=0.5, max_batch=100, method="roofline")
        return has(scenario_warnings(SCENARIO, (), capacities={"h100-8b": cap}), "KV growth")

    fact("KV growth at 80 of 100 sequences, not at 79", kv_warns(80) and not kv_warns(79))
    claim("| Growth | growth per month > 0: shows the volume factor 6 months ahead |", ("months", 6, n0))
    fact("growth warning names 6 months", any("in 6 months" in w for w in warns(growth_per_month=0.05)))
    fact("no growth warning at 0", not has(warns(growth_per_month=0.0), "Growth"))


GROWTH = 0.25  # the horizon paragraph of the worked example: growth_per_month 0.25, as_of 2026-12-01
SCENARIO_GROWTH = SCENARIO.model_copy(
    update={"workload": SCENARIO.workload.model_copy(update={"growth_per_month": GROWTH})})
DECISION_GROWTH: Decision = decide(SCENARIO_GROWTH, today=dt.date(2026, 12, 1), capacity_cache=CACHE)


def _rejected(data: dict[str, object]) -> bool:
    try:
        parse_scenario(data)
    except CostmodelError:
        return True
    return False


def build_horizon() -> None:
    claim("`horizon_months` (a scenario field, 1..120, default 12; `compare --horizon-months` overrides it)",
          ("min", 1, n0), ("max", 120, n0), ("default", Scenario.model_fields["horizon_months"].default, n0))
    data = yaml.safe_load(YAML_BLOCK)
    fact("horizon_months is 1..120", all(_rejected({**data, "horizon_months": h}) for h in (0, 121))
         and parse_scenario({**data, "horizon_months": 120}).horizon_months == 120)
    claim("month m's volume is month 0's times (1 + g)^m, g = `growth_per_month`.", ("one", 1, n0), ("zero", 0, n0))
    fact("month 0 of usd_by_month is usd_per_month",
         all(o.usd_by_month is not None and o.usd_by_month[0] == o.usd_per_month for o in DECISION_GROWTH.options))
    claim("API: usd_m = $/request x Q x (1 + g)^m self-host: n_m = max(m_floor, ceil(λ_m / (t x μ)), ceil(λ_m / μ) + s), "
          "λ_m = λ_peak x (1 + g)^m, usd_m = n_m x N x c x H + O hybrid: the base count k re-chosen on month m's "
          "load-duration curve, at most n_m total: usd_horizon_total = usd_0 + ... + usd_(horizon - 1)",
          ("one", 1, n0), ("zero", 0, n0))
    claim("(`commitment` \"1 year ...\" = 12 months, \"3 years ...\" = 36) are paid over the whole term: replicas added "
          "in month k stay paid for months k to k + T - 1,",
          ("1y", next(r.term_months for r in GPU_SHEET.rows if (r.commitment or "").startswith("1 year")), n0),
          ("3y", next(r.term_months for r in GPU_SHEET.rows if (r.commitment or "").startswith("3 years")), n0),
          ("one", 1, n0), ("three", 3, n0))
    paid, _ = committed_replicas([4, 4, 3, 2, 2], term_months=3)
    claim("With a 3-month term and needs of 4, 4, 3, 2, 2 replicas the fleet pays 4, 4, 4, 2, 2: the first 4 run out "
          "after month 2, and month 3 commits 2 more.",
          ("term", 3, n0), ("paid", ", ".join(str(p) for p in paid), text), ("first", paid[0], n0),
          ("out", 2, n0), ("month", 3, n0), ("more", paid[3], n0))
    claim("`compare --json` carries `usd_by_month` (horizon_months numbers, month 0 = `usd_per_month`)",
          ("zero", 0, n0))
    api, self_host, hybrid = (DECISION_GROWTH.option(n) for n in ("cerebras-8b", "h100-8b", "h100-base-plus-cerebras"))
    assert api.usd_by_month and self_host.usd_by_month and hybrid.usd_by_month
    api_written = [API_MONTH * (1 + GROWTH) ** m for m in range(12)]
    fact("the API's months are $/request x Q x 1.25^m",
         all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(api.usd_by_month, api_written, strict=True)))
    peak = [LAM_PEAK * (1 + GROWTH) ** m for m in range(12)]
    needed = [replicas_for(x) for x in peak]
    fact("h100-8b: 2 replicas through month 9, 3 from month 10", needed == [2] * 10 + [3] * 2
         and list(self_host.usd_by_month) == [n * REPLICA_MONTH for n in needed])
    claim("**Over a 12-month horizon** with the volume growing 25% a month (add `growth_per_month: 0.25` under "
          "`workload:`, `as_of` 2026-12-01): the API costs 365.25 x 1.25^m, $2,721.32 in month 9 and $3,401.66 in "
          "month 10.",
          ("horizon", DECISION_GROWTH.horizon_months, n0), ("g", GROWTH, pct(0)), ("g2", GROWTH, fixed(2)),
          ("api0", API_MONTH, fixed(2)), ("factor", 1 + GROWTH, fixed(2)), ("m9", api_written[9], usd(2)),
          ("m9 lib", api.usd_by_month[9], usd(2)), ("m10", api_written[10], usd(2)), ("m10 lib", api.usd_by_month[10], usd(2)),
          ("nine", 9, n0), ("ten", 10, n0), ("as_of", "2026-12-01", text))
    claim("h100-8b keeps 2 replicas ($2,922.00) through month 9 and needs 3 ($4,383.00) from month 10, when the peak, "
          "2.315 x 1.25^10 = 21.56 requests/s, passes μ = 20.098.",
          ("two", needed[9], n0), ("m9 lib", self_host.usd_by_month[9], usd(2)), ("three", needed[10], n0),
          ("m10 lib", self_host.usd_by_month[10], usd(2)), ("peak", LAM_PEAK, fixed(3)), ("factor", 1 + GROWTH, fixed(2)),
          ("peak 10", peak[10], fixed(2)), ("mu", MU, fixed(3)), ("ten", 10, n0), ("nine", 9, n0))
    fact("month 10's peak passes μ, month 9's does not", peak[9] < MU < peak[10])
    claim("Up to month 11's 1.25^11 = 11.64x it would be cheaper than the API only between V* (8.00x today's volume) "
          "and 8.68x; month 9 is at 1.25^9 = 7.45x and month 10 at 9.31x, so it never is.",
          ("V*", (self_host.break_even_tokens_per_month or 0) / V, times(2)), ("N+1", MU / LAM_PEAK, times(2)),
          ("m9", (1 + GROWTH) ** 9, times(2)), ("m10", (1 + GROWTH) ** 10, times(2)), ("factor", 1 + GROWTH, fixed(2)),
          ("m11", (1 + GROWTH) ** 11, times(2)), ("nine", 9, n0), ("ten", 10, n0), ("eleven", 11, n0))
    # Written out: 2 replicas ($2,922) hold to 8.68x, 3 ($4,383) beyond; the API costs 365.25 x f, $4,383 only at 12x.
    fact("between 8.68x and 11.64x three replicas cost more than the API", 3 * REPLICA_MONTH > API_MONTH * (1 + GROWTH) ** 11)
    fact("h100-8b is never the cheapest month over the horizon",
         all(s > min(a, h) for s, a, h in zip(self_host.usd_by_month, api.usd_by_month, hybrid.usd_by_month, strict=True)))
    claim("So **ranking_change_month = 10** (2027-10): the hybrid becomes the cheapest, its 2 base replicas carrying "
          "every request for $2,922.00 against the API's $3,401.66.",
          ("month", DECISION_GROWTH.ranking_change_month or 0, n0), ("k", 2, n0),
          ("hybrid 10", hybrid.usd_by_month[10], usd(2)), ("api 10", api.usd_by_month[10], usd(2)), ("date", "2027-10", text))
    fact("the ranking change is stated in the reasons",
         any("month 10 (2027-10): h100-base-plus-cerebras becomes cheaper than cerebras-8b" in r
             for r in DECISION_GROWTH.reasons))
    hybrid_written = sum(api_written[:10]) + 2 * 2 * REPLICA_MONTH  # months 10 and 11: two base replicas, no overflow
    claim("Over the 12 months the API costs $19,799.35, h100-8b $37,986.00 and the hybrid, which sends everything to "
          "the API through month 9, $17,989.62: the cheapest total.",
          ("months", 12, n0), ("api", sum(api_written), usd(2)), ("api lib", api.usd_horizon_total or 0, usd(2)),
          ("self", sum(needed) * REPLICA_MONTH, usd(2)), ("self lib", self_host.usd_horizon_total or 0, usd(2)),
          ("nine", 9, n0), ("hybrid", hybrid_written, usd(2)), ("hybrid lib", hybrid.usd_horizon_total or 0, usd(2)))
    fact("the hybrid has the cheapest total", min(DECISION_GROWTH.usable_options, key=lambda o: o.usd_horizon_total or 0)
         is hybrid)


def build_worked_example() -> None:
    wl = SCENARIO.workload
    claim("A service of 100,000 requests a day, each a fixed 1,000-token prompt and 200 output tokens, with a busiest "
          "hour at twice the mean, and an SLO of TTFT p90 1 s and TPOT p90 50 ms.",
          ("requests", wl.requests_per_day or 0, n0), ("prompt", wl.mean_prompt_tokens(), n0),
          ("output", wl.mean_output_tokens(), n0), ("ttft", SCENARIO.slo.ttft_p90_seconds, fixed(0, suffix=" s")),
          ("tpot", SCENARIO.slo.tpot_p90_seconds, ms(0)))
    fact("twice the mean", wl.peak_to_mean() == 2.0)
    cerebras = API_SHEET.get("cerebras/llama-3.1-8b")
    claim("(`cerebras/llama-3.1-8b`, $0.10 per M input and output, LiteLLM 1.110.2 and genai-prices 0.2.3 agree, "
          "checked 2026-11-29)",
          ("in", cerebras.input_usd_per_mtok, usd(2)), ("out", cerebras.output_usd_per_mtok, usd(2)),
          ("in written", CEREBRAS_IN, usd(2)), ("out written", CEREBRAS_OUT, usd(2)),
          ("litellm", cerebras.source_version.split("==")[1].split()[0], text),
          ("genai", (cerebras.crosscheck_source or "").split("==")[1].split()[0], text),
          ("checked", cerebras.checked.isoformat(), text))
    fact("cerebras: the two sources agree", cerebras.disagreement is None
         and cerebras.crosscheck_input_usd_per_mtok == cerebras.input_usd_per_mtok
         and cerebras.crosscheck_output_usd_per_mtok == cerebras.output_usd_per_mtok)
    option = SCENARIO.option("h100-8b")
    claim("or serve it itself on one H100 SXM per replica at $2.00 per GPU-hour.",
          ("price", getattr(option, "usd_per_gpu_hour", 0.0), usd(2)), ("price written", USD_PER_GPU_HOUR, usd(2)))
    fact("one GPU per replica", SELF.gpus_per_replica == 1)
    together = API_SHEET.get("together/llama-3.1-8b")
    claim("(The sheet's `together/llama-3.1-8b` row, $0.18, is not used: it carries LiteLLM's deprecation date "
          "2026-03-06, so the model is retired;",
          ("price", together.input_usd_per_mtok, usd(2)),
          ("date", together.deprecation_date.isoformat() if together.deprecation_date else "", text))
    fact("together/llama-3.1-8b is retired", together.is_retired(today=TODAY))
    claim(YAML_BLOCK)
    claim("The scenario sets no `fleet:` and no `engine`, so h100-8b is sized by the interactive defaults (t = 0.8, "
          "s = 1, m = 2; \"Headroom and redundancy\") and simulated with the `vllm` engine profile.",
          ("t", SELF.target_peak_utilization or 0, fixed(1)), ("s", SELF.spare_replicas, n0),
          ("m", SELF.min_replicas or 0, n0))
    fact("the YAML sets no fleet, no engine and no accept_unverified_latency",
         "fleet" not in yaml.safe_load(YAML_BLOCK) and "engine" not in str(yaml.safe_load(YAML_BLOCK)["options"])
         and not SCENARIO.accept_unverified_latency and ENGINE == "vllm")
    claim("Cerebras's is published: kickllm.com's benchmark median widened by the published p90/p50 spreads gives a "
          "TTFT p90 band of 0.054 to 0.076 s and a TPOT p90 band of 1.44 to 1.61 ms, within both limits, so "
          "cerebras-8b `likely_meets` the SLO.",
          ("ttft low", API.ttft_p90_seconds_low or 0, fixed(3)), ("ttft high", API.ttft_p90_seconds_high or 0, fixed(3)),
          ("tpot low", (API.tpot_p90_seconds_low or 0) * 1e3, fixed(2)),
          ("tpot high", (API.tpot_p90_seconds_high or 0) * 1e3, fixed(2)))
    fact("cerebras-8b: published latency, likely meets, from kickllm.com",
         API.latency_source == "published" and API.slo_status == "likely_meets" and "kickllm.com" in API.slo_reason
         and (API.ttft_p90_seconds_high or 9) <= 1.0 and (API.tpot_p90_seconds_high or 9) <= 0.05)

    # Volume
    claim("Q = 100,000 x 30.4375 = 3,043,750 requests/month; V = 3,043,750 x (1,000 + 200) = 3,652,500,000 "
          "tokens/month (3.65B).",
          ("D", D, fixed(4)), ("Q", Q, n0), ("Q lib", DECISION.requests_per_month, n0), ("V", V, n0),
          ("V lib", DECISION.tokens_per_month, n0), ("V B", DECISION.tokens_per_month, billions(2)))
    claim("λ = 100,000 / 86,400 s = 1.157 requests/s; λ_peak = 2 x 1.157 = 2.315 requests/s.",
          ("lam", LAM, fixed(3)), ("lam lib", DECISION.mean_requests_per_second, fixed(3)),
          ("peak", LAM_PEAK, fixed(3)), ("peak lib", wl.peak_requests_per_second(), fixed(3)), ("r", PEAK_TO_MEAN, fixed(0)))

    # API
    claim("$/request = (1,000 x 0.10 + 200 x 0.10) / 1e6 = **$0.000120**. $/month = 0.000120 x 3,043,750 = **$365.25**.",
          ("per request", API_PER_REQUEST, usd(6)), ("per request lib", API.api_usd_per_request or 0, usd(6)),
          ("month", API_MONTH, usd(2)), ("month lib", API.usd_per_month, usd(2)), ("Q", Q, n0))
    claim("Blended $/M = 365.25 / 3,652.5 M tokens = **$0.100**.",
          ("V M", V / 1e6, fixed(1)), ("per M", API_PER_M, usd(3)), ("per M lib", API.usd_per_mtok, usd(3)))
    check = check_rate_limits(wl, requests_per_minute_limit=cerebras.requests_per_minute,
                              tokens_per_minute_limit=cerebras.tokens_per_minute, batch=False)
    fact("cerebras row publishes no per-minute limits", cerebras.requests_per_minute is None and cerebras.tokens_per_minute is None)
    claim("the peak minute is 138.9 requests and 166,667 tokens.",
          ("rpm", check.peak_requests_per_minute, fixed(1)), ("tpm", check.peak_tokens_per_minute, n0))

    # Capacity: the simulator's, as the decision reports it; the roofline closed form beside it
    batch = int(re.search(r"\(batch (\d+)\)", SELF.slo_reason).group(1))  # type: ignore[union-attr]
    shape = derive_shape(load_model("llama-3.1-8b"))
    h100 = load_accelerator("h100-sxm")
    memory = plan_memory(shape, hbm_bytes_per_gpu=h100.memory_bytes, gpus=1,
                         weight_bytes_per_param=BYTES_PER_ELEMENT["bf16"], kv_bytes_per_element=BYTES_PER_ELEMENT["bf16"],
                         context_tokens=PROMPT + OUTPUT)
    claim("The `vllm` profile's documented error is 16.6% on TTFT and 7.7% on TPOT "
          "(`costmodel/data/simulated_latency_error.csv`), so the simulator searches at TTFT p90 1 / 1.165 = 0.858 s "
          "and TPOT p90 50 / 1.077 = 46.4 ms.",
          ("e ttft", E_TTFT, pct(1)), ("e tpot", E_TPOT, pct(1)), ("f ttft", 1 + E_TTFT, fixed(3)),
          ("f tpot", 1 + E_TPOT, fixed(3)), ("ttft", TIGHT.ttft_p90_seconds, fixed(3, suffix=" s")),
          ("ttft written", 1.0 / 1.1655, fixed(3)), ("tpot", TIGHT.tpot_p90_seconds, ms(1)),
          ("tpot written", 50 / 1.0770, fixed(1)), ("limit", SCENARIO.slo.tpot_p90_seconds * 1e3, fixed(0)))
    claim("It gives one H100 SXM μ = **20.098 requests/s**.", ("mu", MU, fixed(3)))
    fact("the worked example's capacity comes from the simulator", "capacity method: simulator" in SELF.notes)
    run = SIM.at_capacity
    assert run is not None
    claim("At that rate the simulated TTFT p90 is 0.145 s and TPOT p90 32.6 ms, with 109 sequences running on average "
          "(KV memory holds at most 384 sequences of 1,200 tokens); with the bands, at most 0.169 s and 35.1 ms, so "
          "h100-8b `likely_meets` the SLO.",
          ("ttft", SELF.ttft_p90_seconds or 0, fixed(3, suffix=" s")), ("ttft sim", run.ttft.p90_seconds, fixed(3, suffix=" s")),
          ("tpot", SELF.tpot_p90_seconds or 0, ms(1)), ("tpot sim", run.tpot.p90_seconds, ms(1)),
          ("batch", batch, n0), ("mean batch sim", run.mean_batch, n0), ("max batch", memory.max_batch, n0),
          ("context", PROMPT + OUTPUT, n0), ("ttft high", SELF.ttft_p90_seconds_high or 0, fixed(3, suffix=" s")),
          ("ttft high written", (SELF.ttft_p90_seconds or 0) * (1 + E_TTFT), fixed(3)),
          ("tpot high", SELF.tpot_p90_seconds_high or 0, ms(1)),
          ("tpot high written", (SELF.tpot_p90_seconds or 0) * (1 + E_TPOT), ms(1)))
    fact("h100-8b: simulated latency, likely meets", SELF.latency_source == "simulated" and SELF.slo_status == "likely_meets")
    fact("the operating point fits in KV memory", batch <= memory.max_batch)
    fact("the operating point meets the tightened SLO", (SELF.ttft_p90_seconds or 9) <= TIGHT.ttft_p90_seconds
         and (SELF.tpot_p90_seconds or 9) <= TIGHT.tpot_p90_seconds)
    steps = SIM.simulations - 2  # zero load and saturation come first
    claim("Neither limit binds: the replica saturates at 20.746 requests/s, and the search took 7 simulations (zero "
          "load, saturation, then 5 bisection steps, all passing) to stop at 20.098, 96.9% of saturation.",
          ("saturation", SATURATION, fixed(3)), ("runs", SIM.simulations, n0), ("steps", steps, n0),
          ("mu", MU, fixed(3)), ("share", MU / SATURATION, pct(1)))
    # Every step passing: the bisection of [0, saturation) moved up each time, so μ = (1 - 2^-steps) x saturation.
    fact("all bisection steps passed", math.isclose(MU, (1 - 0.5**steps) * SATURATION, rel_tol=1e-12))
    claim("`capacity_at_slo` flags such a result `saturation_bound` (throughput-bound, not latency-bound);")
    fact("the worked example is saturation-bound", SIM.saturation_bound)
    claim("the headroom t = 0.8 keeps the peak hour at most 80% of μ.", ("t", SELF.target_peak_utilization or 0, fixed(1)),
          ("share", SELF.target_peak_utilization or 0, pct(0)))
    fact("no 'No headroom' warning at t = 0.8", not any(w.startswith("No headroom") for w in DECISION.warnings))
    fact("the decision sizes at μ as found", math.isclose(SELF.tokens_per_second_per_replica or 0, MU * 1200, rel_tol=1e-12))
    claim("X = μ x 1,200 = 20.0977 x 1,200 = **24,117 tokens/s** per replica.",
          ("mu", MU, fixed(4)), ("X", X, n0), ("X lib", X_LIB, n0), ("X napkin", 20.0977 * 1200, n0),
          ("tokens", PROMPT + OUTPUT, n0))
    roof_batch = int(re.search(r"\(batch (\d+)\)", ROOF.slo_reason).group(1))  # type: ignore[union-attr]
    claim("The roofline closed form gives 21.392 requests/s, 6.4% more (decode batch 188, TTFT 27.0 ms, TPOT "
          "43.9 ms):",
          ("mu", ROOF_MU, fixed(3)), ("more", ROOF_MU / MU - 1, pct(1)), ("batch", roof_batch, n0),
          ("ttft", ROOF_TP, ms(1)), ("tpot", ROOF.tpot_p90_seconds or 0, ms(1)))
    fact("the roofline's operating point fits in KV memory and meets the tightened SLO",
         roof_batch <= memory.max_batch and (ROOF.ttft_p90_seconds or 9) <= TIGHT.ttft_p90_seconds
         and (ROOF.tpot_p90_seconds or 9) <= TIGHT.tpot_p90_seconds)
    claim("it compares latencies without queueing against the limits, so it can be optimistic, even though its TPOT "
          "charges each decode step for all prefill time, t_d(B) / (1 - φ), where the simulator's chunked prefill puts "
          "prefill chunks and decode tokens in the same step.", ("one", 1, n0))

    # Self-host
    claim("n = max(2, ceil(2.315 / (0.8 x 20.098)), ceil(2.315 / 20.098) + 1) = max(2, ceil(0.144), ceil(0.115) + 1) "
          "= **2** replicas: the floor and N+1 bind.",
          ("peak", LAM_PEAK, fixed(3)), ("mu", MU, fixed(3)), ("r80", LAM_PEAK / (0.8 * MU), fixed(3)),
          ("ratio", LAM_PEAK / MU, fixed(3)), ("n", REPLICAS, n0), ("n lib", SELF.replicas, n0))
    claim("$/month = 2 x 1 x $2.00 x 730.5 h = **$2,922.00**.",
          ("month", SELF_MONTH, usd(2)), ("month lib", SELF.usd_per_month, usd(2)), ("H", H, fixed(1)))
    claim("$/M = 2,922.00 / 3,652.5 = **$0.800**.",
          ("per M", SELF_MONTH / (V / 1e6), usd(3)), ("per M lib", SELF.usd_per_mtok, usd(3)))
    claim("u = 1.157 / (2 x 20.098) = **2.9%**: the replicas idle most of the day.",
          ("u", U, pct(1)), ("u lib", SELF.utilization or 0, pct(1)), ("lam", LAM, fixed(3)), ("mu", MU, fixed(3)))
    full = size_self_host(mean_requests_per_second=LAM, peak_requests_per_second=LAM_PEAK, capacity_requests_per_second=MU,
                          tokens_per_request=PROMPT + OUTPUT, gpus_per_replica=1, usd_per_gpu_hour=USD_PER_GPU_HOUR)
    claim("At full utilization its $/M would be 2.00 x 1 x 1e6 / (3,600 x 24,117) = $0.0230.",
          ("full", USD_PER_GPU_HOUR * 1e6 / (3600 * X), usd(4)), ("full lib", full.usd_per_mtok_at_full_utilization, usd(4)),
          ("X", X, n0))
    prompt_m, output_m = Q * PROMPT / 1e6, Q * OUTPUT / 1e6
    phi = SELF.usd_per_mtok_input * prompt_m / SELF.usd_per_month  # the library's φ, from its input $/M
    claim("At the roofline operating point prefill takes φ = 21.392 x 0.02698 s = 57.7% of the GPU's time, so input "
          "$/M = 2,922.00 x 0.577 / 3,043.75 M prompt tokens = $0.554 and output $/M = 2,922.00 x 0.423 / 608.75 M "
          "output tokens = $2.029.",
          ("mu roof", ROOF_MU, fixed(3)), ("t_p", ROOF_TP, fixed(5)), ("phi written", 21.392 * 0.02698, pct(1)),
          ("phi", phi, pct(1)), ("phi 3", phi, fixed(3)), ("1-phi", 1 - phi, fixed(3)), ("prompt M", prompt_m, fixed(2)),
          ("output M", output_m, fixed(2)), ("month", SELF_MONTH, fixed(2)), ("in", SELF_MONTH * phi / prompt_m, usd(3)),
          ("in lib", SELF.usd_per_mtok_input, usd(3)), ("out", SELF_MONTH * (1 - phi) / output_m, usd(3)),
          ("out lib", SELF.usd_per_mtok_output, usd(3)))

    # Break-even: V* where the re-sized fleet's cost crosses the API's; the fleet sized for V* is still 2 replicas
    claim("u* = 2.00 x 1 x 1e6 / (3,600 x 24,117 x 0.100) = **23.0%**, 8.00x the 2.9% the replicas run at (the ratio "
          "u* / u does not depend on μ while the fleet keeps 2 replicas).",
          ("u*", U_STAR, pct(1)), ("u* lib", SELF.break_even_utilization or 0, pct(1)), ("X", X, n0),
          ("ratio", U_STAR / U, times(2)), ("u", U, pct(1)), ("n", SELF.replicas, n0))
    fact("u* / u is the same with the roofline's μ", ROOF.replicas == SELF.replicas and math.isclose(
        (ROOF.break_even_utilization or 0) / (ROOF.utilization or 1), U_STAR / U, rel_tol=1e-9))
    fact("break-even against the cheapest API", SELF.break_even_against == "cerebras-8b")
    fact("the fleet re-sized for V* is today's 2 replicas, and 2.00x more volume would not be",
         replicas_for(LAM_PEAK * V_STAR / V) == REPLICAS == 2 and V_STAR / V < MU / LAM_PEAK)
    claim("The 2-replica fleet carries a peak up to μ before N+1 asks for a third, 20.098 / 2.315 = 8.68x today's "
          "volume,", ("n", REPLICAS, n0), ("mu", MU, fixed(3)), ("peak", LAM_PEAK, fixed(3)),
          ("times", MU / LAM_PEAK, times(2)))
    fact("just above a peak of μ, N+1 asks for a third replica", replicas_for(MU * 1.0001) == 3 == replicas_for(MU) + 1)
    claim("crosses the API's at V* = (2 x 1,461.00 + 0) x 1e6 / 0.100 = **29.22B tokens/month**, 8.00x today's 3.65B, "
          "or 800,000 requests/day; the fleet sized for it carries at most C = 2 x 24,117 x 2,629,800 = 126.85B "
          "tokens/month.",
          ("n", REPLICAS, n0), ("R", REPLICA_MONTH, fixed(2)), ("V*", V_STAR, billions(2)),
          ("V* lib", SELF.break_even_tokens_per_month or 0, billions(2)), ("p", API_PER_M, fixed(3)),
          ("times", V_STAR / V, times(2)), ("V", V, billions(2)), ("per day", V_STAR / (PROMPT + OUTPUT) / D, n0),
          ("X", X, n0), ("S", S, n0), ("C", FLEET_C, billions(2)))
    claim("Check: 29.22B / 126.85B = 23.0% = u*.",
          ("V*", V_STAR, billions(2)), ("C", FLEET_C, billions(2)), ("check", V_STAR / FLEET_C, pct(1)),
          ("u* lib", SELF.break_even_utilization or 0, pct(1)))

    # Hybrid
    claim("With no base replica the hybrid costs the API's $365.25.", ("hybrid", HYBRID.usd_per_month, usd(2)))
    fact("hybrid keeps no base replica", HYBRID.replicas == 0)
    claim("Its base keeps no headroom and no spare but does keep h100-8b's floor m = 2, so the next choice is k = 2: "
          "$2,922.00 + $0 of overflow. k = 0 wins.",
          ("m", SELF.min_replicas or 0, n0), ("k", REPLICAS, n0), ("two", 2 * REPLICA_MONTH, usd(2)),
          ("zero", 0, n0))
    fact("the hybrid's base: t = 1, no spare, 0 or at least the floor of h100-8b (the hybrid's own floor is 0)",
         (HYBRID.target_peak_utilization, HYBRID.spare_replicas, HYBRID.min_replicas, SELF.min_replicas) == (1.0, 0, 0, 2))
    fact("two base replicas carry the whole day", LAM_PEAK < 2 * MU)

    # Ranking, reasons, warnings
    order = [o.name for o in DECISION.options]
    claim("cerebras-8b ($365.25), then h100-base-plus-cerebras (the same $365.25, ranked after the simpler API), "
          "then h100-8b ($2,922.00).",
          ("1st", order[0], text), ("2nd", order[1], text), ("3rd", order[2], text),
          ("api", API.usd_per_month, usd(2)), ("hyb", HYBRID.usd_per_month, usd(2)), ("self", SELF.usd_per_month, usd(2)))
    fact("recommendation is the API", DECISION.recommendation == "cerebras-8b")
    claim("The recommendation is the cheapest usable option, so `recommendation_premium_usd_per_month` is 0, and no "
          "cheaper option is unverified (`cheaper_unverified` is null).",
          ("premium", DECISION.recommendation_premium_usd_per_month or 0, n0))
    fact("premium 0 and nothing cheaper unverified",
         DECISION.recommendation_premium_usd_per_month == 0 and DECISION.cheaper_unverified is None)
    for reason in DECISION.reasons:
        claim(f"- {reason}")
    for warning in DECISION.warnings:
        claim(f"- {warning}")
    fact("one warning printed", len(DECISION.warnings) == 1)
    fact("three reasons printed", len(DECISION.reasons) == 3)

    # Ten times the volume
    api10, self10, hyb10 = (DECISION_10X.option(n) for n in ("cerebras-8b", "h100-8b", "h100-base-plus-cerebras"))
    q10, v10, lam10 = 10 * Q, 10 * V, 10 * LAM
    peak10 = PEAK_TO_MEAN * lam10
    claim("(1,000,000 requests/day, 36.5B tokens/month)",
          ("rpd", SCENARIO_10X.workload.requests_per_day or 0, n0), ("V", DECISION_10X.tokens_per_month, billions(1)))
    claim("- API: 0.000120 x 30,437,500 = $3,652.50.",
          ("Q", q10, n0), ("Q lib", DECISION_10X.requests_per_month, n0), ("month", API_PER_REQUEST * q10, usd(2)),
          ("month lib", api10.usd_per_month, usd(2)))
    n10 = replicas_for(peak10)
    claim("- Self-host: λ = 11.574, λ_peak = 23.148 requests/s; n = max(2, ceil(23.148 / (0.8 x 20.098)), "
          "ceil(23.148 / 20.098) + 1) = max(2, ceil(1.440), ceil(1.152) + 1) = 3 replicas: N+1 binds. $4,383.00, "
          "$/M = 4,383.00 / 36,525 = $0.1200, u = 11.574 / (3 x 20.098) = 19.2%.",
          ("mu", MU, fixed(3)), ("lam", lam10, fixed(3)), ("peak", peak10, fixed(3)),
          ("r80", peak10 / (0.8 * MU), fixed(3)), ("ratio", peak10 / MU, fixed(3)),
          ("n", n10, n0), ("n lib", self10.replicas, n0), ("month", n10 * REPLICA_MONTH, usd(2)),
          ("month lib", self10.usd_per_month, usd(2)), ("month 2", n10 * REPLICA_MONTH, fixed(2)), ("V M", v10 / 1e6, n0),
          ("per M", n10 * REPLICA_MONTH / (v10 / 1e6), usd(4)), ("per M lib", self10.usd_per_mtok, usd(4)),
          ("u", lam10 / (n10 * MU), pct(1)), ("u lib", self10.utilization or 0, pct(1)))
    fact("at ten times, N+1 binds", math.ceil(peak10 / MU) + 1 == n10 > math.ceil(peak10 / (0.8 * MU)))
    claim("- Hybrid with k = 2: two base replicas at up to μ each carry 2 x 20.098 = 40.195 requests/s, above the "
          "23.148 peak, so nothing overflows: $2,922.00, the base replicas at 11.574 / (2 x 20.098) = 28.8%.",
          ("k", hyb10.replicas, n0), ("mu", MU, fixed(3)), ("carry", 2 * MU, fixed(3)), ("peak", peak10, fixed(3)),
          ("total", 2 * REPLICA_MONTH, usd(2)), ("total lib", hyb10.usd_per_month, usd(2)),
          ("lam", lam10, fixed(3)),
          ("util", lam10 / (2 * MU), pct(1)), ("util lib", hyb10.utilization or 0, pct(1)))
    fact("two base replicas carry the 10x peak", peak10 < 2 * MU and hyb10.breakdown.api_usd_per_month == 0)
    profile = np.asarray(DECISION_10X.hourly_profile)
    rates = lam10 * profile
    excess = np.maximum(rates - MU, 0.0)
    overflow_usd = float(excess.sum()) * 3600 * D * API_PER_REQUEST  # one replica serves min(λ_h, μ)
    one = plan_hybrid(mean_requests_per_second=lam10, hourly_profile=list(profile), capacity_requests_per_second=MU,
                      replica_usd_per_month=REPLICA_MONTH, ops_usd_per_month=0.0, api_usd_per_request=API_PER_REQUEST,
                      max_base_replicas=n10, min_base_replicas=1)
    claim("The API is their spare. (k = 1 is below the floor; with `min_replicas: 1` on h100-8b it would cost $1,461.00 "
          "+ $115.16 of overflow, 3.15% of requests, = $1,576.16, one replica with no spare.)",
          ("k", one.base_replicas, n0), ("R", REPLICA_MONTH, usd(2)), ("overflow", overflow_usd, usd(2)),
          ("overflow lib", one.api_usd_per_month, usd(2)), ("share", excess.sum() / rates.sum(), pct(2)),
          ("share lib", one.overflow_fraction, pct(2)), ("total", REPLICA_MONTH + overflow_usd, usd(2)),
          ("total lib", one.usd_per_month, usd(2)), ("floor", 1, n0))
    fact("at ten times the volume the hybrid is recommended", DECISION_10X.recommendation == "h100-base-plus-cerebras")
    claim(f'- The hybrid is recommended: "{DECISION_10X.reasons[1]}"')
    claim("It costs 20% less than the next option that meets or likely meets the SLO, cerebras-8b ($3,652/month).",
          ("saving", 1 - 2 * REPLICA_MONTH / (API_PER_REQUEST * q10), pct(0)))
    claim("at 100,000 requests/day the API costs 12.5% of the two mostly idle H100s a redundant fleet needs. "
          "Self-hosting breaks even at 8.00x the volume;", ("share", API.usd_per_month / SELF.usd_per_month, pct(1)),
          ("times", V_STAR / V, times(2)), ("rpd", REQUESTS_PER_DAY, n0))


def _gpu_rows() -> list[dict[str, str]]:
    with (ROOT / "pricing_data" / "gpu_prices.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def build_sources() -> None:
    rows = API_SHEET.rows
    primary = [r for r in rows if r.source == "litellm"]
    genai = [r for r in rows if r.source == "genai-prices"]
    crossed = [r for r in rows if r.crosscheck_source]
    page = [r for r in rows if r.source == "provider-page"]
    checked = {day: sum(1 for r in rows if r.checked == day) for day in sorted({r.checked for r in rows})}
    claim("78 rows, 15 providers, checked 2026-11-29 (50 rows), 2026-12-01 (23 rows fixed or added) and 2026-12-02 "
          "(5 DeepInfra rows",
          ("rows", len(rows), n0), ("providers", len({r.provider for r in rows}), n0),
          ("checked", API_SHEET.checked_oldest.isoformat(), text), *((d.isoformat(), d.isoformat(), text) for d in checked),
          *((f"n {d}", n, n0) for d, n in checked.items()))
    fact("three check dates", len(checked) == 3)
    fact("the 2026-12-02 rows are DeepInfra rows cross-checked or compared against the Lava table",
         all(r.provider == "deepinfra" and "lava" in ((r.crosscheck_source or "") + (r.notes or "")).lower()
             for r in rows if r.checked == dt.date(2026, 12, 2)))
    litellm_versions = {r.source_version.split()[0] for r in primary}
    genai_versions = {r.source_version for r in genai} | {
        (r.crosscheck_source or "").split()[0] for r in crossed if (r.crosscheck_source or "").startswith("genai")}
    claim("64 rows come from LiteLLM 1.110.2 (`litellm/model_prices_and_context_window_backup.json`, shipped in the "
          "wheel), 3 from genai-prices 0.2.3 (`genai_prices/data.py`), 3 from the provider's own pricing page "
          "and 8 (Llama 4,",
          ("litellm rows", len(primary), n0), ("litellm", next(iter(litellm_versions)).split("==")[1], text),
          ("genai rows", len(genai), n0), ("genai", next(v for v in genai_versions if v.startswith("genai")).split("==")[1], text),
          ("page rows", len(page), n0), ("manual rows", sum(1 for r in rows if r.source == "manual"), n0))
    fact("the manual rows are Lava gateway tables", all("lava" in (r.source_url or "") for r in rows
                                                          if r.source == "manual"))
    fact("one LiteLLM version, one genai-prices version", len(litellm_versions) == 1 and len(genai_versions) == 1)
    claim("43 rows are cross-checked against a second source and 9 of them disagree",
          ("crossed", len(crossed), n0), ("disagree", sum(1 for r in rows if r.disagreement), n0))
    from costmodel.pricing.latency import load_api_latency
    from costmodel.pricing.litellm import DISAGREEMENT_TOLERANCE, disagreement_text
    claim("differ by more than 5% of the larger value", ("tolerance", DISAGREEMENT_TOLERANCE * 100, n0))
    claim("smaller differences (0.27 vs 0.28) are rounding", ("a", 0.27, fixed(2)), ("b", 0.28, fixed(2)))
    fact("0.27 vs 0.28 is not a disagreement", disagreement_text(
        {"input_usd_per_mtok": 0.28}, {"input_usd_per_mtok": 0.27}, names=("a", "b")) is None)
    fireworks = API_SHEET.get("fireworks/llama-3.1-8b")
    claim("at fireworks.ai/pricing's $0.20, where LiteLLM had $0.10",
          ("page", fireworks.input_usd_per_mtok, fixed(2)), ("litellm", 0.10, fixed(2)))
    fact("fireworks/llama-3.1-8b: the provider page, flagged against LiteLLM's 0.1",
         fireworks.source == "provider-page" and "litellm 0.1" in (fireworks.disagreement or ""))
    together = API_SHEET.get("together/llama-3.3-70b")
    claim("(`together/llama-3.3-70b`: $0.88, not LiteLLM's $1.04",
          ("genai", together.input_usd_per_mtok, fixed(2)), ("litellm", together.crosscheck_input_usd_per_mtok or 0, fixed(2)))
    deepseek = API_SHEET.get("deepseek/deepseek-v3")
    claim("replaced by V3.1 on 2025-08-21", ("retired", (deepseek.deprecation_date or dt.date.min).isoformat(), text))
    block = GPU_SHEET.get("aws/h100-sxm/capacity-block")
    claim("(AWS capacity-block prices dated 2025-01-01 are 699 days old on 2026-12-01, not 2)",
          ("dated", (block.price_as_of or dt.date.min).isoformat(), text),
          ("age", (dt.date(2026, 12, 1) - block.price_date).days, n0),
          ("import age", (dt.date(2026, 12, 1) - block.checked).days, n0))
    latency = load_api_latency()
    claim("65 rows from 27 pages", ("rows", len(latency.rows), n0),
          ("pages", len({r.source_url for r in latency.rows}), n0))
    from costmodel.pricing.dispersion import load_latency_dispersion
    dispersion = load_latency_dispersion()
    claim("32 rows from 4 sources", ("rows", len(dispersion.rows), n0),
          ("sources", len({r.source for r in dispersion.rows}), n0))
    gpu = _gpu_rows()
    offerings = {k: sum(1 for r in gpu if r["offering"] == k) for k in ("on-demand", "reserved", "spot", "owned")}
    checked = {day: sum(1 for r in gpu if r["checked"] == day) for day in ("2026-11-29", "2026-12-01")}
    claim("65 rows over 10 accelerators (29 on-demand, 12 reserved, 15 spot, 9 owned), checked 2026-11-29 (53 rows) "
          "and 2026-12-01 (12 rows added: smaller instances and public reserved quotes):",
          ("rows", len(gpu), n0), ("accelerators", len({r["accelerator_id"] for r in gpu}), n0),
          *((k, v, n0) for k, v in offerings.items()), ("checked", GPU_SHEET.checked_oldest.isoformat(), text),
          *((day, count, n0) for day, count in checked.items()))
    fact("every GPU row checked on one of the two days", sum(checked.values()) == len(gpu))
    groups = {
        "skypilot": [r for r in gpu if "skypilot-catalog" in r["source"]],
        "deploybase": [r for r in gpu if "deploybase.ai/articles/runpod-gpu-pricing" in r["source"]],
        "deploybase-reserved": [r for r in gpu if "deploybase.ai/articles/gpu-reserved" in r["source"]],
        "gridstack": [r for r in gpu if "gridstackhub.ai" in r["source"]],
        "semianalysis": [r for r in gpu if "InferenceX" in r["source"]],
        "aws": [r for r in gpu if "Capacity Blocks" in r["source"]],
        "aiinframap": [r for r in gpu if "aiinframap.com" in r["source"]],
        "cliff": [r for r in gpu if "cliffcenter.com" in r["source"]],
        "modal": [r for r in gpu if "modal.com" in r["source"]],
    }
    grouped = {id(r) for rs in groups.values() for r in rs}
    others = [r for r in gpu if id(r) not in grouped]
    sky_commits = {re.search(r"catalogs/v8/(\w+)/", r["source"]).group(1): r["source_version"].split()[1][:7]  # type: ignore[union-attr]
                   for r in groups["skypilot"]}
    claim("| SkyPilot catalog `catalogs/v8/{aws,lambda,nebius,runpod}/vms.csv` | 31 | commits 00148f2 (aws), 0f40703 "
          "(lambda), 0082b04 (nebius), 01acdfd (runpod) |",
          ("rows", len(groups["skypilot"]), n0), *((c, sky_commits[c], text) for c in ("aws", "lambda", "nebius", "runpod")))
    fact("SkyPilot rows cover exactly aws, lambda, nebius, runpod", set(sky_commits) == {"aws", "lambda", "nebius", "runpod"})

    def one(rs: list[dict[str, str]], field: str) -> str:
        values = {r[field] for r in rs}
        assert len(values) == 1, values
        return values.pop()

    claim("| Deploybase, GPU reserved vs spot vs on-demand guide (Lambda, RunPod reserved H100) | 2 | undated page, "
          "read 2026-12-01 |", ("rows", len(groups["deploybase-reserved"]), n0),
          ("checked", one(groups["deploybase-reserved"], "checked"), text))
    claim("| gridstackhub.ai, reserved vs spot vs on-demand (CoreWeave 1-year reserved H100) | 1 | 2026 |",
          ("rows", len(groups["gridstack"]), n0))
    lambda_reserved = GPU_SHEET.get("lambda/h100-sxm/reserved").all_in_usd_per_gpu_hour()
    runpod_reserved = GPU_SHEET.get("runpod/h100-sxm/reserved").all_in_usd_per_gpu_hour()
    analyst = GPU_SHEET.get("semianalysis/h100-sxm/reserved").all_in_usd_per_gpu_hour()
    claim("the H100's $1.30 is\n25-33% below the public reserved quotes ($1.74 Lambda and $1.94 RunPod: 1.30 / 1.74 = "
          "0.75, 1.30 / 1.94 =\n0.67)", ("analyst", analyst, fixed(2)), ("lambda", lambda_reserved, fixed(2)),
          ("runpod", runpod_reserved, fixed(2)), ("low", round(100 * (1 - analyst / lambda_reserved)), n0),
          ("high", round(100 * (1 - analyst / runpod_reserved)), n0), ("r1", analyst / lambda_reserved, fixed(2)),
          ("r2", analyst / runpod_reserved, fixed(2)))
    claim('| Deploybase, "RunPod GPU Pricing: 2026" | 8 | 2026-03-10 |',
          ("rows", len(groups["deploybase"]), n0), ("price_as_of", one(groups["deploybase"], "price_as_of"), text))
    claim("| SemiAnalysis InferenceX `constants.ts` (3-year reserved estimates) | 4 | commit 77ca49a, 2026-04-03 |",
          ("rows", len(groups["semianalysis"]), n0), ("commit", one(groups["semianalysis"], "source_version").split()[1][:7], text),
          ("price_as_of", one(groups["semianalysis"], "price_as_of"), text))
    fact("SemiAnalysis rows are 3-year reserved", all(r["offering"] == "reserved" and r["commitment"].startswith("3 years")
                                                    for r in groups["semianalysis"]))
    claim("| AWS EC2 Capacity Blocks pricing page | 3 | prices updated 2025-01-01 |",
          ("rows", len(groups["aws"]), n0), ("version", one(groups["aws"], "source_version"), text))
    claim("| aiinframap.com H100/H200/B200 TCO (owned capex) | 3 | mid-2026 estimates |",
          ("rows", len(groups["aiinframap"]), n0))
    fact("aiinframap rows are owned mid-2026 estimates", all(r["offering"] == "owned" and r["source_version"].startswith("mid-2026")
                                                             for r in groups["aiinframap"]))
    claim("| Cliff Center, AMD inference economics (MI300X) | 3 | 2026-05-18 |",
          ("rows", len(groups["cliff"]), n0), ("price_as_of", one(groups["cliff"], "price_as_of"), text))
    claim("| Modal blog, AWS G6e (L40S) reserved prices | 2 | 2025-08-12 |",
          ("rows", len(groups["modal"]), n0), ("price_as_of", one(groups["modal"], "price_as_of"), text))
    dates = sorted(r["price_as_of"] for r in others if r["price_as_of"])
    claim("| other pages: Epoch AI, aitooldiscovery, runlocalai (2 rows), gpumarkets, awesomeagents, usagepricing, "
          "Tom's Guide | 8 | 2022-10-12 to 2026-06-01 |",
          ("rows", len(others), n0), ("runlocalai", sum("runlocalai" in r["source"] for r in others), n0),
          ("first", dates[0], text), ("last", dates[-1], text))
    claim("The whole download (connect, headers and body) stops after 20 s (`--timeout`, at most 600 s) or 8 MiB;",
          ("timeout", refresh_module.DEFAULT_TIMEOUT_SECONDS, fixed(0, suffix=" s")),
          ("max timeout", refresh_module.MAX_TIMEOUT_SECONDS, fixed(0, suffix=" s")),
          ("cap", refresh_module.MAX_DOWNLOAD_BYTES / 2**20, fixed(0, suffix=" MiB")))
    claim("not a finite number >= 0 or is above 10,000 USD per million tokens (400x the dearest rate in the bundled",
          ("price ceiling", MAX_API_USD_PER_MTOK, fixed(0)),
          ("ceiling over the dearest bundled rate", MAX_API_USD_PER_MTOK / max(
              r.output_usd_per_mtok for r in load_api_prices().rows), fixed(0, suffix="x")))
    claim("a download that would remove more than 10% of the sheet's rows (without `--allow-removals`)",
          ("removed share", refresh_module.MAX_REMOVED_SHARE, pct(0)))
    fact("refresh refuses to remove more than MAX_REMOVED_SHARE of the rows unless removals are allowed",
         "len(removed) <= MAX_REMOVED_SHARE * rows_before" in inspect.getsource(refresh_module))
    fact("refresh downloads LiteLLM's model_prices_and_context_window.json from GitHub",
         refresh_module.LITELLM_RAW_URL.startswith("https://raw.githubusercontent.com/")
         and refresh_module.LITELLM_RAW_URL.endswith("/model_prices_and_context_window.json"))


for _build in (build_intro, build_time, build_api_request, build_api_month, build_self_host, build_break_even,
               build_profile, build_hybrid_formulas, build_ranking, build_horizon, build_worked_example, build_sources):
    _build()


# ---- tests --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def doc() -> str:
    return squash(DOC_TEXT)


@pytest.mark.parametrize("item", CLAIMS, ids=[f"{c.what}:{c.snippet[:40]}" for c in CLAIMS])
def test_claim_matches_the_library(item: Claim) -> None:
    shown = item.fmt(item.value)
    assert shown in squash(item.snippet), f"{item.what}: computed {shown!r}, the page says {item.snippet!r}"


@pytest.mark.parametrize(("statement", "holds"), FACTS, ids=[s for s, _ in FACTS])
def test_fact_holds_in_the_library(statement: str, holds: bool) -> None:
    assert holds, statement


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s[:50] for s in SNIPPETS])
def test_snippet_is_on_the_page(doc: str, snippet: str) -> None:
    assert squash(snippet) in doc, f"docs/economics.md no longer contains {snippet!r}"


# A number preceded by a letter, '.', '-', '_' or '/' is part of a name (llama-3.1-8b, H100, p90, 1e6).
NUMBER = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
NOT_FIGURES = ("Llama 3.1 8B",)  # the model's name, not a figure


def numbers(fragment: str) -> list[str]:
    for name in NOT_FIGURES:
        fragment = fragment.replace(name, " ")
    return [m.group(0).rstrip(",") for m in NUMBER.finditer(fragment)]


def test_every_number_on_the_page_is_claimed(doc: str) -> None:
    covered = {n for s in SNIPPETS for n in numbers(squash(s))}
    stray = sorted({n for n in numbers(doc) if n not in covered}, key=lambda n: (len(n), n))
    assert not stray, f"numbers on docs/economics.md without a snippet in this test: {stray}"


def test_worked_example_capacity_is_the_decisions() -> None:
    """The page's μ is whatever decide() uses: the self-host and hybrid options agree on it."""
    assert HYBRID.capacity_requests_per_second == SELF.capacity_requests_per_second
    assert SELF.tokens_per_second_per_replica == pytest.approx(MU * (PROMPT + OUTPUT))


def test_compare_cli_prints_the_worked_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "worked-example.yaml"
    path.write_text(YAML_BLOCK, encoding="utf-8")
    assert main(["compare", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    options = {o["name"]: o for o in out["options"]}
    assert out["recommendation"] == "cerebras-8b"
    assert options["cerebras-8b"]["usd_per_month"] == pytest.approx(API_MONTH)
    assert options["h100-8b"]["usd_per_month"] == pytest.approx(SELF_MONTH)
    assert options["h100-8b"]["break_even_tokens_per_month"] == pytest.approx(V_STAR)
    assert options["h100-8b"]["break_even_utilization"] == pytest.approx(U_STAR)
    assert out["tokens_per_month"] == pytest.approx(V)
