"""calibrate-endpoint: the step-time fit recovers a known model from a sweep the step simulator made,
held-out errors and capacity follow from the model, bad sweeps are refused (nothing written unless
--force), and the CLI end to end against the loopback fake run as a batching engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import running_fake_server

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.measurements.endpoint_calibration import calibrate, capacity, latency_at_capacity
from costmodel.measurements.endpoint_stepsim import StepModel, simulate
from costmodel.measurements.endpoint_sweep import EndpointSweep, SweepLevel, SweepRequest, SweepSettings

TRUE = StepModel(overhead_seconds=0.004, prefill_token_seconds=0.0, decode_sequence_seconds=0.002,
                 context_token_seconds=0.0, request_fixed_seconds=0.003, max_num_seqs=None)
CONTRACT = ["holdout_ttft_p50_abs_error", "holdout_tpot_p50_abs_error", "holdout_throughput_abs_error",
            "levels_fit", "levels_held_out", "capacity_requests_per_second", "capacity_p10", "capacity_p90",
            "binding_limit"]


def _level(model: StepModel, clients: int, *, requests: int = 24, output: int = 16, stretch: float = 1.0,
           failed: int = 0) -> SweepLevel:
    # staggered first sends keep the simulated clients out of lockstep, as real ones are
    load = simulate(model, prompt_tokens=[32] * requests, output_tokens=[output] * requests, clients=clients,
                    first_sends_seconds=[0.003 * k for k in range(clients)])
    rows = []
    for k in range(requests):
        sent = load.sent_seconds[k]
        first = sent + load.ttft_seconds[k]
        last = first + (load.done_seconds[k] - model.request_fixed_seconds - (first - model.request_fixed_seconds))
        if k >= requests // 2:  # `stretch` slows the second half (a server changing behaviour)
            last = first + (last - first) * stretch
        ok = k >= failed
        rows.append(SweepRequest(index=k, ok=ok, sent_seconds=sent, chunk_seconds=[first, last] if ok else [],
                                 prompt_tokens=32, output_tokens=output if ok else 0, output_tokens_source="usage",
                                 error_kind=None if ok else "http_500"))
    return SweepLevel(mode="concurrency", value=clients, wall_seconds=max(load.done_seconds), requests_ok=requests - failed,
                      requests_failed=failed, ttft_p50_seconds=None, ttft_p90_seconds=None, tpot_p50_seconds=None,
                      tpot_p90_seconds=None, output_tokens_per_second=load.output_tokens_per_second, requests=rows)


def _sweep(levels: list[SweepLevel]) -> EndpointSweep:
    settings = SweepSettings(base_url="http://127.0.0.1:1/v1", model="m", mode="concurrency",
                             levels_planned=[lv.value for lv in levels], requests_per_level=24, prompt_tokens=32,
                             max_tokens=16, timeout_seconds=5.0, api_key_env="OPENAI_API_KEY", arrival_seed=0)
    return EndpointSweep(settings=settings, started_at_utc="2026-12-01T00:00:00+00:00", complete=True,
                         api_key_sent=False, levels=levels)


def test_fit_recovers_the_step_model_that_made_the_sweep() -> None:
    sweep = _sweep([_level(TRUE, n) for n in (1, 2, 4, 8)])
    cal = calibrate(sweep, slo_ttft_p90_seconds=None, slo_tpot_p90_seconds=0.015, what_if={}, bootstrap_samples=4)
    assert cal.levels_fit == [1.0, 2.0, 4.0] and cal.levels_held_out == [8.0] and cal.problems == []
    assert cal.server_scheduling == "continuous_batching"  # 8 sequences decoded at once: it batches
    # TPOT = overhead + decode_sequence * batch = 4 ms + 2 ms * n: the per-sequence cost is recovered
    assert cal.decode_sequence_seconds == pytest.approx(0.002, rel=0.15)
    assert cal.overhead_seconds == pytest.approx(0.004, rel=0.25)
    # at the held-out 8 clients TPOT p50 = 4 + 2 * 8 = 20 ms (measured from the simulator): predicted closely
    assert cal.held_out[0].tpot_p50_measured_seconds == pytest.approx(0.020, rel=0.1)
    assert cal.holdout_tpot_p50_abs_error < 0.002
    # TPOT p90 <= 15 ms allows at most (15 - 4) / 2 = 5.5 sequences decoding; Little's law with E2E of about
    # 3 ms + 1.5 steps + 15 steps of ~13 ms -> ~0.22 s gives ~5.5 / 0.22 = 25 requests/s
    assert 15 < cal.capacity_requests_per_second < 35 and cal.binding_limit == "tpot_p90_slo"
    assert cal.capacity_p10 <= cal.capacity_p90
    assert latency_at_capacity(cal)[1] <= 0.015


def test_replicas_what_if_scales_capacity_and_max_num_seqs_binds() -> None:
    base = capacity(TRUE, prompt=32, output=16, slo_ttft=None, slo_tpot=0.015)[0]
    doubled = capacity(TRUE, prompt=32, output=16, slo_ttft=None, slo_tpot=0.015, replicas=2)[0]
    assert doubled == pytest.approx(2 * base)  # Poisson traffic split over 2 replicas: rate/2 each
    capped = StepModel(**{**TRUE.__dict__, "max_num_seqs": 1})
    rate, binding = capacity(capped, prompt=32, output=16, slo_ttft=None, slo_tpot=None)
    # one sequence at a time: E2E ~ 15 steps of 6 ms + the first ~ 0.1 s, so at most ~10 requests/s
    assert rate < 12 and binding == "max_num_seqs"


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        ([(1, {})], "needs at least 2"),
        ([(1, {}), (2, {"failed": 24})], "level 2: every request failed"),
        ([(1, {}), (2, {"stretch": 5.0})], "changed behaviour mid-sweep"),
    ],
)
def test_uncalibratable_sweeps_are_refused(levels, message) -> None:
    sweep = _sweep([_level(TRUE, n, **kw) for n, kw in levels])
    with pytest.raises(CostmodelError, match=message):
        calibrate(sweep, slo_ttft_p90_seconds=None, slo_tpot_p90_seconds=None, what_if={}, bootstrap_samples=0)


def test_held_out_error_above_bound_writes_nothing_unless_forced(tmp_path: Path, capsys) -> None:
    # the held-out level comes from a server twice as slow per sequence: the fit cannot predict it
    slower = StepModel(**{**TRUE.__dict__, "decode_sequence_seconds": 0.006})
    sweep_file = tmp_path / "sweep.json"
    sweep_file.write_text(_sweep([_level(TRUE, 1), _level(TRUE, 2), _level(slower, 8)]).model_dump_json())
    out = tmp_path / "cal.json"
    assert main(["calibrate-endpoint", str(sweep_file), "--out", str(out), "--bootstrap", "0"]) == 2
    assert "calibration not written: held-out level 8: " in capsys.readouterr().err and not out.exists()
    assert main(["calibrate-endpoint", str(sweep_file), "--out", str(out), "--bootstrap", "0", "--force"]) == 0
    saved = json.loads(out.read_text())
    assert saved["forced"] is True and saved["problems"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--what-if", "gpus=2"], "give replicas=N or max_num_seqs=N"),
    (["--what-if", "replicas=0"], "between 1 and"),
    (["--slo-tpot-p90", "nan"], "--slo-tpot-p90 must be a finite number"),
    (["--bootstrap", "-1"], "--bootstrap must be between"),
])
def test_bad_calibrate_flags_exit_2(tmp_path: Path, capsys, argv, message) -> None:
    code = main(["calibrate-endpoint", str(tmp_path / "none.json"), "--out", str(tmp_path / "c.json"), *argv])
    assert code == 2 and message in capsys.readouterr().err


def test_sweep_then_calibrate_against_a_batching_fake(tmp_path: Path, capsys) -> None:
    sweep_file, out = tmp_path / "sweep.json", tmp_path / "cal.json"
    with running_fake_server() as fake:
        # a batching engine: step = 4 ms + 3 ms per decoding stream, one token per chunk
        fake.config.chunk_delay_seconds, fake.config.per_stream_delay_seconds = 0.004, 0.003
        fake.config.first_token_delay_seconds, fake.config.chunks, fake.config.tokens_per_chunk = 0.002, 8, 1
        assert main(["probe-endpoint", "--url", fake.base_url, "--model", "normal", "--concurrency", "1,2,4,6",
                     "--requests", "12", "--max-tokens", "8", "--out", str(sweep_file), "--json"]) == 0
    capsys.readouterr()
    code = main(["calibrate-endpoint", str(sweep_file), "--out", str(out), "--slo-tpot-p90", "0.03", "--json",
                 "--bootstrap", "4", "--force"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert all(key in printed for key in CONTRACT)
    assert printed["levels_held_out"] == [6.0]
    # measured TPOT at 6 streams is 4 + 3 * 6 = 22 ms plus thread wake-up time; the fit predicts it within
    # the stated bound (35% + 2 ms) when the host is not starved
    held = printed["held_out"][0]
    assert printed["holdout_tpot_p50_abs_error"] <= 0.35 * held["tpot_p50_measured_seconds"] + 0.002
    # the per-stream cost is seen: per sequence directly, or through its context (7 prompt + ~4 output tokens;
    # with one prompt length the two are nearly collinear)
    assert printed["decode_sequence_seconds"] + 11 * printed["context_token_seconds"] > 0.001


def test_calibration_becomes_an_api_options_measured_latency(tmp_path: Path) -> None:
    from costmodel.decision.endpoint_latency import load_endpoint_calibration, with_measured_latency
    from costmodel.scenario.options import ApiOption

    cal = calibrate(_sweep([_level(TRUE, n) for n in (1, 2, 4)]), slo_ttft_p90_seconds=None,
                    slo_tpot_p90_seconds=0.015, what_if={}, bootstrap_samples=0)
    path = tmp_path / "cal.json"
    path.write_text(cal.model_dump_json())
    option = ApiOption.model_validate({"kind": "api", "name": "own-endpoint", "price_id": "openai/gpt-4o"})
    measured = with_measured_latency(option, load_endpoint_calibration(path))
    assert (measured.ttft_p90_seconds, measured.tpot_p90_seconds) == latency_at_capacity(cal)
    forced = cal.model_copy(update={"forced": True, "problems": ["held-out level 4: TTFT p50 off"]})
    with pytest.raises(CostmodelError, match="forced past its held-out check"):
        with_measured_latency(option, forced)


def test_one_at_a_time_server_keeps_its_prefill_on_the_server() -> None:
    # A server that runs one sequence at a time (llama-cpp-python's, tests/test_endpoint_real_server.py),
    # one prompt length, prefill 32 tokens x 3 ms = 96 ms. A request sent while another is served waits
    # for it, so its TTFT is not the no-wait equation's, and the time from the previous stream's last
    # token to its first token is one prefill step: 4 + 96 = 100 ms of server time. Before the ADMIT
    # rows the prefill landed in the per-request fixed cost (client time in the simulator) and the
    # held-out 4 clients were predicted with overlapping prefills: throughput far too high.
    serial = StepModel(overhead_seconds=0.004, prefill_token_seconds=0.003, decode_sequence_seconds=0.002,
                       context_token_seconds=0.0, request_fixed_seconds=0.003, max_num_seqs=1)
    sweep = _sweep([_level(serial, n) for n in (1, 2, 4)])
    cal = calibrate(sweep, slo_ttft_p90_seconds=None, slo_tpot_p90_seconds=None, what_if={}, bootstrap_samples=0)
    assert cal.concurrency_limit == 1 and cal.problems == []
    assert cal.server_scheduling == "one_at_a_time"
    prefill_step = cal.overhead_seconds + 32 * cal.prefill_token_seconds
    assert prefill_step == pytest.approx(0.100, rel=0.1)
    assert cal.request_fixed_seconds < 0.01  # the 3 ms client time, not the 96 ms prefill
    # one request alone: 100 ms prefill step + 15 decode steps of 6 ms + 3 ms = 193 ms; a one-at-a-time
    # server then completes 16 / (0.100 + 15 x 0.006) = 84 output tokens/s at any load
    held = cal.held_out[0]
    assert held.throughput_measured_tokens_per_second == pytest.approx(16 / 0.190, rel=0.05)
    assert held.throughput_predicted_tokens_per_second == pytest.approx(
        held.throughput_measured_tokens_per_second, rel=0.05)
    assert held.ttft_p50_predicted_seconds == pytest.approx(held.ttft_p50_measured_seconds, rel=0.1)
