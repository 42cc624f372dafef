"""Load sweep of probe-endpoint against the loopback fake: levels, raw timings, atomic level-by-level
writes (an interrupted sweep keeps its finished levels), Poisson arrivals and flag checks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fake_openai_server import running_fake_server

import probes.sweep as sweep_module
from costmodel.cli import main
from costmodel.measurements.endpoint_sweep import EndpointSweep
from probes.sweep import poisson_arrivals_seconds


def _cli(*argv: str) -> int:
    return main(["probe-endpoint", "--model", "normal", *argv])


def test_closed_loop_sweep_keeps_every_request_timing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sweep.json"
    with running_fake_server() as fake:
        fake.config.chunk_delay_seconds = 0.002
        code = _cli("--url", fake.base_url, "--concurrency", "1,3", "--requests", "4", "--max-tokens", "8",
                    "--out", str(out))
    assert code == 0
    err = capsys.readouterr().err
    assert "level 1/2 done: 1 in flight" in err and "level 2/2 done: 3 in flight" in err
    sweep = EndpointSweep.model_validate_json(out.read_text())
    assert sweep.complete and [level.value for level in sweep.levels] == [1.0, 3.0]
    for level in sweep.levels:
        assert level.requests_ok == 4 and len(level.requests) == 4
        for request in level.requests:
            # fake: 4 chunks of 2 tokens, usage counts 8; chunk times ascend after the send time
            assert request.output_tokens == 8 and len(request.chunk_seconds) == 4
            assert request.sent_seconds < request.chunk_seconds[0] <= request.chunk_seconds[-1]
    # closed loop with 1 in flight: each request is sent after the previous one's last chunk
    first = sorted(sweep.levels[0].requests, key=lambda r: r.sent_seconds)
    assert all(b.sent_seconds >= a.chunk_seconds[-1] for a, b in zip(first, first[1:], strict=False))


def test_interrupted_sweep_keeps_finished_levels(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "sweep.json"
    real = sweep_module.run_level
    calls = []

    def interrupt_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "run_level", interrupt_second)
    with running_fake_server() as fake:
        code = _cli("--url", fake.base_url, "--concurrency", "1,2,4", "--requests", "2", "--out", str(out))
    assert code == 130
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and len(saved["levels"]) == 1


def test_poisson_arrivals_have_the_requested_mean_gap() -> None:
    times = poisson_arrivals_seconds(rate_per_second=4.0, count=4000, rng=random.Random(1))
    assert times == sorted(times)
    # mean gap 1/rate = 0.25 s; the standard error of 4000 exponential gaps is 0.25/sqrt(4000) = 0.004 s
    assert abs(times[-1] / 4000 - 0.25) < 5 * 0.004


def test_open_loop_sweep_sends_on_schedule(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sweep.json"
    with running_fake_server() as fake:
        code = _cli("--url", fake.base_url, "--rates", "50,100", "--requests", "5", "--out", str(out), "--json")
    assert code == 0
    sweep = EndpointSweep.model_validate_json(out.read_text())
    assert sweep.settings.mode == "rate" and len(sweep.levels) == 2
    expected = poisson_arrivals_seconds(rate_per_second=50.0, count=5, rng=random.Random(0))
    sent = sorted(r.sent_seconds for r in sweep.levels[0].requests)
    assert all(s >= e - 1e-6 for s, e in zip(sent, expected, strict=True))  # never before its arrival


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--concurrency", "1,x"], "--concurrency '1,x' must be comma-separated integers"),
        (["--concurrency", "1,0"], "--concurrency must be positive, got 0"),
        (["--concurrency", "2,2"], "repeats a level"),
        (["--rates", "1,nan"], "--rates must be a finite number"),
        (["--rates", "1,2"], "needs --out"),
        (["--rates", "1", "--concurrency", "1,2"], "not both"),
        (["--concurrency", "1,5000", "--out", "s.json"], "--concurrency must be at most 4,096"),
    ],
)
def test_bad_sweep_flags_exit_2(argv: list[str], message: str, capsys) -> None:
    code = _cli("--url", "http://127.0.0.1:1/v1", *argv)
    assert code == 2 and message in capsys.readouterr().err
