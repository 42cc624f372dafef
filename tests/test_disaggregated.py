"""Disaggregated prefill/decode: KV transfer arithmetic, pools composed from the engine, xPyD ratio, the CLI.

Golden values: KV bytes per token and link rates written out from the catalog rows (Llama 3.1 70B: 80 layers,
8 KV heads, head dim 128; H100 SXM: NCCL's achieved 370 GB/s NVLink, one 400 Gb/s NIC per GPU).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import numpy as np
import pytest

from costmodel.cli import main
from costmodel.cli.mode_args import refuse_modes_with_measured
from costmodel.errors import CostmodelError
from costmodel.scenario.distributions import FixedTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.capacity import CapacitySearch
from costmodel.serving.disaggregated import (
    DisaggregatedLayout,
    decode_pool_replica,
    disaggregated_times,
    kv_link,
    simulate_disaggregated,
)
from costmodel.serving.disaggregated_capacity import best_ratio


@pytest.fixture(scope="module")
def tp4():  # type: ignore[no-untyped-def]
    return build_replica("llama-3.1-70b", "h100-sxm", gpus=4, weight_dtype="fp8", kv_dtype="fp8")


def _layout(replica, x: int = 1, y: int = 1, link: str = "auto") -> DisaggregatedLayout:  # type: ignore[no-untyped-def]
    return DisaggregatedLayout(prefill=replica, decode=replica, prefill_instances=x, decode_instances=y,
                               link=kv_link(replica, replica, choice=link))


def test_kv_transfer_seconds_over_each_link(tp4) -> None:  # type: ignore[no-untyped-def]
    kv_bytes = 2048 * 2 * 80 * 8 * 128 * 1  # fp8: 1 B per element -> 335,544,320 B for a 2,048-token prompt
    inside = _layout(tp4).transfer_seconds(np.array([2048]))[0]
    assert inside == pytest.approx(kv_bytes / (4 * 370e9) + 20e-6)  # 4 GPUs' NVLink in parallel + NVLink latency
    across = _layout(tp4, link="inter-node").transfer_seconds(np.array([2048]))[0]
    assert across == pytest.approx(kv_bytes / (4 * 50e9) + 47.6e-6)  # 4 NICs of 400 Gb/s + the 2-node NCCL latency


def test_decode_pool_charges_each_request_its_prompt(tp4) -> None:  # type: ignore[no-untyped-def]
    pool = decode_pool_replica(tp4, np.full(10, 2048))
    # A request's charge on the decode side: its 2,047 cached prompt tokens + 1 computed + its output tokens.
    assert pool.kv_bytes_for(tokens=1 + 255) == pytest.approx(tp4.kv_bytes_for(tokens=2048 + 255))
    assert pool.request_overhead_seconds == 0.0 and pool.mixed_prefill_decode


def test_one_request_alone_matches_the_aggregated_replica(tp4) -> None:  # type: ignore[no-untyped-def]
    layout = _layout(tp4)
    prompts, outputs = np.array([2048]), np.array([257])
    alone = simulate_disaggregated(layout, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=outputs)
    agg = simulate_requests(tp4, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=outputs)
    transfer = layout.transfer_seconds(prompts)[0]
    # TTFT: the same prefill step, then the transfer; TPOT: the same decode steps (the decode side's first
    # step is one computed token at context 2,047 instead of a decode token at 2,048).
    assert alone.ttft.p50_seconds == pytest.approx(agg.ttft.p50_seconds + transfer, rel=1e-9)
    assert alone.tpot.p50_seconds == pytest.approx(agg.tpot.p50_seconds, rel=2e-3)
    assert alone.ttft_owner == "prefill" and alone.tpot_owner == "decode"


def test_first_token_from_the_decode_side_waits_for_its_slot_and_step(tp4) -> None:  # type: ignore[no-untyped-def]
    layout = _layout(tp4)
    prompts, outputs = np.array([2048]), np.array([257])
    landed = simulate_disaggregated(layout, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=outputs)
    decode = simulate_disaggregated(layout, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=outputs,
                                    first_token="decode")
    # vLLM's proxy flow: the decode side computes the last prompt token and streams all 257 tokens, so a lone
    # request's first token is one decode step after its KV lands and its last token one step later than when
    # the prefill's token is the first: 257 decode-side steps instead of 256, the same step length.
    step = decode.tpot.p50_seconds
    assert decode.ttft.p50_seconds == pytest.approx(landed.ttft.p50_seconds + step, rel=2e-2)
    assert decode.e2e.p50_seconds == pytest.approx(landed.e2e.p50_seconds + step, rel=1e-3)
    # More requests than running slots: the third waits on the decode side for a slot, and that wait is TTFT.
    n = 3
    many = disaggregated_times(layout, arrival_seconds=np.zeros(n), prompt_tokens=np.full(n, 2048),
                               output_tokens=np.full(n, 257), max_num_seqs=2, first_token="decode")
    assert many.first_token_seconds[2] > many.finish_seconds[:2].min() > many.landed_seconds[2]


def test_a_decode_side_without_a_kv_connector_recomputes_the_prompt(tp4) -> None:  # type: ignore[no-untyped-def]
    layout = replace(_layout(tp4), decode_recomputes_prompt=True)
    prompts, outputs = np.array([2048]), np.array([257])
    assert not layout.transfer_seconds(prompts).any()  # nothing crosses the link
    times = disaggregated_times(layout, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=outputs)
    prefill = simulate_requests(tp4, arrival_seconds=np.zeros(1), prompt_tokens=prompts, output_tokens=np.ones(1))
    handed = float(prefill.trace.first_token_seconds[0])
    # The decode instance gets the request when the prefill finishes and serves it whole, as an aggregated
    # replica would from that moment: its first token after a second 2,048-token prefill, all 257 tokens its own.
    again = simulate_requests(tp4, arrival_seconds=np.array([handed]), prompt_tokens=prompts, output_tokens=outputs)
    assert times.landed_seconds[0] == pytest.approx(handed, rel=1e-12)
    assert times.first_token_seconds[0] == pytest.approx(float(again.trace.first_token_seconds[0]), rel=1e-9)
    assert times.finish_seconds[0] == pytest.approx(float(again.trace.finish_seconds[0]), rel=1e-9)
    assert times.first_token_seconds[0] - handed > 0.9 * handed  # the prompt is paid twice


def test_disaggregated_tpot_does_not_see_prefill_interference(tp4) -> None:  # type: ignore[no-untyped-def]
    n = 400
    gaps = np.random.default_rng(0).exponential(1 / 4.0, n)
    arrivals = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    prompts, outputs = np.full(n, 4096), np.full(n, 128)
    disagg = simulate_disaggregated(_layout(tp4), arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs)
    agg = simulate_requests(tp4, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs)
    # Aggregated decoders share steps with 4,096-token prompts; the decode pool never runs a prompt.
    assert disagg.tpot.p90_seconds < 0.8 * agg.tpot.p90_seconds


def test_ratio_search_follows_the_phase_that_binds(tp4) -> None:  # type: ignore[no-untyped-def]
    slo = (SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.03))
    long_prompts = CapacitySearch(prompt_tokens=FixedTokens(tokens=6000), output_tokens=FixedTokens(tokens=64), slo=slo,
                                  requests=300)
    long_outputs = CapacitySearch(prompt_tokens=FixedTokens(tokens=256), output_tokens=FixedTokens(tokens=1024), slo=slo,
                                  requests=300)
    prefill_heavy = best_ratio(_layout(tp4), long_prompts, max_instances=3)
    decode_heavy = best_ratio(_layout(tp4), long_outputs, max_instances=3)
    top_p, top_d = prefill_heavy.options[0], decode_heavy.options[0]
    assert top_p.prefill_instances > top_p.decode_instances
    assert top_d.decode_instances >= top_d.prefill_instances
    assert prefill_heavy.best is not None and prefill_heavy.best.feasible
    assert prefill_heavy.best.max_rate_requests_per_second > 0


def test_cli_disaggregated_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "1024",
            "--output-tokens", "128", "--rate", "4", "--requests", "200", "--mode", "disaggregated",
            "--prefill-instances", "2", "--slo-ttft-p90", "1", "--slo-tpot-p90", "0.05", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "disaggregated" and out["layout"] == "2P(1)1D(1)" and out["gpus"] == 3
    assert out["latency_owner"] == {"ttft": "prefill", "tpot": "decode"}
    for key in ("ttft_p90_seconds", "tpot_p90_seconds", "e2e_p90_seconds", "kv_transfer_p50_seconds"):
        assert out[key] > 0, key
    assert out["ttft_p50_seconds"] >= out["prefill_ttft_p50_seconds"] + out["kv_transfer_p50_seconds"] - 1e-9


def test_cli_mode_flags_misuse_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "1", "--requests", "10"]
    assert main([*base, "--prefill-instances", "2"]) == 2
    assert "--mode disaggregated" in capsys.readouterr().err
    assert main([*base, "--spec-acceptance", "0.8"]) == 2
    assert "--spec-method" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # argparse rejects the value itself
        main([*base, "--spec-method", "eagle", "--spec-acceptance", "1.5"])
    assert stop.value.code == 2 and "each in [0, 1]" in capsys.readouterr().err


def test_modes_refuse_a_measured_endpoint_model() -> None:
    refuse_modes_with_measured(argparse.Namespace(spec_method=None, mode="aggregated"))  # nothing to refuse
    for args in (argparse.Namespace(spec_method="mtp", mode="aggregated"),
                 argparse.Namespace(spec_method=None, mode="disaggregated")):
        with pytest.raises(CostmodelError, match="calibrate-endpoint"):
            refuse_modes_with_measured(args)
