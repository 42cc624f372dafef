"""The probe runner on CPU with tiny-test and a tiny sweep: result schema, saving, Ctrl-C, out of memory, NVML.

No timing is asserted (the machine may be shared); only structure, bookkeeping and predictions.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.measurements.probe_result import load_probe_result, predict_point, sliced_shape
from probes import environment, points
from probes.model import ProbeModelConfig
from probes.runner import MEMORY_HEADROOM, ProbeRequest, fit_reason, run_probe, workspace_bytes
from probes.sweeps import Sweep, default_sweep

TINY_SWEEP = Sweep(
    prefill_prompt_tokens=(8, 16),
    prefill_batch=1,
    decode_batches=(1, 2),
    decode_context_tokens=(16, 32),
    rounds=2,
    warmup=1,
    warmup_later=0,
    repeats=1,
    max_repeats=1,
    point_budget_seconds=1.0,
    energy_seconds=0.2,
    quick_layers=None,
    microbench_repeats=2,
    copy_buffer_bytes=2**20,
    matmul_sizes=(32, 64),
    matmul_max_call_seconds=1.0,
    matmul_dtypes=("fp32",),
)


def _request(tmp_path: Path, **update: object) -> ProbeRequest:
    request = ProbeRequest(out=tmp_path / "probe.json", device="cpu", model_id="tiny-test", threads=1,
                           show_progress=False, sweep=TINY_SWEEP)
    return replace(request, **update)


def test_cpu_probe_writes_a_valid_result_with_predictions(tmp_path: Path) -> None:
    result = run_probe(_request(tmp_path, layers=2))
    saved = load_probe_result(tmp_path / "probe.json")
    assert saved == result and result.complete
    env = result.environment
    # bf16 where the CPU has native bf16 matmuls (AVX-512 BF16 or AMX, as on some CI hosts), else fp32.
    native = {"avx512_bf16", "amx_bf16"} & set(environment.cpu_info().flags)
    dtype = "bf16" if native else "fp32"
    assert (env.device, env.dtype, env.threads, env.timer, env.hardware_id) == ("cpu", dtype, 1, "perf_counter", "cpu")
    assert ("native bf16 matmuls (" if native else "no native bf16") in env.dtype_reason
    assert env.nvml == "not an NVIDIA device" and not env.cuda_graphs
    assert (result.settings.layers_probed, result.settings.layers_total) == (2, 4)
    assert result.settings.slice_reason == "--layers 2"
    kinds = {(b.kind, b.dtype) for b in result.microbenchmarks}
    assert kinds == {("copy", "fp32"), ("matmul", "fp32"), ("matmul", dtype)}  # the run's dtype is always timed
    # 2 prefill + 2 batches x 2 contexts, each timed once per round.
    assert [(p.phase, p.batch, p.new_tokens, p.context_tokens) for p in result.points] == [
        ("prefill", 1, 8, 0), ("prefill", 1, 16, 0),
        ("decode", 1, 1, 16), ("decode", 1, 1, 32), ("decode", 2, 1, 16), ("decode", 2, 1, 32),
    ]
    shape = sliced_shape("tiny-test", layers=2)
    for p in result.points:
        assert p.status == "ok" and p.repeats == 2 and p.seconds_median and p.seconds_median > 0
        assert p.peak_memory_bytes and p.peak_memory_bytes > 0
        predicted, flops, bytes_ = predict_point(
            shape, batch=p.batch, new_tokens=p.new_tokens, context_tokens=p.context_tokens, dtype=dtype,
            peak_flops_per_s=result.peak_flops_per_s, hbm_bytes_per_s=result.copy_bytes_per_s,
        )
        assert (p.predicted_seconds, p.flops, p.bytes) == (predicted, flops, bytes_)
        # A slice reports the full-model time scaled by the roofline's all-layers / probed-layers ratio.
        full, _, _ = predict_point(
            sliced_shape("tiny-test", layers=4), batch=p.batch, new_tokens=p.new_tokens,
            context_tokens=p.context_tokens, dtype=dtype, peak_flops_per_s=result.peak_flops_per_s,
            hbm_bytes_per_s=result.copy_bytes_per_s,
        )
        assert p.full_model_seconds == pytest.approx(p.seconds_median * full / predicted)


def test_ctrl_c_keeps_the_points_measured_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    measure = points.PointRunner._measure
    calls = {"n": 0}

    def interrupt_third(self: points.PointRunner, record: points.PointRecord, *, warmup: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        measure(self, record, warmup=warmup)

    monkeypatch.setattr(points.PointRunner, "_measure", interrupt_third)
    result = run_probe(_request(tmp_path))
    assert not result.complete and len(result.points) == 2
    assert load_probe_result(tmp_path / "probe.json") == result


def test_out_of_memory_point_does_not_fit_and_the_sweep_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = points.Transformer.setup_cache

    def no_room_for_batch_2(self: points.Transformer, *, batch: int, max_tokens: int) -> None:
        if batch == 2:
            raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 bytes")
        setup(self, batch=batch, max_tokens=max_tokens)

    monkeypatch.setattr(points.Transformer, "setup_cache", no_room_for_batch_2)
    result = run_probe(_request(tmp_path))
    statuses = [(p.batch, p.phase, p.status) for p in result.points]
    assert statuses.count((2, "decode", "does_not_fit")) == 2
    assert all(s == "ok" for b, _, s in statuses if b == 1)
    assert all("can't allocate memory" in p.message for p in result.points if p.status == "does_not_fit")


def test_cuda_without_a_gpu_is_a_clear_error_and_nvml_failures_are_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(CostmodelError, match="--device cuda"):
        environment.resolve_device("cuda")
    assert environment.resolve_device("auto").type == "cpu"
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    handle, why = environment.open_nvml(torch.device("cuda"))
    assert handle is None and "nvidia-ml-py is not installed" in why


def test_missing_nvidia_driver_is_reported_not_raised() -> None:
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        handle, why = environment.open_nvml(torch.device("cuda"))
        assert handle is None and "no NVIDIA driver" in why
    else:
        pynvml.nvmlShutdown()
        pytest.skip("an NVIDIA driver is present")


def test_cpu_dtype_choice_follows_native_bf16() -> None:
    cpu = environment.cpu_info()
    avx2_only = replace(cpu, flags=("avx2", "fma"))
    with_amx = replace(cpu, flags=("avx2", "avx512f", "amx_bf16"))
    cpu_device = torch.device("cpu")
    assert environment.choose_dtype(cpu_device, None, avx2_only)[0] == "fp32"
    assert environment.choose_dtype(cpu_device, None, with_amx)[0] == "bf16"
    assert environment.choose_dtype(cpu_device, "bf16", avx2_only) == ("bf16", "chosen with --dtype")


def test_quick_cpu_sweep_slices_and_default_points() -> None:
    quick = default_sweep("cpu", quick=True)
    assert quick.quick_layers == 1 and quick.rounds >= 3
    assert len(quick.points()) == len(quick.prefill_prompt_tokens) + len(quick.decode_batches) * len(
        quick.decode_context_tokens
    )


@pytest.mark.cuda
def test_cuda_probe_with_graphs_and_nvml(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    result = run_probe(_request(tmp_path, device="cuda", threads=None))
    env = result.environment
    assert env.timer == "cuda_events" and env.cuda_graphs and env.dtype in ("bf16", "fp16")
    assert all(p.status == "ok" for p in result.points)


@pytest.mark.serial  # times a real CPU probe and fits it: alone on the cores (make test runs serial tests last)
def test_probe_cli_json_and_calibrate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bigger = replace(TINY_SWEEP, prefill_prompt_tokens=(8, 16, 32, 64), decode_context_tokens=(16, 32, 64),
                     quick_layers=2)
    monkeypatch.setattr("probes.runner.default_sweep", lambda device_type, quick: bigger)
    out = tmp_path / "p.json"
    code = main(["probe", "--device", "cpu", "--model", "tiny-test", "--quick", "--threads", "1",
                 "--out", str(out), "--no-progress", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["complete"] and summary["points_ok"] == 10 and summary["layers_probed"] == 2
    assert summary["slice_reason"].startswith("--quick")
    cal = tmp_path / "cal.json"
    code = main(["calibrate", str(out), "--out", str(cal), "--json"])
    if code == 2:  # a loaded machine's timings can miss the 50% held-out bound: then it is refused, unwritten
        assert "above the 50% bound" in capsys.readouterr().err and not cal.exists()
        code = main(["calibrate", str(out), "--out", str(cal), "--json", "--force"])
        assert code == 0 and json.loads(cal.read_text())["forced"] is True
    assert code == 0
    fit = json.loads(capsys.readouterr().out)
    for key in ("holdout_median_abs_error", "holdout_max_abs_error", "eff_compute", "eff_memory",
                "overhead_seconds_per_step", "compute_half_saturation_tokens"):
        assert key in fit
    assert 0 <= fit["holdout_median_abs_error"] <= fit["holdout_max_abs_error"]
    assert (fit["points_fit"], fit["points_holdout"]) == (8, 2)
    assert main(["estimate", "--model", "tiny-test", "--hardware", "cpu", "--calibration", str(cal), "--json"]) == 0
    assert "calibrated from p.json" in json.loads(capsys.readouterr().out)["efficiency_source"]


class _FakeNvmlError(Exception):
    pass


class _FakePynvml:
    """Just enough of pynvml's API (nvidia-ml-py) for open_nvml and nvml_fields; energy in mJ, power in mW."""

    NVMLError = _FakeNvmlError
    NVMLError_LibraryNotFound = type("NVMLError_LibraryNotFound", (_FakeNvmlError,), {})
    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2

    def __init__(self) -> None:
        self.energy_mj = 1_000_000
        self.uuid_asked: list[str] = []

    def nvmlInit(self) -> None: ...
    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> str:
        self.uuid_asked.append(uuid)
        return "handle"
    def nvmlDeviceGetName(self, handle: str) -> str:
        return "NVIDIA H200"
    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.86"
    def nvmlDeviceGetMemoryInfo(self, handle: str) -> object:
        return type("Memory", (), {"total": 150_754_820_096})()
    def nvmlDeviceGetEnforcedPowerLimit(self, handle: str) -> int:
        return 700_000
    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:
        return 1980 if kind == 1 else 3201
    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:
        return 1980
    def nvmlDeviceGetTotalEnergyConsumption(self, handle: str) -> int:
        self.energy_mj += 350  # each read: 0.35 J later
        return self.energy_mj
    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:
        raise _FakeNvmlError("not supported")


def test_nvml_fields_and_energy_bookkeeping_with_a_fake_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakePynvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: type("P", (), {"uuid": "abc-123"})())
    handle, status = environment.open_nvml(torch.device("cuda"))
    assert status == "ok" and handle is not None and fake.uuid_asked == ["GPU-abc-123"]
    fields = environment.nvml_fields(handle)
    assert fields == {
        "driver_version": "570.86", "sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980, "memory_clock_mhz": 3201,
        "power_limit_watts": 700.0, "device_name": "NVIDIA H200", "accelerator_memory_bytes": 150_754_820_096.0,
    }
    assert environment.NVML_NAME_TO_HARDWARE_ID[fields["device_name"]] == "h200"
    assert handle.power_watts() is None  # an NVMLError becomes "not recorded", not a traceback
    # Energy per token = (joules / seconds of the energy window) x median step seconds / tokens of the step.
    runner = points.PointRunner(model=None, forward=lambda tokens, start: tokens, device=torch.device("cpu"),  # type: ignore[arg-type]
                                sweep=TINY_SWEEP, graphs=False, nvml=handle, fits=lambda b, c, t: None)
    record = points.PointRecord(base={"phase": "decode", "batch": 4, "new_tokens": 1, "context_tokens": 8,
                                      "predicted_seconds": 1.0, "flops": 1.0, "bytes": 1.0},
                                tokens=torch.zeros(4, 1, dtype=torch.long), full_ratio=None)
    runner._measure(record, warmup=0)
    point = record.point()
    assert record.energy_joules == pytest.approx(0.35) and record.energy_seconds >= TINY_SWEEP.energy_seconds
    assert point.power_watts == pytest.approx(0.35 / record.energy_seconds)
    assert point.energy_joules_per_token == pytest.approx(point.power_watts * point.seconds_median / 4)


def test_fit_reason_checks_the_cache_first_then_the_step_workspace_alone() -> None:
    # The runner asks before allocating the KV cache (step_tokens = 0: the need is the cache) and then per
    # point after allocating it (free memory already excludes the cache: the need is the workspace alone).
    cfg = ProbeModelConfig(model_id="t", layers=2, layers_total=2, hidden=64, heads=4, kv_heads=2, head_dim=16,
                           intermediate=128, vocab=100, tie_embeddings=True, experts=0, experts_per_token=0,
                           moe_intermediate=0, shared_experts=0, first_dense_layers=0, sliding_window=0,
                           sliding_layers=(False, False))
    # K and V, 2 layers, batch 4, 2 KV heads, 1000 tokens, head_dim 16, fp32 (4 bytes): written out.
    kv_bytes = 2 * 2 * 4 * 2 * 1000 * 16 * 4.0
    step = workspace_bytes(cfg, tokens=8, batch=4, dtype="fp32")
    assert step < kv_bytes
    free = (step + 1.0) / MEMORY_HEADROOM  # room for the workspace, not for the cache
    cache_reason = fit_reason(cfg, batch=4, cache_tokens=1000, step_tokens=0, dtype="fp32", free_bytes=free)
    assert cache_reason is not None and cache_reason.startswith("KV cache for 4 x 1000 tokens needs 0.00 GB")
    assert fit_reason(cfg, batch=4, cache_tokens=1000, step_tokens=8, dtype="fp32", free_bytes=free) is None
    roomy = (kv_bytes + 1.0) / MEMORY_HEADROOM
    assert fit_reason(cfg, batch=4, cache_tokens=1000, step_tokens=0, dtype="fp32", free_bytes=roomy) is None
    tight = (step - 1.0) / MEMORY_HEADROOM
    step_reason = fit_reason(cfg, batch=4, cache_tokens=1000, step_tokens=8, dtype="fp32", free_bytes=tight)
    assert step_reason is not None and step_reason.startswith("workspace of the step needs")
