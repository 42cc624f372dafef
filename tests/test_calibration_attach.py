"""Measurement files attached to options (issue 14 items 3-4): a calibrate-endpoint file sizes a self-host
option with its measured step-time model (latency_source measured) or gives an API option its measured
latency; a probe-endpoint result gives an API option its latency; a collectives fit sets the TP all-reduce;
forced files are marked in compare text/json, warnings and the memo; every wrong attachment is refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.cli import main
from costmodel.comm import allreduce_seconds
from costmodel.decision.rank import decide
from costmodel.dtypes import ACTIVATION_BYTES_PER_ELEMENT
from costmodel.measurements.calibration_files import load_calibration_file
from costmodel.measurements.collectives_result import AlphaBetaFit, CollectivesResult, OpFit, tp_link
from costmodel.measurements.endpoint_calibration import EndpointCalibration, latency_at_capacity
from costmodel.measurements.endpoint_result import EndpointProbeResult
from costmodel.memo.risks import measured_blocks
from costmodel.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def endpoint_cal(**changes: object) -> EndpointCalibration:
    """A calibration of a known step model: step = 4 ms + 2 ms per decoding sequence, 3 ms per request
    (the model tests/test_endpoint_calibrate.py recovers from a sweep)."""
    fields: dict[str, object] = dict(
        base_url="http://127.0.0.1:8000/v1", model="served-llama", overhead_seconds=0.004,
        prefill_token_seconds=0.0, decode_sequence_seconds=0.002, context_token_seconds=0.0,
        request_fixed_seconds=0.003, concurrency_limit=None, levels_fit=[1.0, 2.0, 4.0], levels_held_out=[8.0],
        held_out=[], holdout_ttft_p50_abs_error=0.001, holdout_tpot_p50_abs_error=0.0005,
        holdout_throughput_abs_error=10.0, holdout_relative_error_bound=0.35, slo_ttft_p90_seconds=None,
        slo_tpot_p90_seconds=0.015, capacity_requests_per_second=25.0, capacity_p10=22.0, capacity_p90=27.0,
        binding_limit="tpot_p90_slo", ttft_p90_at_capacity_seconds=0.012, tpot_p90_at_capacity_seconds=0.014,
        bootstrap_samples=0)
    fields.update(changes)
    return EndpointCalibration.model_validate(fields)


def probe_result(*, ttft_p90: float | None = 0.35, tpot_p90: float | None = 0.021) -> EndpointProbeResult:
    settings = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "concurrency": 4, "requests_total": 40,
                "prompt_tokens": 32, "max_tokens": 16, "timeout_seconds": 5.0, "api_key_env": "OPENAI_API_KEY"}
    percentiles = {f"{m}_p{q}_seconds": None for m in ("ttft", "tpot", "itl", "e2e") for q in (50, 90, 99)}
    percentiles.update(ttft_p90_seconds=ttft_p90, tpot_p90_seconds=tpot_p90)
    return EndpointProbeResult.model_validate({
        "settings": settings, "api_key_sent": False, "started_at_utc": "2026-12-01T00:00:00+00:00",
        "wall_seconds": 2.0, "requests_ok": 40, "requests_failed": 0, "errors_by_kind": {}, "error_examples": {},
        "output_tokens": 640, "output_tokens_source": "usage", "output_tokens_per_second": 320.0,
        "prompt_tokens_mean": 32.0, "itl_samples": 0, **percentiles, "notes": [], "environment": {},
        "request_records": []})


def collectives(*, processes: int = 2, latency: float = 20e-6, bandwidth: float | None = 5e9) -> CollectivesResult:
    fit = OpFit(fit=AlphaBetaFit(latency_seconds=latency, bytes_per_second=bandwidth))
    return CollectivesResult(backend="gloo", processes=processes, device="cpu", repeats=5, points=[],
                             ops={"all_reduce": fit, "all_gather": fit})


def write(path: Path, model: object) -> Path:
    path.write_text(model.model_dump_json())  # type: ignore[attr-defined]
    return path


def scenario_file(tmp_path: Path, *, self_host: dict | None = None, api: dict | None = None,
                  extra_options: list[dict] | None = None) -> Path:
    """864,000 requests/day = 10 requests/s mean, 20 at the peak hour; 32-token prompts, 16-token outputs."""
    data = {
        "name": "measured", "as_of": "2026-12-01",
        "workload": {"requests_per_day": 864_000, "prompt_tokens": {"kind": "fixed", "tokens": 32},
                     "output_tokens": {"kind": "fixed", "tokens": 16}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.015},
        "options": [
            {"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b", **(api or {})},
            {"kind": "self-host", "name": "own", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "usd_per_gpu_hour": 2.0, **(self_host or {})},
            *(extra_options or []),
        ],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_self_host_sized_by_its_measured_step_model(tmp_path: Path) -> None:
    write(tmp_path / "cal.json", endpoint_cal())
    decision = decide(load_scenario(scenario_file(tmp_path, self_host={"calibration": "cal.json"})))
    own = decision.option("own")
    assert own.latency_source == "measured" and own.capacity_method == "measured" and own.meets_slo
    # TPOT p90 <= 15 ms allows (15 - 4) / 2 = 5.5 decoding sequences; E2E ~ 3 ms + 15 steps of ~13 ms ~ 0.22 s,
    # so Little's law gives ~5.5 / 0.22 = 25 requests/s per replica (the same arithmetic as the fit's test)
    assert 15 < own.capacity_requests_per_second < 35
    assert own.tpot_p90_seconds is not None and own.tpot_p90_seconds <= 0.015
    # replicas = max(floor 2, ceil(peak 20 req/s / (0.8 x capacity)), ceil(20 / capacity) + 1 spare (N+1))
    mu = own.capacity_requests_per_second
    assert own.replicas == max(2, math.ceil(20 / (0.8 * mu)), math.ceil(20 / mu) + 1)
    assert own.calibrations and "endpoint calibration of http://127.0.0.1:8000/v1" in own.calibrations[0]
    assert not own.calibration_forced


def test_api_option_takes_measured_latency_from_a_calibration_or_a_probe(tmp_path: Path) -> None:
    cal = write(tmp_path / "cal.json", endpoint_cal())
    decision = decide(load_scenario(scenario_file(tmp_path, api={"calibration": str(cal)})))
    api = decision.option("api")
    assert api.latency_source == "measured" and api.slo_status == "meets"
    assert (api.ttft_p90_seconds, api.tpot_p90_seconds) == latency_at_capacity(endpoint_cal())
    write(tmp_path / "probe.json", probe_result(tpot_p90=0.021))
    api = decide(load_scenario(scenario_file(tmp_path, api={"calibration": "probe.json"}))).option("api")
    # measured TPOT p90 21 ms > the 15 ms limit: a measured miss
    assert api.latency_source == "measured" and api.slo_status == "misses" and api.tpot_p90_seconds == 0.021


def test_forced_calibration_is_marked_in_json_text_warnings_and_memo(tmp_path: Path, capsys) -> None:
    write(tmp_path / "cal.json", endpoint_cal(forced=True, problems=["held-out level 8: TPOT p50 off by 60%"]))
    path = scenario_file(tmp_path, self_host={"calibration": "cal.json"})
    assert main(["compare", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    own = next(o for o in printed["options"] if o["name"] == "own")
    assert own["calibration_forced"] is True and own["latency_source"] == "measured"
    assert any("written with --force" in w for w in printed["warnings"])
    assert main(["compare", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Measured calibrations" in text and "[FORCED" in text
    decision = decide(load_scenario(path))
    assert any("FORCED" in block.text for block in measured_blocks(decision))  # type: ignore[attr-defined]


def test_cli_calibration_flag_attaches_by_kind_and_by_option_name(tmp_path: Path, capsys) -> None:
    cal = write(tmp_path / "cal.json", endpoint_cal())
    path = scenario_file(tmp_path)
    assert main(["compare", str(path), "--json", "--calibration", str(cal)]) == 0  # the one self-host option
    own = next(o for o in json.loads(capsys.readouterr().out)["options"] if o["name"] == "own")
    assert own["latency_source"] == "measured"
    assert main(["compare", str(path), "--json", "--calibration", f"api={cal}"]) == 0
    options = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert options["api"]["latency_source"] == "measured" and options["own"]["latency_source"] == "simulated"
    two = scenario_file(tmp_path, extra_options=[{"kind": "self-host", "name": "own2", "model": "llama-3.1-8b",
                                                  "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0}])
    assert main(["compare", str(two), "--calibration", str(cal)]) == 2
    assert "name one: --calibration OPTION=" in capsys.readouterr().err


def test_roofline_calibration_still_applies_globally_and_per_option(tmp_path: Path, capsys) -> None:
    # the CPU example's fit, moved to h100-sxm with the terms the serving simulator supports
    data = json.loads((EXAMPLES / "calibration-cpu.json").read_text())
    data.update(hardware_id="h100-sxm", weight_reads_max_rows=1.0, compute_half_saturation_tokens=0.0,
                peak_flops_per_s=None, hbm_bytes_per_s=None, peak_flops_per_s_by_dtype=None, peak_flops_dtype=None)
    roofline = tmp_path / "roofline.json"
    roofline.write_text(json.dumps(data))
    path = scenario_file(tmp_path)
    assert main(["compare", str(path), "--json", "--calibration", str(roofline)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "calibrated from" in printed["efficiency_source"]
    decision = decide(load_scenario(scenario_file(tmp_path, self_host={"calibration": "roofline.json"})))
    assert "calibrated from" in decision.efficiency_source
    assert decision.option("own").calibrations[0].startswith("roofline calibration from")
    assert decision.option("own").latency_source == "simulated"


@pytest.mark.parametrize(("attach", "message"), [
    ({"self_host": {"calibration": "probe.json"}}, "one-level `probe-endpoint` result cannot drive the simulator"),
    ({"api": {"calibration": "coll.json"}}, "an API option takes a `calibrate-endpoint` file"),
    ({"self_host": {"calibration": ["cal.json", "coll.json"]}}, "replaces the roofline model"),
    ({"api": {"calibration": "sweep.json"}}, "fit it first with `costmodel calibrate-endpoint"),
    ({"api": {"calibration": "junk.json"}}, "unknown kind 'something'"),
    ({"api": {"calibration": "missing.json"}}, "not found"),
    ({"api": {"calibration": "bad.json"}}, "field 'capacity_p10'"),
])
def test_wrong_attachments_exclude_that_option_with_the_fix(tmp_path: Path, capsys, attach, message) -> None:
    write(tmp_path / "cal.json", endpoint_cal())
    write(tmp_path / "probe.json", probe_result())
    write(tmp_path / "coll.json", collectives())
    (tmp_path / "sweep.json").write_text(json.dumps({"kind": "endpoint_sweep"}))
    (tmp_path / "junk.json").write_text(json.dumps({"kind": "something"}))
    bad = endpoint_cal().model_dump(mode="json")
    bad["capacity_p10"] = "fast"
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    path = scenario_file(tmp_path, **attach)
    name = "own" if "self_host" in attach else "api"
    other = "api" if name == "own" else "own"
    decision = decide(load_scenario(path))  # one option's bad file excludes that option only
    assert message in str(decision.option(name).excluded_reason)
    assert decision.option(other).excluded_reason is None
    assert main(["compare", str(path), "--json"]) == 0
    by_name = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert message in by_name[name]["excluded_reason"]


def test_collectives_fit_sets_the_tensor_parallel_allreduce(tmp_path: Path) -> None:
    probe = collectives(processes=2, latency=20e-6, bandwidth=5e9)
    link, latency = tp_link(probe, gpus=2)  # type: ignore[misc]
    assert link == pytest.approx(5e9 * 2 * (2 - 1) / 2) and latency == 20e-6
    shape = derive_shape(load_model("llama-3.1-8b"))
    tokens = 64
    # 2 all-reduces per layer, each alpha + message / beta with message = tokens x d x b_act (the fit's terms)
    message = tokens * shape.hidden * ACTIVATION_BYTES_PER_ELEMENT
    expected = shape.layers * 2 * (20e-6 + message / 5e9)
    got = allreduce_seconds(shape, tokens=tokens, gpus=2, link_bytes_per_s=link, link_latency_seconds=latency)
    assert float(got) == pytest.approx(expected)
    assert tp_link(probe, gpus=4) is None  # measured over 2 ranks: does not transfer to 4
    write(tmp_path / "coll.json", probe)
    tp2 = {"gpus_per_replica": 2, "calibration": "coll.json"}
    with_fit = decide(load_scenario(scenario_file(tmp_path, self_host=tp2))).option("own")
    plain = decide(load_scenario(scenario_file(tmp_path, self_host={"gpus_per_replica": 2}))).option("own")
    assert "TP all-reduce from the collectives probe (2 ranks, gloo)" in (with_fit.efficiency_source or "")
    # a 5 GB/s loopback link is far slower than H100 NVLink (450 GB/s): the measured TPOT is higher
    assert (with_fit.tpot_p90_seconds or 0) > (plain.tpot_p90_seconds or 0)
    assert load_accelerator("h100-sxm").interconnect_bytes_per_s > 5e9


def test_calibration_file_kinds_are_told_apart(tmp_path: Path) -> None:
    assert isinstance(load_calibration_file(write(tmp_path / "a.json", endpoint_cal())), EndpointCalibration)
    assert isinstance(load_calibration_file(write(tmp_path / "b.json", probe_result())), EndpointProbeResult)
    assert isinstance(load_calibration_file(write(tmp_path / "c.json", collectives())), CollectivesResult)
    assert type(load_calibration_file(EXAMPLES / "calibration-cpu.json")).__name__ == "Calibration"


def test_capacity_and_simulate_run_the_measured_step_model(tmp_path: Path, capsys) -> None:
    cal = write(tmp_path / "cal.json", endpoint_cal(forced=True, problems=["held-out level 8: TTFT off"]))
    base = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "32", "--output-tokens", "16",
            "--calibration", str(cal), "--json"]
    assert main(["capacity", *base, "--slo-tpot-p90", "0.015"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # same model and lengths as the fit's test: ~25 requests/s, TPOT-bound
    assert printed["latency_source"] == "measured" and printed["calibration_forced"] is True
    assert 15 < printed["max_rate_requests_per_second"] < 35 and printed["binding_limit"] == "tpot_p90_slo"
    assert printed["tpot_p90_seconds"] <= 0.015 and printed["feasible"] is True
    assert main(["simulate", *base, "--rate", "2", "--requests", "200"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # at 2 requests/s (E2E ~ 0.1 s) about one sequence runs: TPOT ~ one step of 4 + 2 ms = 6 ms
    assert printed["tpot_p50_seconds"] == pytest.approx(0.006, rel=0.2) and printed["latency_source"] == "measured"
    assert printed["itl_p50_seconds"] is None  # not modelled by the fit
    text_args = [a for a in base if a != "--json"]
    assert main(["capacity", *text_args, "--slo-tpot-p90", "0.015"]) == 0
    assert "FORCED calibration" in capsys.readouterr().out
    write(tmp_path / "probe.json", probe_result())
    probe_args = [*text_args[:-1], str(tmp_path / "probe.json")]
    assert main(["simulate", *probe_args, "--rate", "2"]) == 2
    assert "one-level probe-endpoint result" in capsys.readouterr().err


def test_simulate_with_a_collectives_fit_needs_the_same_rank_count(tmp_path: Path, capsys) -> None:
    coll = write(tmp_path / "coll.json", collectives(processes=2))
    base = ["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "256",
            "--output-tokens", "32", "--rate", "1", "--requests", "50", "--json"]
    assert main([*base, "--gpus", "2", "--calibration", str(coll)]) == 0
    slow = json.loads(capsys.readouterr().out)
    assert main([*base, "--gpus", "2"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert slow["tpot_p50_seconds"] > fast["tpot_p50_seconds"]  # 5 GB/s measured vs 450 GB/s NVLink
    assert main([*base, "--gpus", "4", "--calibration", str(coll)]) == 2
    assert "probe with --processes 4" in capsys.readouterr().err


def test_memo_content_marks_the_forced_measured_option(tmp_path: Path) -> None:
    from costmodel.memo.blocks import Para
    from costmodel.memo.content import memo_content

    write(tmp_path / "cal.json", endpoint_cal(forced=True, problems=["held-out level 8: TPOT p50 off by 60%"]))
    scenario = load_scenario(scenario_file(tmp_path, self_host={"calibration": "cal.json"}))
    content = memo_content(scenario)
    paragraphs = [b.text for b in content.blocks if isinstance(b, Para)]
    measured = [p for p in paragraphs if p.startswith("Measured (own, latency measured)")]
    assert measured and "FORCED" in measured[0] and "endpoint calibration of http://127.0.0.1:8000/v1" in measured[0]
