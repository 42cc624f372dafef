"""`costmodel simulate` and `costmodel capacity`: the DESIGN.md JSON contract, text output, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.cli import main

BASE = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "512", "--output-tokens", "64"]
CONTRACT = [f"{m}_{p}_seconds" for m in ("ttft", "tpot", "e2e") for p in ("p50", "p90", "p99")]


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, ["simulate", *BASE, "--rate", "4", "--requests", "300", "--seed", "1", "--json",
                         "--slo-ttft-p90", "1", "--slo-tpot-p90", "0.05"])
    for key in [*CONTRACT, "output_tokens_per_second", "goodput_requests_per_second"]:
        assert isinstance(out[key], float) and out[key] > 0, key
    assert out["goodput_requests_per_second"] <= out["requests_per_second"] + 1e-12
    assert out["meets_slo"] is True and out["requests"] == 300 and out["preemptions"] == 0
    assert out["ttft_p50_seconds"] <= out["ttft_p90_seconds"] <= out["ttft_p99_seconds"]
    assert 0 < out["itl_p50_seconds"] <= out["itl_p90_seconds"] <= out["itl_p99_seconds"]
    for name in ("ttft", "tpot", "e2e", "itl"):
        for q in ("p50", "p90", "p99"):
            assert out[f"{name}_{q}_seconds_ci_low"] <= out[f"{name}_{q}_seconds"] <= out[f"{name}_{q}_seconds_ci_high"]


def test_simulate_text_and_no_slo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *BASE, "--rate", "2", "--requests", "100", "--prompt-sigma", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "TTFT" in text and "TPOT" in text and "ITL" in text and "output tokens/s" in text and "goodput" not in text
    out = _json(capsys, ["simulate", *BASE, "--rate", "2", "--requests", "50", "--json"])
    assert out["goodput_requests_per_second"] is None


def test_simulate_replays_arrival_times(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "arrivals.txt"
    path.write_text("0\n0.25\n0.5\n10\n", encoding="utf-8")
    out = _json(capsys, ["simulate", *BASE, "--arrivals", str(path), "--json"])
    assert out["requests"] == 4 and out["rate_per_second"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rate", "-1"], "--rate must be a positive number"),
        (["--rate", "1", "--prompt-tokens", "0"], "--prompt-tokens must be >= 1"),
        (["--rate", "1", "--output-tokens", "0"], "--output-tokens must be >= 1"),
        ([], "give --rate R"),
        (["--rate", "1", "--slo-ttft-p90", "0.001"], "below the physical minimum"),
        (["--rate", "1", "--slo-tpot-p90", "-2"], "--slo-tpot-p90 must be a positive number"),
        (["--rate", "1", "--requests", "0"], "--requests must be between"),
        (["--rate", "1", "--prompt-sigma", "9"], "must be in (0, 3]"),
    ],
)
def test_simulate_bad_input_exits_2(capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    assert main(["simulate", *BASE, *extra]) == 2
    assert message in capsys.readouterr().err


def test_simulate_impossible_memory_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--model", "llama-3.1-405b", "--hardware", "l4", "--rate", "1"]) == 2
    assert "does not fit" in capsys.readouterr().err


def test_capacity_json_and_curve(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, ["capacity", *BASE, "--slo-ttft-p90", "0.5", "--slo-tpot-p90", "0.03", "--requests", "800",
                         "--curve", "--json"])
    assert out["feasible"] is True and out["reason"] == ""
    assert 0 < out["max_rate_requests_per_second"] <= out["saturation_rate_requests_per_second"]
    assert out["ttft_p90_seconds"] <= 0.5 and out["tpot_p90_seconds"] <= 0.03
    assert [p["concurrency"] for p in out["curve"]] == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_capacity_infeasible_reports_reason(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["capacity", "--model", "llama-3.1-8b", "--hardware", "l4", "--prompt-tokens", "8000", "--slo-ttft-p90", "1"]
    assert main(argv) == 0
    assert "infeasible: prefill of a 8000-token prompt (p90) alone takes" in capsys.readouterr().out
    out = _json(capsys, [*argv, "--json"])
    assert out["feasible"] is False and "> TTFT p90 limit 1 s" in out["reason"]
    assert main(["capacity", *BASE]) == 2
    assert "give at least one of --slo-ttft-p90" in capsys.readouterr().err


def test_simulate_refuses_cpu_reread_calibration_clearly(capsys):
    # The CPU calibration fits weight re-reads (R > 1), which the simulator's step tables cannot express.
    from pathlib import Path

    from costmodel.cli import main

    calibration = Path(__file__).resolve().parents[1] / "examples" / "calibration-cpu.json"
    code = main(["simulate", "--model", "tiny-test", "--hardware", "cpu", "--calibration", str(calibration),
                 "--rate", "1"])
    assert code == 2
    assert "weight re-reads" in capsys.readouterr().err
