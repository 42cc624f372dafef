"""Scheduler settings an engine user sets, the engines' KV memory rules, closed-loop load and streamed ITL.

Golden values are arithmetic written out here: the KV budget under vLLM's gpu_memory_utilization (a share of
all HBM) and TensorRT-LLM's free_gpu_memory_fraction (a share of what weights and workspace leave), closed-loop
send times from finish times, chunk gaps as sums of consecutive step gaps.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from costmodel.catalog import load_accelerator
from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.memory import reserve_bytes
from costmodel.scenario.distributions import FixedTokens
from costmodel.scenario.options import SelfHostOption
from costmodel.serving import build_replica, simulate
from costmodel.serving.closed_loop import closed_loop_send_seconds
from costmodel.serving.itl import chunk_gaps, itl_mean_seconds, stream_chunk_tokens
from costmodel.serving.profile import engine_settings, option_engine_settings

LENGTHS = {"prompt_tokens": FixedTokens(tokens=300), "output_tokens": FixedTokens(tokens=120)}
BASE = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "300", "--output-tokens", "120"]


def _budget(engine: str, **overrides: float) -> tuple[float, float, float]:
    """(KV budget, weights, workspace) bytes per GPU of llama-3.1-8b bf16 on one H100 under `engine`."""
    replica = build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings(engine, **overrides))  # type: ignore[arg-type]
    plan = replica.memory
    return replica.kv_budget_bytes_per_gpu, plan.weights_bytes_per_gpu, plan.activation_bytes_per_gpu


def test_vllm_budget_is_its_share_of_all_hbm_and_generic_is_unchanged() -> None:
    hbm = load_accelerator("h100-sxm").memory_bytes
    budget, weights, workspace = _budget("vllm")
    assert budget == pytest.approx(0.9 * hbm - weights - workspace, rel=1e-12)
    # The generic profile's budget is bit for bit the pre-rule one: HBM - weights - workspace - 0.10 HBM.
    generic = build_replica("llama-3.1-8b", "h100-sxm")
    assert generic.kv_budget_bytes_per_gpu == hbm - weights - workspace - 0.1 * hbm
    lower, _, _ = _budget("vllm", gpu_memory_utilization=0.8)
    assert budget - lower == pytest.approx(0.1 * hbm, rel=1e-9)


def test_trtllm_budget_is_its_share_of_what_the_weights_leave() -> None:
    hbm = load_accelerator("h100-sxm").memory_bytes
    budget, weights, workspace = _budget("trtllm")
    assert budget == pytest.approx(0.9 * (hbm - weights - workspace), rel=1e-12)
    half, _, _ = _budget("trtllm", gpu_memory_utilization=0.5)
    assert half == pytest.approx(0.5 * (hbm - weights - workspace), rel=1e-12)
    assert reserve_bytes(hbm_bytes_per_gpu=100.0, used_bytes_per_gpu=40.0, rule="free_fraction", fraction=0.9) == (
        pytest.approx(6.0))


def test_bad_scheduler_overrides_name_the_field() -> None:
    with pytest.raises(CostmodelError, match="scheduler_steps"):
        engine_settings("vllm", scheduler_steps=0)
    with pytest.raises(CostmodelError, match="gpu_memory_utilization"):
        engine_settings("vllm", gpu_memory_utilization=float("nan"))


def test_option_fields_reach_the_engine_settings() -> None:
    option = {"name": "h", "model": "llama-3.1-8b", "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0, "engine": "vllm"}
    plain = option_engine_settings(SelfHostOption.model_validate(option), longest_prompt_tokens=300)
    assert (plain.max_num_seqs, plain.max_batched_tokens, plain.scheduler_steps, plain.kv_memory_fraction) == (
        1024, 8192, 1, 0.9)
    tuned = option_engine_settings(SelfHostOption.model_validate(
        {**option, "max_num_seqs": 64, "max_batched_tokens": 4096, "scheduler_steps": 8,
         "gpu_memory_utilization": 0.7}), longest_prompt_tokens=300)
    assert (tuned.max_num_seqs, tuned.max_batched_tokens, tuned.scheduler_steps, tuned.kv_memory_fraction) == (
        64, 4096, 8, 0.7)
    for field, value in (("scheduler_steps", 0), ("gpu_memory_utilization", 1.5), ("max_num_seqs", 0)):
        with pytest.raises(ValidationError, match=field):
            SelfHostOption.model_validate({**option, field: value})


def test_closed_loop_send_times_by_hand() -> None:
    # 5 requests, 2 clients: requests 0 and 1 leave at 0; then each finish (sorted 1, 2, 3, ...) sends the next.
    finish = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    assert closed_loop_send_seconds(finish, concurrency=2).tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]
    assert closed_loop_send_seconds(finish, concurrency=9).tolist() == [0.0] * 5


def test_closed_loop_keeps_n_in_flight_and_reports_per_gpu_and_per_user() -> None:
    replica = build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings("vllm"))
    run = simulate(replica, rate_per_second=None, requests=400, concurrency=16, **LENGTHS)
    assert run.concurrency == 16 and run.rate_per_second is None and run.max_running == 16
    trace = run.trace
    assert np.all(trace.admitted_seconds >= trace.arrival_seconds)  # admitted once its client sent it
    assert run.output_tokens_per_second_per_gpu == run.output_tokens_per_second / 1
    assert run.output_tokens_per_second_per_user == pytest.approx(1.0 / run.tpot.mean_seconds)
    # More clients: more tokens/s per GPU, fewer per user (the throughput-interactivity trade).
    wide = simulate(replica, rate_per_second=None, requests=400, concurrency=64, **LENGTHS)
    assert wide.output_tokens_per_second_per_gpu > run.output_tokens_per_second_per_gpu
    assert wide.output_tokens_per_second_per_user < run.output_tokens_per_second_per_user


def test_stream_chunk_arithmetic() -> None:
    assert stream_chunk_tokens(scheduler_steps=10, streaming_tokens_per_chunk=1) == 10
    assert stream_chunk_tokens(scheduler_steps=1, streaming_tokens_per_chunk=4) == 4
    assert stream_chunk_tokens(scheduler_steps=4, streaming_tokens_per_chunk=6) == 8  # two 4-step windows
    seconds, weights = chunk_gaps(np.array([1.0, 2.0, 3.0, 4.0]), np.array([5, 6, 7, 8]), chunk_tokens=2)
    assert seconds.tolist() == [3.0, 5.0, 7.0] and weights.tolist() == [6, 7, 8]


def test_multi_step_streams_a_chunk_per_window() -> None:
    # With 10 scheduler steps the client sees one chunk per window: a gap of about 10 decode steps, while
    # TPOT (the whole output over its tokens) stays near one step.
    replica = build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings("vllm", scheduler_steps=10))
    run = simulate(replica, rate_per_second=2.0, requests=300, **LENGTHS)
    assert run.stream_chunk_tokens == 10
    assert 8.0 * run.tpot.p50_seconds < run.itl.p50_seconds < 12.0 * run.tpot.p50_seconds
    assert run.itl.mean_seconds == pytest.approx(10.0 * itl_mean_seconds(run.itl_groups))  # 10 token gaps a chunk


def test_cli_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *BASE, "--engine", "vllm", "--concurrency", "8", "--requests", "80", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["concurrency"] == 8 and out["rate_per_second"] is None and out["max_running"] == 8
    assert out["output_tokens_per_second_per_gpu"] > 0 and out["output_tokens_per_second_per_user"] > 0
    assert main(["simulate", *BASE, "--engine", "vllm", "--rate", "2", "--requests", "80", "--scheduler-steps", "4",
                 "--gpu-memory-utilization", "0.6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stream_chunk_tokens"] == 4
    for argv, message in (
        (["--rate", "1", "--concurrency", "4"], "exactly one"),
        (["--concurrency", "0"], "--concurrency must be an integer"),
        (["--rate", "1", "--scheduler-steps", "0"], "scheduler_steps (--scheduler-steps)"),
    ):
        assert main(["simulate", *BASE, *argv]) == 2, argv
        assert message in capsys.readouterr().err, argv
    with pytest.raises(SystemExit) as exc:  # argparse's range check
        main(["simulate", *BASE, "--rate", "1", "--gpu-memory-utilization", "0.01"])
    assert exc.value.code == 2 and "--gpu-memory-utilization" in capsys.readouterr().err
    assert main(["capacity", *BASE, "--slo-ttft-p90", "1", "--scheduler-steps", "4", "--requests", "200",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["feasible"] is True


def test_option_scheduler_fields_change_the_decisions_capacity() -> None:
    from costmodel.decision.rank import decide
    from costmodel.scenario import parse_scenario

    def scenario(**fields: object) -> dict:  # type: ignore[type-arg]
        return {
            "name": "t",
            "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 512},
                         "output_tokens": {"kind": "fixed", "tokens": 64}, "peak_to_mean_ratio": 2.0},
            "slo": {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.1},
            "fleet": {"min_replicas": 1},
            "options": [{"kind": "self-host", "name": "h", "model": "llama-3.1-8b", "hardware": "h100-sxm",
                         "usd_per_gpu_hour": 2.0, "engine": "vllm", **fields}],
        }

    free = decide(parse_scenario(scenario())).option("h")
    capped = decide(parse_scenario(scenario(max_num_seqs=2))).option("h")
    # Two running sequences at most: the replica serves far fewer requests per second within the SLO.
    assert capped.capacity_requests_per_second < 0.5 * free.capacity_requests_per_second
