"""Probe results are trusted only as far as they go: an interrupted probe (`complete: false`) is refused by
`calibrate` unless forced (and the calibration says so), and a server's absurd usage.prompt_tokens (1e23) is
dropped from the endpoint probe's records, means and sweeps, and refused in a sweep file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai_server import RunningFake, running_fake_server

from costmodel.cli import main
from costmodel.measurements.calibration import Calibration
from costmodel.measurements.endpoint_result import implausible_prompt_tokens

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "examples" / "probe-cpu.json"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def interrupted_probe(tmp_path: Path) -> Path:
    data = json.loads(PROBE.read_text(encoding="utf-8"))
    data["complete"] = False
    path = tmp_path / "probe-interrupted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_calibrate_refuses_an_interrupted_probe(interrupted_probe: Path, tmp_path: Path, capsys,
                                                monkeypatch) -> None:
    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("refused before the fit")

    monkeypatch.setattr("costmodel.cli.probe.fit_calibration", no_fit)
    out = tmp_path / "cal.json"
    code, stdout, err = cli(capsys, "calibrate", str(interrupted_probe), "--out", str(out))
    assert code == 2 and stdout == "" and not out.exists()
    assert "probe-interrupted.json is marked complete: false" in err and "--force" in err


def test_calibrate_force_on_an_interrupted_probe_marks_the_calibration(interrupted_probe: Path, tmp_path: Path,
                                                                       capsys) -> None:
    out = tmp_path / "cal.json"
    code, stdout, _ = cli(capsys, "calibrate", str(interrupted_probe), "--out", str(out), "--force", "--json")
    assert code == 0 and json.loads(stdout)["probe_incomplete"] is True
    assert Calibration.model_validate_json(out.read_text()).probe_incomplete is True


def test_implausible_prompt_tokens_by_hand() -> None:
    assert implausible_prompt_tokens(300, prompt_tokens_sent=256) is None
    assert implausible_prompt_tokens(8 * 256 + 1024, prompt_tokens_sent=256) is None  # the ceiling itself
    assert "is above 3,072" in str(implausible_prompt_tokens(8 * 256 + 1025, prompt_tokens_sent=256))
    assert "is above" in str(implausible_prompt_tokens(10**23, prompt_tokens_sent=256))
    assert "negative" in str(implausible_prompt_tokens(-1, prompt_tokens_sent=256))
    for value in (1e23, "7", True):
        assert "not an integer" in str(implausible_prompt_tokens(value, prompt_tokens_sent=256))


@pytest.fixture
def fake() -> Iterator[RunningFake]:
    with running_fake_server() as running:
        yield running


def test_probe_endpoint_drops_an_absurd_prompt_count(fake: RunningFake, capsys) -> None:
    fake.config.prompt_tokens = 10**23
    code, stdout, _ = cli(capsys, "probe-endpoint", "--url", fake.base_url, "--model", "normal", "--requests", "2",
                          "--json")
    payload = json.loads(stdout)
    assert code == 0 and payload["prompt_tokens_mean"] is None
    for record in payload["request_records"]:
        assert record["prompt_tokens"] is None and "prompt_tokens 1e+23 is above" in record["usage_implausible"]
    assert payload["requests_implausible_usage"] == 2


def test_sweep_drops_an_absurd_prompt_count_and_calibrate_endpoint_refuses_one(fake: RunningFake, capsys,
                                                                               tmp_path: Path) -> None:
    fake.config.prompt_tokens = 10**23
    sweep_path = tmp_path / "sweep.json"
    code, _, _ = cli(capsys, "probe-endpoint", "--url", fake.base_url, "--model", "normal", "--concurrency", "1,2",
                     "--requests", "2", "--out", str(sweep_path), "--json")
    sweep = json.loads(sweep_path.read_text(encoding="utf-8"))
    counts = [row["prompt_tokens"] for level in sweep["levels"] for row in level["requests"]]
    assert code == 0 and counts == [None] * 4
    # A sweep file holding one (an old probe's, or an edited one) is refused, naming the field.
    sweep["levels"][0]["requests"][0]["prompt_tokens"] = 10**23
    sweep_path.write_text(json.dumps(sweep), encoding="utf-8")
    code, stdout, err = cli(capsys, "calibrate-endpoint", str(sweep_path), "--out", str(tmp_path / "cal.json"))
    assert code == 2 and stdout == "" and "prompt_tokens" in err and "less than or equal to 16777216" in err
