"""AppTest: the Probes page runs a probe with a live progress bar (a stand-in for `costmodel probe`, so the
test takes seconds), uploads probe and calibration files, shows measured vs predicted, and applies the
calibration; bad files and a failing probe are inline errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app import probe_runner
from costmodel.measurements.fit import calibration_from_fit, fit_calibration
from costmodel.measurements.probe_result import load_probe_result

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")
# A real `costmodel probe --quick --model tiny-test --device cpu` result (AMD EPYC, 2 threads, 17 points).
PROBE_FILE = Path(__file__).resolve().parent / "data" / "app_probe_tiny.json"


def _probes() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60).run()
    at.switch_page("views/probes.py")
    return at.run()


def test_parse_progress_lines() -> None:
    step = probe_runner.parse_progress("[######..................] 6/20   3.4s decode B=2 C=512\n")
    assert step is not None
    assert (step.done, step.total, step.elapsed_seconds, step.label) == (6, 20, 3.4, "decode B=2 C=512")
    assert step.fraction == pytest.approx(0.3)
    assert probe_runner.parse_progress("costmodel: error: the probe needs torch") is None


def _fake_probe(tmp_path: Path, *, fail: bool = False) -> str:
    """A stand-in for `costmodel probe`: three progress lines on stderr, then the result file (or an error)."""
    script = tmp_path / "fake_probe.py"
    script.write_text(
        "import shutil, sys, time\n"
        "out = sys.argv[sys.argv.index('--out') + 1]\n"
        "for i in range(1, 4):\n"
        "    sys.stderr.write(f'[{\"#\" * i}...] {i}/3   {i * 0.1:.1f}s step {i}\\n'); sys.stderr.flush()\n"
        + ("sys.stderr.write('costmodel: error: no CUDA device\\n'); sys.exit(2)\n" if fail else
           f"shutil.copy({str(PROBE_FILE)!r}, out)\n"),
        encoding="utf-8",
    )
    return str(script)


def test_run_shows_progress_and_the_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = _fake_probe(tmp_path)
    monkeypatch.setattr(probe_runner, "probe_command",
                        lambda *, model, device, out: [sys.executable, script, "--out", str(out)])
    at = _probes()
    at.button(key="pb_run").click().run()
    assert not at.exception and not at.error
    bars = at.get("progress")
    assert bars and bars[0].proto.value == 100
    fit = fit_calibration(load_probe_result(PROBE_FILE))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Held-out median error"] == f"{fit.holdout_median_abs_error:.1%}"
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any("calibrated" in t.get("name", "") for t in spec["data"])
    assert len(at.dataframe[0].value) == len(fit.points)


def test_failing_probe_is_an_inline_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = _fake_probe(tmp_path, fail=True)
    monkeypatch.setattr(probe_runner, "probe_command",
                        lambda *, model, device, out: [sys.executable, script, "--out", str(out)])
    at = _probes()
    at.button(key="pb_run").click().run()
    assert not at.exception
    assert any("Probe" in e.value and "no CUDA device" in e.value for e in at.error)


def test_upload_probe_and_apply_the_calibration() -> None:
    at = _probes()
    at.file_uploader(key="pb_upload").upload("tiny.json", PROBE_FILE.read_bytes(), "application/json")
    at.run()
    assert not at.exception and not at.error
    at.button(key="pb_apply").click().run()
    applied = at.session_state["calibration_json"]
    assert applied["hardware_id"] == "cpu"
    expected = calibration_from_fit(load_probe_result(PROBE_FILE), fit_calibration(load_probe_result(PROBE_FILE)),
                                    source="tiny.json", hardware_id="cpu")
    assert json.loads(applied["json"])["eff_memory"] == pytest.approx(expected.eff_memory)
    assert any("Calibration" in s.value or "cpu" in s.value for s in at.success)
    # The Roofline page on the same accelerator now says it uses the calibration.
    at.switch_page("views/roofline.py").run()
    at.selectbox(key="rf_model").set_value("qwen2.5-0.5b")  # tiny-test is hidden from pickers
    at.selectbox(key="rf_hardware").set_value("cpu")
    at.number_input(key="rf_gpus").set_value(1)
    at.run()
    assert not at.exception
    assert any("calibrated from tiny.json" in c.value for c in at.caption)


def test_upload_a_calibration_file() -> None:
    result = load_probe_result(PROBE_FILE)
    calibration = calibration_from_fit(result, fit_calibration(result), source="tiny", hardware_id="cpu")
    at = _probes()
    at.file_uploader(key="pb_upload").upload("cal.json", calibration.model_dump_json().encode(), "application/json")
    at.run()
    assert not at.exception and not at.error
    assert at.session_state["calibration_json"]["source"] == "cal.json"
    at.button(key="pb_remove").click().run()
    assert "calibration_json" not in at.session_state


def test_bad_upload_is_an_inline_error() -> None:
    at = _probes()
    at.file_uploader(key="pb_upload").upload("x.json", b'{"kind": "model_probe", "points": []}', "application/json")
    at.run()
    assert not at.exception
    assert any("x.json is not a valid probe result" in e.value for e in at.error)
    at.file_uploader(key="pb_upload").upload("y.json", b"not json", "application/json")
    at.run()
    assert any("y.json: not JSON" in e.value for e in at.error)
