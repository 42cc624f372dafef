"""The roofline step function: one engine step (prefill or decode) -> seconds, FLOPs, bytes, bound.

One formula, one place. `step_arrays` holds every op's FLOPs and bytes and works on numpy arrays or
plain floats (broadcasting), so the scalar `step` (prefill and decode alike) and the grid evaluator
(`costmodel.grid`) run the same arithmetic. The efficiencies it applies (`Efficiency`, `gemm_saturation`,
`weight_rereads`) live in `costmodel.efficiency` and are re-exported here.

Symbols (DESIGN.md): B sequences, T new tokens per sequence, C tokens already cached, N GPUs (tensor
parallel), b_w bytes per weight, b_kv bytes per KV element, b_act = 2 bytes per activation.
Per op: seconds = max(FLOPs / (peak * eff_compute), bytes / (hbm_bytes_per_s * eff_memory)); the step
is the sum over ops plus a fixed overhead plus tensor-parallel all-reduces. Summing per-op maxima (rather
than max of the totals) is deliberate: a decode step's MLP can be compute-bound while its attention is
memory-bound, and kernels run one after another. Refs: Scaling Book "All About Transformer Inference";
kipply "Transformer Inference Arithmetic"; Horace He "Making Deep Learning Go Brrrr".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from costmodel.catalog.links import tp_link
from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.comm import allreduce_seconds
from costmodel.dtypes import op_peaks, precision_kwargs
from costmodel.efficiency import Efficiency, gemm_saturation, shape_efficiency, weight_rereads
from costmodel.ops import (
    OP_NAMES,
    FloatOrArray,
    StepWork,
    op_flops_and_bytes,
    op_gemm_rows,
    uniform_work,
    weight_bytes_touched,
)

Bound = Literal["compute", "memory", "overhead"]


@dataclass(frozen=True)
class OpCost:
    """One op group of a step, per GPU."""

    name: str
    flops: float
    bytes: float
    seconds: float
    arithmetic_intensity: float  # FLOP per byte
    bound: Bound


@dataclass(frozen=True)
class StepResult:
    """One engine step on one replica (numbers per GPU; the GPUs run in parallel)."""

    batch: int
    new_tokens: int
    context_tokens: int
    gpus: int
    step_seconds: float
    flops: float
    bytes: float
    compute_seconds: float  # all FLOPs at effective peak
    memory_seconds: float  # all bytes at effective bandwidth
    overhead_seconds: float
    comm_seconds: float
    bound: Bound
    ops: tuple[OpCost, ...]


@dataclass(frozen=True)
class StepArrays:
    """Raw output of `step_arrays`; each field is a float or an array of the broadcast shape."""

    step_seconds: FloatOrArray
    compute_seconds: FloatOrArray
    memory_seconds: FloatOrArray
    comm_seconds: FloatOrArray
    op_flops: tuple[FloatOrArray, ...]
    op_bytes: tuple[FloatOrArray, ...]
    op_seconds: tuple[FloatOrArray, ...]
    op_flops_per_s: tuple[FloatOrArray, ...] = ()  # effective FLOP/s of each op (its peak x eff_compute)


def step_arrays(
    shape: ModelShape,
    work: StepWork,
    *,
    weight_bytes_per_param: FloatOrArray,
    kv_bytes_per_element: FloatOrArray,
    gpus: FloatOrArray,
    peak_flops_per_s: FloatOrArray,
    hbm_bytes_per_s: FloatOrArray,
    link_bytes_per_s: FloatOrArray,
    link_latency_seconds: FloatOrArray,
    eff_compute: FloatOrArray,
    eff_memory: FloatOrArray,
    overhead_seconds_per_step: FloatOrArray,
    compute_half_saturation_tokens: FloatOrArray = 0.0,
    weight_reads_max_rows: FloatOrArray = 1.0,
    comm_overlap_fraction: FloatOrArray = 0.0,
    attention_peak_flops_per_s: FloatOrArray | None = None,
    lm_head_peak_flops_per_s: FloatOrArray | None = None,
    lm_head_weight_bytes_per_param: FloatOrArray | None = None,
    allreduce_curve: np.ndarray | Sequence[float] | None = None,
    gemm_t0_seconds: FloatOrArray = np.nan,
    gemm_e_max: FloatOrArray = np.nan,
    gemm_operand_bytes_per_s: FloatOrArray = np.nan,
    gemm_operand_bytes_per_element: FloatOrArray = np.nan,
) -> StepArrays:
    """Step time from the per-op roofline; every argument may be a float or a broadcastable array. Attention
    and the lm_head may run at other peaks than the linear layers' (`dtypes.op_peaks`; None = the same).
    `allreduce_curve`: measured all-reduce seconds on `allreduce_curve.GRID_BYTES` (trailing axis), from
    `catalog.links.tp_link(...).curve`; None = the ring formula. `gemm_*`: the linear layers' GEMM efficiency
    fit by shape (`dtypes.OpPrecision`); where given, eff_compute is capped at `efficiency.shape_efficiency`."""
    flops, bytes_ = op_flops_and_bytes(
        shape, work, weight_bytes_per_param=weight_bytes_per_param, kv_bytes_per_element=kv_bytes_per_element,
        gpus=gpus, lm_head_weight_bytes_per_param=lm_head_weight_bytes_per_param,
    )
    if np.any(np.asarray(weight_reads_max_rows) > 1.0):
        weight_bytes = weight_bytes_touched(
            shape, tokens=work.tokens, weight_bytes_per_param=weight_bytes_per_param, gpus=gpus,
            lm_head_weight_bytes_per_param=lm_head_weight_bytes_per_param,
        )
        bytes_ = tuple(
            b + w * weight_rereads(gemm_rows=rows, weight_reads_max_rows=weight_reads_max_rows)
            for b, w, rows in zip(bytes_, weight_bytes, op_gemm_rows(work), strict=True)
        )
    tokens = work.tokens
    eff_c = eff_compute * gemm_saturation(gemm_rows=tokens, half_saturation_tokens=compute_half_saturation_tokens)
    if not np.all(np.isnan(gemm_t0_seconds)):  # the measured GEMM shapes cap eff_compute (catalog/gemm_efficiency.py)
        by_shape = shape_efficiency(shape, tokens=tokens, gpus=gpus, peak_flops_per_s=peak_flops_per_s,
                                    t0_seconds=gemm_t0_seconds, e_max=gemm_e_max,
                                    operand_bytes_per_s=gemm_operand_bytes_per_s,
                                    operand_bytes_per_element=gemm_operand_bytes_per_element)
        eff_c = np.where(np.isnan(by_shape), eff_c, np.minimum(eff_c, by_shape))
    peaks = op_peaks(peak_flops_per_s, attention=attention_peak_flops_per_s, lm_head=lm_head_peak_flops_per_s)
    rates = tuple(peak * eff_c for peak in peaks)
    bytes_per_s = hbm_bytes_per_s * eff_memory
    op_seconds = tuple(np.maximum(f / r, b / bytes_per_s) for f, b, r in zip(flops, bytes_, rates, strict=True))
    comm = allreduce_seconds(
        shape, tokens=tokens, gpus=gpus, link_bytes_per_s=link_bytes_per_s, link_latency_seconds=link_latency_seconds,
        overlap_fraction=comm_overlap_fraction, curve=allreduce_curve,
    )
    total = sum(op_seconds) + overhead_seconds_per_step + comm
    return StepArrays(
        step_seconds=total,
        compute_seconds=sum(f / r for f, r in zip(flops, rates, strict=True)),
        memory_seconds=sum(bytes_) / bytes_per_s,
        comm_seconds=comm,
        op_flops=flops,
        op_bytes=bytes_,
        op_seconds=op_seconds,
        op_flops_per_s=rates,
    )


def step(
    shape: ModelShape,
    hardware: AcceleratorSpec,
    *,
    batch: int,
    new_tokens: int,
    context_tokens: int,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    gpus: int = 1,
    efficiency: Efficiency | None = None,
) -> StepResult:
    """One engine step: prefill is new_tokens = prompt length, decode is new_tokens = 1."""
    work = uniform_work(shape, batch=float(batch), new_tokens=float(new_tokens), context_tokens=float(context_tokens))
    return step_from_work(
        shape,
        hardware,
        work,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        gpus=gpus,
        efficiency=efficiency,
        batch=batch,
        new_tokens=new_tokens,
        context_tokens=context_tokens,
    )


def step_from_work(
    shape: ModelShape,
    hardware: AcceleratorSpec,
    work: StepWork,
    *,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    gpus: int = 1,
    efficiency: Efficiency | None = None,
    batch: int = 0,
    new_tokens: int = 0,
    context_tokens: int = 0,
) -> StepResult:
    """A step of any mix (uniform or prefill chunks + decode tokens), with its per-op breakdown."""
    eff = efficiency or Efficiency.from_accelerator(hardware)
    raw = step_arrays_on(shape, hardware, work, weight_dtype=weight_dtype, kv_dtype=kv_dtype, gpus=gpus, eff=eff)
    bytes_per_s = hardware.hbm_bytes_per_s * eff.eff_memory
    ops = tuple(
        OpCost(
            name=name,
            flops=float(f),
            bytes=float(b),
            seconds=float(s),
            arithmetic_intensity=float(f / b) if b > 0 else 0.0,
            bound="compute" if f / rate >= b / bytes_per_s else "memory",
        )
        for name, f, b, s, rate in zip(
            OP_NAMES, raw.op_flops, raw.op_bytes, raw.op_seconds, raw.op_flops_per_s, strict=True
        )
        if f > 0 or b > 0
    )
    compute_s, memory_s = float(raw.compute_seconds), float(raw.memory_seconds)
    overhead_s, comm_s = eff.overhead_seconds_per_step, float(raw.comm_seconds)
    regimes: dict[Bound, float] = {"compute": compute_s, "memory": memory_s, "overhead": overhead_s + comm_s}
    return StepResult(
        batch=batch,
        new_tokens=new_tokens,
        context_tokens=context_tokens,
        gpus=gpus,
        step_seconds=float(raw.step_seconds),
        flops=float(sum(raw.op_flops)),
        bytes=float(sum(raw.op_bytes)),
        compute_seconds=compute_s,
        memory_seconds=memory_s,
        overhead_seconds=overhead_s,
        comm_seconds=comm_s,
        bound=max(regimes, key=lambda k: regimes[k]),
        ops=ops,
    )


def step_seconds(shape: ModelShape, hardware: AcceleratorSpec, *, batch: int, new_tokens: int, context_tokens: int,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", gpus: int = 1,
                 efficiency: Efficiency | None = None) -> float:
    """`step(...).step_seconds` without the per-op breakdown (a capacity search reads only the time)."""
    work = uniform_work(shape, batch=float(batch), new_tokens=float(new_tokens), context_tokens=float(context_tokens))
    raw = step_arrays_on(shape, hardware, work, weight_dtype=weight_dtype, kv_dtype=kv_dtype, gpus=gpus,
                          eff=efficiency or Efficiency.from_accelerator(hardware))
    return float(raw.step_seconds)


def step_arrays_on(shape: ModelShape, hardware: AcceleratorSpec, work: StepWork, *, weight_dtype: str,
                    kv_dtype: str, gpus: int, eff: Efficiency) -> StepArrays:
    """`step_arrays` on one accelerator's datasheet, link and efficiency."""
    precision = hardware.op_precision(weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    link = tp_link(hardware, gpus=gpus)
    return step_arrays(
        shape,
        work,
        **precision_kwargs(precision),
        gpus=float(gpus),
        hbm_bytes_per_s=hardware.hbm_bytes_per_s,
        link_bytes_per_s=link.bytes_per_s,
        link_latency_seconds=link.latency_seconds,
        eff_compute=eff.eff_compute,
        eff_memory=eff.eff_memory,
        overhead_seconds_per_step=eff.overhead_seconds_per_step,
        compute_half_saturation_tokens=eff.compute_half_saturation_tokens,
        weight_reads_max_rows=eff.weight_reads_max_rows,
        comm_overlap_fraction=eff.comm_overlap_fraction,
        allreduce_curve=link.curve,
    )
