"""Schema of a model probe run (`costmodel probe`), and the roofline predictions beside its points.

A probe times prefill and decode steps of a Llama-style decoder built from a catalog model's shapes
(probes/), plus microbenchmarks that measure this machine's roofline: copy bandwidth (bytes/s) and
matmul FLOP/s per dtype. Each point carries the roofline's prediction for the same step, computed by
`costmodel.roofline.step_arrays` with the *measured* peaks as the hardware, full efficiency and no
overhead ("the measured roofline"); `costmodel.measurements.fit` then fits the efficiencies.
All times in seconds, sizes in bytes, rates per second.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from costmodel.catalog.loader import load_model
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.dtypes import BYTES_PER_ELEMENT, streamed_weight_bytes_per_param
from costmodel.fileio import atomic_write_text, load_json_model
from costmodel.measurements.calibration import MAX_HBM_BYTES_PER_S, MAX_PEAK_FLOPS_PER_S
from costmodel.ops import uniform_work
from costmodel.roofline import Efficiency, StepArrays, step_arrays
from costmodel.strict import StrictModel

PROBE_DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16")
# The measured roofline: microbenchmark peaks are already achieved rates, so no further discount.
MEASURED_ROOFLINE = Efficiency(
    eff_compute=1.0, eff_memory=1.0, overhead_seconds_per_step=0.0, source="measured roofline (no overhead)"
)


# One timed step longer than an hour is not a measurement of an engine step (a CPU prefill of 1024
# tokens on a 2-layer slice takes ~0.1 s in examples/probe-cpu.json); 1e300 s timings are refused.
MAX_STEP_SECONDS = 3600.0


class ProbeEnvironment(StrictModel):
    """Where and how the probe ran."""

    device: Literal["cpu", "cuda"]
    device_name: str = Field(description="GPU name from the driver, or the CPU model name")
    hardware_id: str | None = Field(description="catalog accelerator id a calibration applies to, if known")
    driver_version: str | None = None
    cuda_version: str | None = None
    torch_version: str
    python_version: str
    platform: str
    dtype: Literal["fp32", "bf16", "fp16"] = Field(description="weights, activations and KV cache")
    dtype_reason: str
    threads: int | None = Field(description="torch CPU threads (torch.set_num_threads); None on CUDA")
    cpu_model: str
    cpu_logical_cpus: int
    cpu_physical_cores: int | None
    cpu_flags: list[str] = Field(description="SIMD features relevant to matmuls (avx2, avx512f, amx_bf16, ...)")
    host_memory_bytes: float
    accelerator_memory_bytes: float | None = None
    sm_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    power_limit_watts: float | None = None
    nvml: str = Field(description="'ok', or why NVML (power, energy, clocks) was not read")
    timer: Literal["perf_counter", "cuda_events"]
    cuda_graphs: bool = Field(description="decode steps replayed from captured CUDA graphs")
    torch_compile: bool
    peak_memory_measure: Literal["cuda_max_allocated", "process_peak_rss"]


class Microbenchmark(StrictModel):
    """One microbenchmark size: `copy` (dst.copy_(src)) or `matmul` (F.linear of n x n by n x n)."""

    kind: Literal["copy", "matmul"]
    dtype: str
    size: int = Field(description="copy: bytes per buffer; matmul: n")
    seconds_median: float = Field(gt=0, le=MAX_STEP_SECONDS)
    seconds_min: float = Field(gt=0, le=MAX_STEP_SECONDS)
    seconds_max: float = Field(gt=0, le=MAX_STEP_SECONDS)
    repeats: int = Field(ge=1)
    bytes_per_s: float | None = Field(default=None, description="copy: 2 x size / min (read + write)")
    flops_per_s: float | None = Field(default=None, description="matmul: 2 n^3 / min")


class ProbePoint(StrictModel):
    """One timed step of the probed model: prefill (context 0) or decode (one new token per sequence)."""

    phase: Literal["prefill", "decode"]
    batch: int = Field(ge=1)
    new_tokens: int = Field(ge=1)
    context_tokens: int = Field(ge=0)
    status: Literal["ok", "does_not_fit", "failed"]
    message: str = ""
    seconds_median: float | None = Field(default=None, gt=0, le=MAX_STEP_SECONDS)
    seconds_min: float | None = Field(default=None, gt=0, le=MAX_STEP_SECONDS)
    seconds_max: float | None = Field(default=None, gt=0, le=MAX_STEP_SECONDS)
    repeats: int = 0
    predicted_seconds: float = Field(description="measured roofline for the probed layers")
    flops: float = Field(description="roofline FLOPs of the step (probed layers)")
    bytes: float = Field(description="roofline bytes of the step (probed layers)")
    peak_memory_bytes: float | None = None
    energy_joules_per_token: float | None = Field(default=None, description="NVML energy / tokens of the step")
    power_watts: float | None = Field(default=None, description="mean board power while timed (NVML)")
    full_model_seconds: float | None = Field(
        default=None, description="slice probes: measured x predicted(all layers) / predicted(probed layers)"
    )

    @model_validator(mode="after")
    def _ordered_timings(self) -> ProbePoint:
        low, mid, high = self.seconds_min, self.seconds_median, self.seconds_max
        if low is not None and mid is not None and high is not None and not low <= mid <= high:
            raise ValueError(f"seconds_min <= seconds_median <= seconds_max does not hold ({low}, {mid}, {high})")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.seconds_median is not None

    @property
    def spread(self) -> float | None:
        """(max - min) / median of the repeats: how stable the timing was."""
        if not self.ok or self.seconds_min is None or self.seconds_max is None or self.seconds_median is None:
            return None
        return (self.seconds_max - self.seconds_min) / self.seconds_median

    @property
    def tokens(self) -> int:
        """Tokens the step processes: B x T."""
        return self.batch * self.new_tokens

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self.bytes / self.seconds_median if self.ok and self.seconds_median else None

    @property
    def achieved_flops_per_s(self) -> float | None:
        return self.flops / self.seconds_median if self.ok and self.seconds_median else None


class ProbeSettings(StrictModel):
    """What was asked for."""

    model_id: str
    layers_probed: int = Field(ge=1)
    layers_total: int = Field(ge=1)
    slice_reason: str | None = Field(description="why fewer layers than the model has, if so")
    quick: bool
    rounds: int = Field(ge=1, description="passes through the whole sweep (spreads repeats over time)")
    warmup: int = Field(ge=0, description="untimed calls before a point's first timed call")
    repeats: int = Field(ge=1, description="timed calls per point per round (more while the spread is wide)")
    prefill_prompt_tokens: list[int]
    prefill_batch: int = Field(ge=1)
    decode_batches: list[int]
    decode_context_tokens: list[int]
    seed: int


class ProbeResult(StrictModel):
    """A probe run; `complete` is False when it was interrupted (points so far are kept)."""

    kind: Literal["model_probe"] = "model_probe"
    schema_version: int = Field(default=1, ge=1, le=1)
    settings: ProbeSettings
    environment: ProbeEnvironment
    microbenchmarks: list[Microbenchmark]
    peak_flops_per_s: float = Field(
        gt=0, le=MAX_PEAK_FLOPS_PER_S, description="best matmul FLOP/s measured in the probe dtype"
    )
    copy_bytes_per_s: float = Field(gt=0, le=MAX_HBM_BYTES_PER_S, description="best copy bandwidth measured, bytes/s")
    peak_flops_per_s_by_dtype: dict[str, Annotated[float, Field(gt=0, le=MAX_PEAK_FLOPS_PER_S)]] = Field(
        description="best matmul FLOP/s per dtype measured"
    )
    points: list[ProbePoint]
    started_at: dt.datetime
    wall_seconds: float = Field(ge=0)
    background_cpu_fraction: float | None = Field(
        default=None,
        description="share of all CPU cores' time other processes used during the run (Linux /proc/stat); "
        "above ~0.2 a CPU probe's timings are unreliable",
    )
    complete: bool

    @property
    def ok_points(self) -> list[ProbePoint]:
        return [p for p in self.points if p.ok]


def sliced_shape(model_id: str, *, layers: int) -> ModelShape:
    """Shape of the model's first `layers` layers plus its embedding and lm_head."""
    spec = load_model(model_id)
    if layers >= spec.num_hidden_layers:
        return derive_shape(spec)
    update: dict[str, object] = {"num_hidden_layers": layers}
    if spec.layer_types:
        update["layer_types"] = spec.layer_types[:layers]
    if spec.first_k_dense_replace:
        update["first_k_dense_replace"] = min(spec.first_k_dense_replace, layers)
    return derive_shape(spec.model_copy(update=update))


def predict_arrays(
    shape: ModelShape,
    *,
    batch: np.ndarray,
    new_tokens: np.ndarray,
    context_tokens: np.ndarray,
    dtype: str,
    peak_flops_per_s: float,
    hbm_bytes_per_s: float,
    efficiency: Efficiency = MEASURED_ROOFLINE,
) -> StepArrays:
    """The roofline step function over arrays of probe points, on one device (no tensor parallel)."""
    work = uniform_work(shape, batch=batch, new_tokens=new_tokens, context_tokens=context_tokens)
    return step_arrays(
        shape,
        work,
        weight_bytes_per_param=streamed_weight_bytes_per_param(dtype),
        kv_bytes_per_element=BYTES_PER_ELEMENT[dtype],
        gpus=1.0,
        peak_flops_per_s=peak_flops_per_s,
        hbm_bytes_per_s=hbm_bytes_per_s,
        link_bytes_per_s=1.0,  # unused with one device
        link_latency_seconds=0.0,
        eff_compute=efficiency.eff_compute,
        eff_memory=efficiency.eff_memory,
        overhead_seconds_per_step=efficiency.overhead_seconds_per_step,
        compute_half_saturation_tokens=efficiency.compute_half_saturation_tokens,
        weight_reads_max_rows=efficiency.weight_reads_max_rows,
    )


def predict_point(
    shape: ModelShape,
    *,
    batch: int,
    new_tokens: int,
    context_tokens: int,
    dtype: str,
    peak_flops_per_s: float,
    hbm_bytes_per_s: float,
    efficiency: Efficiency = MEASURED_ROOFLINE,
) -> tuple[float, float, float]:
    """(predicted seconds, FLOPs, bytes) of one step."""
    raw = predict_arrays(
        shape,
        batch=np.asarray(float(batch)),
        new_tokens=np.asarray(float(new_tokens)),
        context_tokens=np.asarray(float(context_tokens)),
        dtype=dtype,
        peak_flops_per_s=peak_flops_per_s,
        hbm_bytes_per_s=hbm_bytes_per_s,
        efficiency=efficiency,
    )
    return float(raw.step_seconds), float(sum(raw.op_flops)), float(sum(raw.op_bytes))


def batch1_decode_mbu(result: ProbeResult) -> float | None:
    """Model bandwidth utilization of the batch-1 decode at the largest context: achieved / copy bytes/s."""
    points = [p for p in result.ok_points if p.phase == "decode" and p.batch == 1]
    if not points:
        return None
    largest = max(points, key=lambda p: p.context_tokens)
    achieved = largest.achieved_bytes_per_s
    return achieved / result.copy_bytes_per_s if achieved else None


def save_probe_result(result: ProbeResult, path: str | Path) -> None:
    """Write the result as indented JSON, atomically."""
    atomic_write_text(path, result.model_dump_json(indent=2) + "\n")


def load_probe_result(path: str | Path) -> ProbeResult:
    """Read and validate a probe result JSON file."""
    return load_json_model(path, ProbeResult, what="probe result")
