"""Serving modes as scenario fields: validation, and the decision's capacity through the existing path."""

from __future__ import annotations

import copy

import pytest

from costmodel.charts.latency import option_latency
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.scenario import parse_scenario

BASE = {
    "name": "modes", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 2_000_000, "prompt_tokens": {"kind": "fixed", "tokens": 2000},
                 "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.03},
    "fleet": {"min_replicas": 1, "target_peak_utilization": 1.0},
    "options": [
        {"kind": "self-host", "name": "plain", "model": "llama-3.1-8b", "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0,
         "engine": "sglang"},
    ],
}


def _with(**fields):  # type: ignore[no-untyped-def]
    data = copy.deepcopy(BASE)
    data["options"].append({**data["options"][0], "name": "mode", **fields})
    return data


@pytest.mark.parametrize(("fields", "message"), [
    ({"speculation": {"method": "eagle", "acceptance_rates": [0.8, 1.2]}}, "acceptance_rates"),
    ({"speculation": {"method": "eagle", "draft_tokens": 3, "acceptance_rates": [0.8]}}, "draft_tokens"),
    ({"speculation": {"method": "draft-model"}}, "draft_model"),
    ({"gpus_per_replica": 3, "disaggregated": {"prefill_gpus": 1, "decode_gpus": 1}}, "gpus_per_replica must equal"),
    ({"disaggregated": {"prefill_gpus": 1, "decode_gpus": 1, "kv_link": "carrier-pigeon"}}, "kv_link"),
])
def test_bad_mode_fields_name_the_field(fields: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(CostmodelError, match=message):
        parse_scenario(_with(**fields))


def test_speculation_raises_the_capacity_the_decision_uses() -> None:
    decision = decide(parse_scenario(_with(speculation={"method": "eagle", "acceptance_rates": [0.8, 0.6, 0.4]})))
    plain, spec = decision.option("plain"), decision.option("mode")
    assert spec.meets_slo and plain.meets_slo
    assert spec.tokens_per_second_per_replica > 1.1 * plain.tokens_per_second_per_replica
    assert spec.usd_per_mtok < plain.usd_per_mtok


def test_disaggregated_option_is_one_deployment_with_pool_owners() -> None:
    data = _with(gpus_per_replica=3, disaggregated={"prefill_gpus": 1, "decode_gpus": 1, "prefill_instances": 2})
    decision = decide(parse_scenario(data))
    option = decision.option("mode")
    assert option.meets_slo and option.gpus % 3 == 0  # whole 2P1D deployments of 3 GPUs are paid for
    assert option.latency_owner is not None
    assert "TTFT: prefill pool (2 x 1 GPUs" in option.latency_owner and "TPOT: decode pool (1 x 1 GPUs" in option.latency_owner


def test_latency_page_data_runs_the_modes() -> None:
    scenario = parse_scenario(_with(gpus_per_replica=3, disaggregated={"prefill_gpus": 1, "decode_gpus": 1,
                                                                       "prefill_instances": 2}))
    disagg = option_latency(scenario.options[1], scenario.workload, scenario.slo, requests=200,  # type: ignore[arg-type]
                            load_fractions=(0.5, 0.9))
    assert disagg.gpus == 3 and disagg.feasible and disagg.load and not disagg.curve
    assert "prefill pool" in disagg.latency_owner
    spec = parse_scenario(_with(speculation={"method": "eagle", "acceptance_rates": [0.8, 0.6]}))
    plain_run = option_latency(spec.options[0], spec.workload, spec.slo, requests=200, load_fractions=(0.5,))  # type: ignore[arg-type]
    spec_run = option_latency(spec.options[1], spec.workload, spec.slo, requests=200, load_fractions=(0.5,))  # type: ignore[arg-type]
    assert spec_run.capacity_requests_per_second > plain_run.capacity_requests_per_second
