"""`calibrate` and `--calibration` refuse nonsense instead of turning it into optimism (issue 10, item 5).

Probe results come from the roofline itself (tests/test_calibrate_fit.py's synthetic_result), then one
thing at a time is broken: a timing of 1e300 s, a NaN, a missing phase, an unknown accelerator, held-out
points the fit cannot predict. Calibration files start from examples/calibration-cpu.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_calibrate_fit import fitted, synthetic_result

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import MAX_HOLDOUT_MEDIAN_ABS_ERROR, load_calibration
from costmodel.measurements.fit import MAX_EFFICIENCY, calibration_from_fit, fit_calibration
from costmodel.measurements.probe_result import ProbeResult, load_probe_result, save_probe_result

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_CALIBRATION = ROOT / "examples" / "calibration-cpu.json"


def _probe_json(tmp_path: Path, result: ProbeResult | None = None) -> tuple[Path, dict]:
    path = tmp_path / "probe.json"
    save_probe_result(result or synthetic_result(), path)
    return path, json.loads(path.read_text())


def _calibrate(capsys: pytest.CaptureFixture[str], probe: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["calibrate", str(probe), "--out", str(probe.parent / "cal.json"), "--json", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _first_ok_point(data: dict) -> dict:
    return next(p for p in data["points"] if p["status"] == "ok")


def test_timings_of_1e300_seconds_are_refused_naming_the_field(tmp_path: Path, capsys) -> None:
    path, data = _probe_json(tmp_path)
    for point in data["points"]:
        if point["status"] == "ok":
            point.update(seconds_median=1e300, seconds_min=1e300, seconds_max=1e300)
    path.write_text(json.dumps(data))
    code, out, err = _calibrate(capsys, path)
    assert code == 2 and out == ""
    assert "seconds_median" in err and "less than or equal to 3600" in err
    assert not (tmp_path / "cal.json").exists()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1e999"])
@pytest.mark.parametrize("field", ["copy_bytes_per_s", "wall_seconds", "point.predicted_seconds"])
def test_non_finite_numbers_in_a_probe_file_are_refused(tmp_path: Path, capsys, literal: str, field: str) -> None:
    path, data = _probe_json(tmp_path)
    target, key = (_first_ok_point(data), field.split(".")[1]) if field.startswith("point.") else (data, field)
    target[key] = "@@"
    path.write_text(json.dumps(data).replace('"@@"', literal))  # json.dumps cannot write NaN as a literal here
    code, _, err = _calibrate(capsys, path)
    assert code == 2 and key in err and "finite number" in err


def test_probe_without_prefill_points_is_incomplete(tmp_path: Path, capsys) -> None:
    result = synthetic_result()
    decode_only = result.model_copy(update={"points": [p for p in result.points if p.phase == "decode"]})
    with pytest.raises(CostmodelError, match="0 measured prefill point"):
        fit_calibration(decode_only)
    interrupted = result.model_copy(update={"points": [p for p in result.points if p.phase == "prefill"][:1]
                                            + [p for p in result.points if p.phase == "decode"],
                                            "complete": False})
    path, _ = _probe_json(tmp_path, interrupted)
    code, _, err = _calibrate(capsys, path)  # refused for being interrupted, before any fit
    assert code == 2 and "is marked complete: false" in err
    code, _, err = _calibrate(capsys, path, "--force")  # forced: still too few points to fit
    assert code == 2 and "1 measured prefill point(s) (the probe was interrupted" in err and "'points'" in err


def test_unknown_hardware_id_is_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(CostmodelError, match="unknown hardware 'h100-sxmm'; did you mean 'h100-sxm'"):
        calibration_from_fit(synthetic_result(), fitted(), source="x.json", hardware_id="h100-sxmm")
    path, _ = _probe_json(tmp_path, synthetic_result(hardware_id="gpu-9000"))
    code, _, err = _calibrate(capsys, path)
    assert code == 2 and "environment.hardware_id" in err and "unknown hardware 'gpu-9000'" in err


def _unpredictable_holdout() -> ProbeResult:
    """The synthetic probe with every held-out point (every 4th measured one) measured 10x slower:
    the fit sees only consistent points, so its held-out error is 1 - 1/10 = 90%."""
    result = synthetic_result()
    ok_index, points = 0, []
    for point in result.points:
        if point.ok:
            if ok_index % 4 == 3:
                seconds = 10 * point.seconds_median  # type: ignore[operator]
                point = point.model_copy(update={"seconds_median": seconds, "seconds_min": seconds,
                                                 "seconds_max": seconds})
            ok_index += 1
        points.append(point)
    return result.model_copy(update={"points": points})


def test_a_fit_that_misses_its_held_out_points_is_refused_unless_forced(tmp_path: Path, capsys) -> None:
    path, _ = _probe_json(tmp_path, _unpredictable_holdout())
    fit = fit_calibration(load_probe_result(path))
    assert fit.holdout_median_abs_error == pytest.approx(0.9, abs=1e-6)  # 1 - 1/10
    assert MAX_HOLDOUT_MEDIAN_ABS_ERROR == 0.5
    code, out, err = _calibrate(capsys, path)
    assert code == 2 and out == "" and "holdout_median_abs_error 90.0% is above the 50% bound" in err
    assert "--force" in err and not (tmp_path / "cal.json").exists()

    code, out, _ = _calibrate(capsys, path, "--force")
    assert code == 0 and json.loads(out)["forced"] is True
    calibration = load_calibration(tmp_path / "cal.json")  # a forced file loads, and says so
    assert calibration.forced
    code = main(["estimate", "--model", "qwen2.5-0.5b", "--hardware", "cpu", "--weight-dtype", "fp32",
                 "--kv-dtype", "fp32", "--calibration", str(tmp_path / "cal.json"), "--json"])
    assert code == 0
    assert "(forced past the held-out error bound)" in json.loads(capsys.readouterr().out)["efficiency_source"]


def test_fitted_efficiencies_never_exceed_one() -> None:
    # Points 3x faster than the measured peaks allow would need efficiencies of 3; the fit stops at 1.
    result = synthetic_result()
    fast = [p.model_copy(update={k: getattr(p, k) / 3 for k in ("seconds_median", "seconds_min", "seconds_max")})
            if p.ok else p for p in result.points]
    fit = fit_calibration(result.model_copy(update={"points": fast}))
    assert MAX_EFFICIENCY == 1.0
    assert 0 < fit.efficiency.eff_compute <= 1.0 and 0 < fit.efficiency.eff_memory <= 1.0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hbm_bytes_per_s", "Infinity", "finite number"),
        ("hbm_bytes_per_s", "1e999", "finite number"),
        ("hbm_bytes_per_s", "1e300", "less than or equal to 100000000000000"),
        ("overhead_seconds_per_step", "1e300", "less than or equal to 1"),
        ("overhead_seconds_per_step", "NaN", "finite number"),
        ("eff_compute", "1.5", "less than or equal to 1"),
        ("eff_memory", "0", "greater than 0"),
        ("peak_flops_per_s_by_dtype", '{"fp32": Infinity}', "finite number"),
        ("hardware_id", '"h100-sxmm"', "did you mean 'h100-sxm'"),
        ("holdout_median_abs_error", "0.9", "above the 50% bound"),
    ],
)
def test_bad_calibration_files_exit_2_naming_the_field(
    tmp_path: Path, capsys, field: str, value: str, message: str
) -> None:
    data = json.loads(EXAMPLE_CALIBRATION.read_text())
    data[field] = "@@"
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data).replace('"@@"', value))
    code = main(["estimate", "--model", "llama-3.2-1b", "--hardware", "cpu", "--calibration", str(path), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert field in captured.err and message in captured.err


def test_forced_calibration_file_with_a_large_error_loads(tmp_path: Path) -> None:
    data = json.loads(EXAMPLE_CALIBRATION.read_text())
    data.update(holdout_median_abs_error=0.9, forced=True)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    assert load_calibration(path).forced


def test_probe_refuses_an_unknown_hardware_id_before_running(tmp_path: Path, capsys) -> None:
    code = main(["probe", "--device", "cpu", "--quick", "--hardware", "h100-sxmm", "--out", str(tmp_path / "p.json")])
    captured = capsys.readouterr()
    assert code == 2 and "--hardware: unknown hardware 'h100-sxmm'; did you mean 'h100-sxm'" in captured.err
    assert not (tmp_path / "p.json").exists()
