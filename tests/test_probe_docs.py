"""docs/probes.md's measured block and examples/calibration-cpu.json are reproduced from examples/probe-cpu.json.

The example files were measured on the project's 2-core CPU by `costmodel probe --device cpu --quick`
and `costmodel calibrate`; here they are only re-read and re-fitted (no timing happens).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from costmodel.cli.probe import example_markdown
from costmodel.measurements.calibration import load_calibration
from costmodel.measurements.fit import CalibrationFit, fit_calibration
from costmodel.measurements.probe_result import batch1_decode_mbu, load_probe_result

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "examples" / "probe-cpu.json"
CALIBRATION = ROOT / "examples" / "calibration-cpu.json"
DOC = ROOT / "docs" / "probes.md"
BEGIN, END = "<!-- probe-example:begin -->", "<!-- probe-example:end -->"


@functools.cache
def _fit() -> CalibrationFit:
    return fit_calibration(load_probe_result(PROBE))


def test_doc_block_is_regenerated_from_the_example_probe() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    expected = example_markdown(load_probe_result(PROBE), _fit())
    assert block == expected, (
        "docs/probes.md is stale; regenerate the block between the probe-example markers with "
        "costmodel.cli.probe.example_markdown(load_probe_result('examples/probe-cpu.json'), fit)"
    )


def test_shipped_calibration_is_the_fit_of_the_shipped_probe() -> None:
    result = load_probe_result(PROBE)
    fit = _fit()
    calibration = load_calibration(CALIBRATION)
    assert calibration.hardware_id == "cpu" and calibration.source == PROBE.name
    assert calibration.eff_compute == pytest.approx(fit.efficiency.eff_compute, rel=1e-9)
    assert calibration.eff_memory == pytest.approx(fit.efficiency.eff_memory, rel=1e-9)
    assert calibration.overhead_seconds_per_step == pytest.approx(fit.efficiency.overhead_seconds_per_step, abs=1e-12)
    assert calibration.compute_half_saturation_tokens == pytest.approx(
        fit.efficiency.compute_half_saturation_tokens, rel=1e-9
    )
    assert calibration.holdout_median_abs_error == pytest.approx(fit.holdout_median_abs_error, rel=1e-9)
    assert calibration.peak_flops_per_s == result.peak_flops_per_s
    assert calibration.hbm_bytes_per_s == result.copy_bytes_per_s


def test_example_meets_the_issue_bars() -> None:
    # Issue 5's bars, as measured when the example was recorded (not re-timed here).
    result = load_probe_result(PROBE)
    assert result.complete and result.settings.quick and result.environment.device == "cpu"
    assert result.wall_seconds < 90
    mbu = batch1_decode_mbu(result)
    assert mbu is not None and mbu >= 0.5
    assert _fit().holdout_median_abs_error <= 0.10


def test_estimate_accepts_the_example_calibration() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "costmodel", "estimate", "--model", "llama-3.2-1b", "--hardware", "cpu",
         "--weight-dtype", "fp32", "--kv-dtype", "fp32", "--calibration", str(CALIBRATION), "--json"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )
    payload = json.loads(proc.stdout)
    assert payload["hardware"] == "cpu" and payload["decode_bound"] in ("memory", "compute", "overhead")
    assert "calibrated from probe-cpu.json" in payload["efficiency_source"]
