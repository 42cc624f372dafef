"""A hand-built Decision for examples/chat-assistant.yaml (memo tests that must not depend on decide()).

Numbers, written out (month = 730.5 h = 2,629,800 s; 200,000 requests/day x 30.4375 days = 6,087,500/month):
- mean 2.31481 req/s; hourly weights sum 156, max 12 -> peak/mean = 12 x 24 / 156 = 1.84615, peak 4.27350 req/s.
- prompt 1500 (40% cached), output 350 tokens: 1850 tokens/request, 1.126e10 tokens/month.
- gpt-4.1-mini (openai/gpt-4.1-mini: in 0.40, cached 0.10, out 1.60 $/M): (900 x 0.4 + 600 x 0.1 + 350 x 1.6) / 1e6
  = $0.000980/request -> $5,965.75/month.
- llama-3.3-70b on deepinfra (in 0.23, out 0.40, no cache price): (1500 x 0.23 + 350 x 0.4) / 1e6 = $0.000485.
- claude-haiku-4.5 (in 1.00, cached 0.10, out 5.00): (900 + 60 + 1750) / 1e6 = $0.002710/request.
- llama-3.3-70b, 4 x H100 at $3.99/GPU-h: roofline capacity 6.2557 req/s per replica (costmodel.serving.analytic at
  these shapes, datasheet efficiencies), prefill 43.4% of GPU time -> 1 replica, + $8,000 ops.
- llama-3.1-8b fp8 on 1 x L40S at $1.5484/GPU-h: 7.3646 req/s, prefill 24.8% -> 1 replica, + $4,000 ops.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.decision.economics import plan_hybrid, size_self_host
from costmodel.decision.fleet_policy import FleetPolicy
from costmodel.decision.instances import InstancePacking
from costmodel.decision.plan import OptionPlan
from costmodel.decision.results import CostBreakdown, Decision, OptionResult, PriceSource
from costmodel.scenario import Scenario, load_scenario
from costmodel.units import SECONDS_PER_MONTH

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "examples" / "chat-assistant.yaml"
CHECKED = "2026-11-29"


def _api(name: str, price_id: str, *, prompt_usd: float, output_usd: float, requests: float, tokens: float,
         prompt_tokens: float, output_tokens: float) -> OptionResult:
    per_request = prompt_usd + output_usd
    monthly = per_request * requests
    return OptionResult(
        name=name, kind="api", usd_per_month=monthly, usd_per_mtok=monthly / tokens * 1e6,
        usd_per_mtok_input=prompt_usd / prompt_tokens * 1e6, usd_per_mtok_output=output_usd / output_tokens * 1e6,
        meets_slo=True, slo_reason="no latency given for this API; assumed to meet the SLO (measure it)",
        ttft_p90_seconds=None, tpot_p90_seconds=None, gpus=0, replicas=0, utilization=None,
        break_even_utilization=None, break_even_tokens_per_month=None, break_even_against=None, throttled=False,
        capacity_requests_per_second=None, tokens_per_second_per_replica=None,
        breakdown=CostBreakdown(api_usd_per_month=monthly),
        price_sources=(PriceSource(f"API price {price_id}", "litellm==1.110.2", CHECKED, 0),),
        api_usd_per_request=per_request,
    )


def _self_host(name: str, *, model: str, hardware: str, gpus: int, usd_per_gpu_hour: float, ops: float,
               capacity: float, prefill_fraction: float, ttft: float, tpot: float, mean_rps: float, peak_rps: float,
               tokens_per_request: float, prompt_tokens: float, output_tokens: float, offering: str,
               reference_usd_per_mtok: float, reference: str) -> OptionResult:
    sized = size_self_host(
        mean_requests_per_second=mean_rps, peak_requests_per_second=peak_rps, capacity_requests_per_second=capacity,
        tokens_per_request=tokens_per_request, gpus_per_replica=gpus, usd_per_gpu_hour=usd_per_gpu_hour,
        ops_usd_per_month=ops,
    )
    requests = mean_rps * SECONDS_PER_MONTH
    break_even_u = usd_per_gpu_hour * gpus * 1e6 / (3600 * sized.tokens_per_second_per_replica * reference_usd_per_mtok)
    return OptionResult(
        name=name, kind="self-host", usd_per_month=sized.usd_per_month, usd_per_mtok=sized.usd_per_mtok,
        usd_per_mtok_input=sized.usd_per_month * prefill_fraction / (requests * prompt_tokens) * 1e6,
        usd_per_mtok_output=sized.usd_per_month * (1 - prefill_fraction) / (requests * output_tokens) * 1e6,
        meets_slo=True, slo_reason=f"p90 TTFT {ttft:.2f} s <= 1.00 s, p90 TPOT {tpot * 1e3:.1f} ms <= 50.0 ms",
        ttft_p90_seconds=ttft, tpot_p90_seconds=tpot, gpus=sized.gpus, replicas=sized.replicas,
        utilization=sized.utilization, break_even_utilization=break_even_u,
        break_even_tokens_per_month=(sized.gpu_usd_per_month + ops) * 1e6 / reference_usd_per_mtok,
        break_even_against=reference, throttled=False, capacity_requests_per_second=capacity,
        tokens_per_second_per_replica=sized.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=sized.gpu_usd_per_month, ops_usd_per_month=ops),
        price_sources=(PriceSource(f"GPU offering {offering}", "skypilot-org/skypilot-catalog", CHECKED, 0),),
        model_id=model, hardware_id=hardware, gpus_per_replica=gpus, usd_per_gpu_hour=usd_per_gpu_hour,
        efficiency_source=f"datasheet defaults for {hardware}",
        # The plan the figures above assume (the volume sweep re-costs it): sized at 100% of capacity, >= 1
        # replica, no spare, GPUs sold singly, fixed ops only.
        plan=OptionPlan(name=name, gpus_per_replica=gpus, usd_per_gpu_hour=usd_per_gpu_hour, host_usd_per_gpu_hour=0.0,
                        packing=InstancePacking(gpus_per_replica=gpus),
                        fleet=FleetPolicy(target_peak_utilization=1.0, min_replicas=1, reason="hand-built"),
                        ops_usd_per_month=ops, ops_usd_per_gpu_month=0.0),
    )


def sample_decision(scenario: Scenario | None = None) -> tuple[Scenario, Decision]:
    """chat-assistant evaluated by hand (see module docstring); option names are taken from `scenario`."""
    scenario = scenario or load_scenario(CHAT)
    names = [o.name for o in scenario.options]
    workload = scenario.workload
    requests = workload.requests_per_month()
    mean_rps = workload.mean_requests_per_second()
    peak_rps = workload.peak_requests_per_second()
    prompt, output = workload.mean_prompt_tokens(), workload.mean_output_tokens()
    tokens = requests * (prompt + output)
    common = {"requests": requests, "tokens": tokens, "prompt_tokens": prompt, "output_tokens": output}
    mini = _api(names[0], "openai/gpt-4.1-mini", prompt_usd=(900 * 0.4 + 600 * 0.1) / 1e6, output_usd=350 * 1.6 / 1e6,
                **common)
    deepinfra = _api(names[1], "deepinfra/llama-3.3-70b", prompt_usd=1500 * 0.23 / 1e6, output_usd=350 * 0.4 / 1e6,
                     **common)
    haiku = _api(names[2], "anthropic/claude-haiku-4-5", prompt_usd=(900 * 1.0 + 600 * 0.1) / 1e6,
                 output_usd=350 * 5.0 / 1e6, **common)
    shared = {"mean_rps": mean_rps, "peak_rps": peak_rps, "tokens_per_request": prompt + output,
              "prompt_tokens": prompt, "output_tokens": output,
              "reference_usd_per_mtok": deepinfra.usd_per_mtok, "reference": deepinfra.name}
    big = _self_host(names[3], model="llama-3.3-70b", hardware="h100-sxm", gpus=4, usd_per_gpu_hour=3.99, ops=8000,
                     capacity=6.2557, prefill_fraction=0.434, ttft=0.21, tpot=0.046,
                     offering="lambda/h100-sxm/on-demand", **shared)
    small = _self_host(names[4], model="llama-3.1-8b", hardware="l40s", gpus=1, usd_per_gpu_hour=1.5484, ops=4000,
                       capacity=7.3646, prefill_fraction=0.248, ttft=0.09, tpot=0.048,
                       offering="nebius/l40s/on-demand", **shared)
    plan = plan_hybrid(
        mean_requests_per_second=mean_rps, hourly_profile=workload.hourly_traffic_weights or [1.0] * 24,
        capacity_requests_per_second=6.2557, replica_usd_per_month=big.breakdown.gpu_usd_per_month,
        ops_usd_per_month=8000, api_usd_per_request=deepinfra.api_usd_per_request or 0.0, max_base_replicas=1,
    )
    hybrid = OptionResult(
        name=names[5], kind="hybrid", usd_per_month=plan.usd_per_month, usd_per_mtok=plan.usd_per_month / tokens * 1e6,
        usd_per_mtok_input=deepinfra.usd_per_mtok_input, usd_per_mtok_output=deepinfra.usd_per_mtok_output,
        meets_slo=True, slo_reason="base replicas meet the SLO; overflow latency is the API's",
        ttft_p90_seconds=None, tpot_p90_seconds=None, gpus=plan.base_replicas * 4, replicas=plan.base_replicas,
        utilization=plan.utilization, break_even_utilization=None, break_even_tokens_per_month=None,
        break_even_against=None, throttled=False, capacity_requests_per_second=6.2557,
        tokens_per_second_per_replica=big.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=plan.self_host_usd_per_month, api_usd_per_month=plan.api_usd_per_month),
        price_sources=big.price_sources + deepinfra.price_sources,
    )
    options = sorted([mini, deepinfra, haiku, big, small, hybrid], key=lambda o: (not o.meets_slo, o.usd_per_month))
    best, runner_up = options[0], options[1]
    decision = Decision(
        scenario_name=scenario.name, options=tuple(options), recommendation=best.name,
        recommendation_meets_slo=best.meets_slo,
        reasons=(f"{best.name} is the cheapest option that meets the SLO at ${best.usd_per_month:,.0f}/month; "
                 f"the runner-up {runner_up.name} costs ${runner_up.usd_per_month:,.0f}/month.",),
        warnings=("API latency is not measured for the API options; run costmodel probe-endpoint.",),
        requests_per_month=requests, tokens_per_month=tokens, mean_prompt_tokens=prompt, mean_output_tokens=output,
        mean_requests_per_second=mean_rps, peak_requests_per_second=peak_rps,
        hourly_profile=workload.hourly_load_factors() or (1.0,) * 24,
        efficiency_source="datasheet defaults",
    )
    return scenario, decision


def test_sample_api_cost_is_the_written_out_arithmetic():
    _, decision = sample_decision()
    # 6,087,500 requests x $0.000980 (module docstring).
    assert decision.option("gpt-4.1-mini").usd_per_month == pytest.approx(6_087_500 * 0.000980)
    assert decision.recommendation == "llama-3.3-70b-deepinfra"
    # 4 H100 x $3.99 x 730.5 h + $8,000 ops.
    assert decision.option("llama-3.3-70b-h100-tp4").usd_per_month == pytest.approx(4 * 3.99 * 730.5 + 8000)
