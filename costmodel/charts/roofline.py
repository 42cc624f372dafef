"""Curve data for charts (app and memo): the roofline with a step's ops on it, step time vs batch,
memory per GPU vs batch x context. Pure data, no plotting; every number comes from `estimate`,
`roofline` or `memory`, so the charts show exactly what the tables compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.dtypes import BYTES_PER_ELEMENT, lm_head_weight_dtype
from costmodel.estimate import Estimate, estimate
from costmodel.measurements.calibration import Calibration, apply_calibration
from costmodel.memory import (
    RESERVE_FRACTION,
    activation_bytes_per_gpu,
    kv_bytes_per_sequence_per_gpu,
    memory_arrays,
)
from costmodel.roofline import Bound, Efficiency

# Default sweeps: powers of two up to 1024 sequences, and common context lengths.
DEFAULT_BATCHES: tuple[int, ...] = tuple(2**k for k in range(11))
DEFAULT_CONTEXTS: tuple[int, ...] = (1024, 4096, 16384, 32768, 131072)


@dataclass(frozen=True)
class RooflineCurve:
    """Attainable FLOP/s per GPU vs arithmetic intensity: min(peak, intensity x bandwidth)."""

    hardware_id: str
    weight_dtype: str
    peak_flops_per_s: float  # datasheet dense peak for the dtype the matmuls run in
    hbm_bytes_per_s: float  # datasheet peak bandwidth
    eff_compute: float
    eff_memory: float
    ridge_flops_per_byte: float  # peak / bandwidth: ops left of it are memory-bound
    effective_ridge_flops_per_byte: float  # same with the efficiencies applied
    intensities_flops_per_byte: tuple[float, ...]
    datasheet_flops_per_s: tuple[float, ...]  # the datasheet roofline
    attainable_flops_per_s: tuple[float, ...]  # with eff_compute and eff_memory applied


@dataclass(frozen=True)
class OpPoint:
    """One op group of a step placed on the roofline (per GPU)."""

    phase: str  # "prefill" | "decode"
    op: str
    arithmetic_intensity: float  # FLOP per byte
    achieved_flops_per_s: float  # flops / seconds: on the effective roofline by construction
    flops: float
    bytes: float
    seconds: float
    bound: Bound


@dataclass(frozen=True)
class BatchPoint:
    """One batch size of a sweep at the estimate's prompt and output lengths."""

    batch: int
    prefill_seconds: float
    decode_step_seconds: float
    decode_tokens_per_second: float  # replica output tokens/s while decoding: B / step
    decode_bound: Bound
    fits: bool  # the batch fits in HBM at prompt + output tokens


@dataclass(frozen=True)
class MemoryGrid:
    """Bytes per GPU of weights + workspace + reserve + KV at each (context, batch), and the HBM limit."""

    batches: tuple[int, ...]
    contexts_tokens: tuple[int, ...]
    hbm_bytes_per_gpu: float
    weights_bytes_per_gpu: float
    activation_bytes_per_gpu: float
    reserve_bytes_per_gpu: float
    kv_bytes_per_gpu: np.ndarray  # shape (contexts, batches)
    total_bytes_per_gpu: np.ndarray  # shape (contexts, batches)
    max_batch: tuple[int, ...]  # per context: the largest batch that fits (0: none)


@dataclass(frozen=True)
class RooflineView:
    """Everything the Roofline page shows for one configuration."""

    estimate: Estimate
    curve: RooflineCurve
    points: tuple[OpPoint, ...]
    batch_sweep: tuple[BatchPoint, ...]
    memory: MemoryGrid


def roofline_curve(
    hardware: AcceleratorSpec, efficiency: Efficiency, *, weight_dtype: str, points: int = 121
) -> RooflineCurve:
    """The datasheet and effective rooflines over intensities 0.1 .. 1e5 FLOP/byte (log-spaced)."""
    peak = hardware.peak_for(weight_dtype)
    bandwidth = hardware.hbm_bytes_per_s
    intensities = np.logspace(-1.0, 5.0, points)
    datasheet = np.minimum(peak, intensities * bandwidth)
    attainable = np.minimum(peak * efficiency.eff_compute, intensities * bandwidth * efficiency.eff_memory)
    return RooflineCurve(
        hardware_id=hardware.id,
        weight_dtype=weight_dtype,
        peak_flops_per_s=peak,
        hbm_bytes_per_s=bandwidth,
        eff_compute=efficiency.eff_compute,
        eff_memory=efficiency.eff_memory,
        ridge_flops_per_byte=peak / bandwidth,
        effective_ridge_flops_per_byte=(peak * efficiency.eff_compute) / (bandwidth * efficiency.eff_memory),
        intensities_flops_per_byte=tuple(float(x) for x in intensities),
        datasheet_flops_per_s=tuple(float(x) for x in datasheet),
        attainable_flops_per_s=tuple(float(x) for x in attainable),
    )


def op_points(est: Estimate) -> tuple[OpPoint, ...]:
    """The ops of the estimate's prefill and decode steps as roofline points."""
    result = []
    for phase, step_result in (("prefill", est.prefill), ("decode", est.decode)):
        for op in step_result.ops:
            result.append(
                OpPoint(
                    phase=phase,
                    op=op.name,
                    arithmetic_intensity=op.arithmetic_intensity,
                    achieved_flops_per_s=op.flops / op.seconds if op.seconds > 0 else 0.0,
                    flops=op.flops,
                    bytes=op.bytes,
                    seconds=op.seconds,
                    bound=op.bound,
                )
            )
    return tuple(result)


def batch_sweep(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    batches: Sequence[int] = DEFAULT_BATCHES,
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    prompt_tokens: int = 1024,
    output_tokens: int = 256,
    calibration: Calibration | None = None,
) -> tuple[BatchPoint, ...]:
    """`estimate` at each batch size: prefill time, decode step time and tokens/s, memory fit."""
    result = []
    for batch in sorted(set(batches)):
        est = estimate(
            model, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=batch,
            prompt_tokens=prompt_tokens, output_tokens=output_tokens, calibration=calibration,
        )
        result.append(
            BatchPoint(
                batch=batch,
                prefill_seconds=est.prefill_seconds,
                decode_step_seconds=est.decode_step_seconds,
                decode_tokens_per_second=est.decode_tokens_per_second,
                decode_bound=est.decode.bound,
                fits=est.fits,
            )
        )
    return tuple(result)


def memory_grid(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    batches: Sequence[int] = DEFAULT_BATCHES,
    contexts_tokens: Sequence[int] = DEFAULT_CONTEXTS,
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> MemoryGrid:
    """Memory per GPU at every (context, batch), with the same terms as `memory.plan_memory`."""
    spec = load_model(model) if isinstance(model, str) else model
    hw = load_accelerator(hardware) if isinstance(hardware, str) else hardware
    shape = derive_shape(spec)
    batch_axis = np.asarray(sorted(set(batches)), dtype=np.float64).reshape(1, -1)
    context_axis = np.asarray(sorted(set(contexts_tokens)), dtype=np.float64).reshape(-1, 1)
    b_kv = BYTES_PER_ELEMENT[kv_dtype]
    # memory_arrays is the one place the budget is computed: HBM - weights - workspace - reserve.
    weights, budget, max_batch = memory_arrays(
        shape, hbm_bytes_per_gpu=hw.memory_bytes, gpus=gpus, weight_bytes_per_param=BYTES_PER_ELEMENT[weight_dtype],
        kv_bytes_per_element=b_kv, context_tokens=context_axis[:, 0],
        head_weight_bytes_per_param=BYTES_PER_ELEMENT[lm_head_weight_dtype(weight_dtype)],
    )
    per_seq = kv_bytes_per_sequence_per_gpu(shape, context_tokens=context_axis, kv_bytes_per_element=b_kv, gpus=gpus)
    kv = per_seq * batch_axis  # (contexts, batches)
    fixed = hw.memory_bytes - float(budget)  # weights + workspace + reserve, per GPU
    return MemoryGrid(
        batches=tuple(int(b) for b in batch_axis[0]),
        contexts_tokens=tuple(int(c) for c in context_axis[:, 0]),
        hbm_bytes_per_gpu=hw.memory_bytes,
        weights_bytes_per_gpu=float(weights),
        activation_bytes_per_gpu=float(activation_bytes_per_gpu(shape, gpus=gpus)),
        reserve_bytes_per_gpu=RESERVE_FRACTION * hw.memory_bytes,
        kv_bytes_per_gpu=kv,
        total_bytes_per_gpu=kv + fixed,
        max_batch=tuple(int(m) for m in max_batch),
    )


def roofline_view(
    model: str,
    hardware: str,
    *,
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    batch: int = 1,
    prompt_tokens: int = 1024,
    output_tokens: int = 256,
    calibration: Calibration | None = None,
    batches: Sequence[int] = DEFAULT_BATCHES,
    contexts_tokens: Sequence[int] = DEFAULT_CONTEXTS,
) -> RooflineView:
    """One call for the Roofline page: the estimate, its ops on the roofline, the batch sweep and memory."""
    est = estimate(
        model, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=batch,
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, calibration=calibration,
    )
    hw = load_accelerator(hardware)
    if calibration is not None:
        hw, _ = apply_calibration(hw, calibration)
    contexts = sorted(set(contexts_tokens) | {prompt_tokens + output_tokens})
    return RooflineView(
        estimate=est,
        curve=roofline_curve(hw, est.efficiency, weight_dtype=weight_dtype),
        points=op_points(est),
        batch_sweep=batch_sweep(
            model, hardware, batches=sorted(set(batches) | {batch}), gpus=gpus,
            weight_dtype=weight_dtype, kv_dtype=kv_dtype, prompt_tokens=prompt_tokens,
            output_tokens=output_tokens, calibration=calibration,
        ),
        memory=memory_grid(
            model, hw, batches=sorted(set(batches) | {batch}), contexts_tokens=contexts, gpus=gpus,
            weight_dtype=weight_dtype, kv_dtype=kv_dtype,
        ),
    )
