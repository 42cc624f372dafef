"""Whole grids at once: models x hardware x GPUs x weight dtype x batch x context -> decode step times.

Runs the same `roofline.step_arrays` / `memory.memory_arrays` formulas as the scalar path, with numpy
broadcasting over axes (H, G, D, B, C) and a Python loop over models only. Used by search and charts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costmodel.catalog.allreduce_curve import GRID_BYTES
from costmodel.catalog.links import tp_link
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.dtypes import BYTES_PER_ELEMENT, lm_head_weight_dtype, streamed_weight_bytes_per_param
from costmodel.errors import CostmodelError
from costmodel.memory import memory_arrays
from costmodel.ops import uniform_work
from costmodel.roofline import step_arrays


@dataclass(frozen=True)
class GridResult:
    """Arrays of shape (models, hardware, gpus, weight_dtypes, batch, context)."""

    model_ids: tuple[str, ...]
    hardware_ids: tuple[str, ...]
    gpus: tuple[int, ...]
    weight_dtypes: tuple[str, ...]
    batch: tuple[int, ...]
    context_tokens: tuple[int, ...]
    kv_dtype: str
    decode_step_seconds: np.ndarray
    max_batch: np.ndarray  # broadcast over the batch axis
    fits: np.ndarray  # batch <= max_batch (and weights fit)

    @property
    def configurations(self) -> int:
        """Number of configurations evaluated."""
        return int(self.decode_step_seconds.size)

    @property
    def decode_tokens_per_second(self) -> np.ndarray:
        """Replica output tokens/s, B / step (0 where the batch does not fit)."""
        batch = np.asarray(self.batch, dtype=np.float64).reshape(1, 1, 1, 1, -1, 1)
        return np.where(self.fits, batch / self.decode_step_seconds, 0.0)


def link_axes(hws: Sequence[AcceleratorSpec], gpus: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Bus bytes/s and latency of each (accelerator, TP size), shaped for the grid's hardware and gpus axes.

    A size that spans nodes without cited network figures gets an infinite latency: its step never fits
    an SLO, so the grid screens it out instead of failing the whole grid (`catalog.links.tp_link` raises).
    """
    bytes_per_s = np.ones((len(hws), len(gpus)))
    latency = np.zeros((len(hws), len(gpus)))
    for i, hw in enumerate(hws):
        for j, n in enumerate(gpus):
            try:
                link = tp_link(hw, gpus=int(n))
            except CostmodelError:
                latency[i, j] = np.inf
                continue
            bytes_per_s[i, j], latency[i, j] = link.bytes_per_s, link.latency_seconds
    shape = (1, len(hws), len(gpus), 1, 1, 1)
    return bytes_per_s.reshape(shape), latency.reshape(shape)


def curve_axis(hws: Sequence[AcceleratorSpec], gpus: Sequence[int]) -> np.ndarray | None:
    """Each (accelerator, TP size)'s measured all-reduce curve (`TensorParallelLink.curve`, trailing axis
    allreduce_curve.GRID_BYTES; NaN = the ring formula), shaped for the grid; None when no pair has one."""
    curves = np.full((len(hws), len(gpus), len(GRID_BYTES)), np.nan)
    for i, hw in enumerate(hws):
        for j, n in enumerate(gpus):
            try:
                curve = tp_link(hw, gpus=int(n)).curve
            except CostmodelError:
                continue
            if curve is not None:
                curves[i, j] = curve
    return None if np.isnan(curves).all() else curves.reshape(1, len(hws), len(gpus), 1, 1, 1, len(GRID_BYTES))


def evaluate_grid(
    *,
    model_ids: Sequence[str],
    hardware_ids: Sequence[str],
    gpus: Sequence[int],
    weight_dtypes: Sequence[str],
    batch: Sequence[int],
    context_tokens: Sequence[int],
    kv_dtype: str = "bf16",
) -> GridResult:
    """Decode step seconds and memory fit for every combination (datasheet default efficiencies)."""
    hws = [load_accelerator(h) for h in hardware_ids]
    shape6 = (1, len(hws), 1, 1, 1, 1)

    def hw_axis(values: list[float]) -> np.ndarray:
        return np.asarray(values, dtype=np.float64).reshape(shape6)

    precisions = [[hw.op_precision(weight_dtype=d, kv_dtype=kv_dtype) for d in weight_dtypes] for hw in hws]

    def precision_axis(name: str) -> np.ndarray:  # per hardware x weight dtype (dtypes.OpPrecision)
        return np.asarray([[getattr(p, name) for p in row] for row in precisions],
                          dtype=np.float64).reshape(1, len(hws), 1, len(weight_dtypes), 1, 1)

    g = np.asarray(gpus, dtype=np.float64).reshape(1, 1, -1, 1, 1, 1)
    b_w = np.asarray([BYTES_PER_ELEMENT[d] for d in weight_dtypes], dtype=np.float64).reshape(1, 1, 1, -1, 1, 1)
    b_head = np.asarray([BYTES_PER_ELEMENT[lm_head_weight_dtype(d)] for d in weight_dtypes],
                        dtype=np.float64).reshape(b_w.shape)
    b_w_streamed = np.asarray([streamed_weight_bytes_per_param(d) for d in weight_dtypes], dtype=np.float64).reshape(1, 1, 1, -1, 1, 1)
    b = np.asarray(batch, dtype=np.float64).reshape(1, 1, 1, 1, -1, 1)
    c = np.asarray(context_tokens, dtype=np.float64).reshape(1, 1, 1, 1, 1, -1)
    hbm = hw_axis([hw.memory_bytes for hw in hws])
    links = link_axes(hws, gpus)
    curves = curve_axis(hws, gpus)
    steps, max_batches = [], []
    for model_id in model_ids:
        shape = derive_shape(load_model(model_id))
        work = uniform_work(shape, batch=b, new_tokens=1.0, context_tokens=c)
        raw = step_arrays(
            shape,
            work,
            weight_bytes_per_param=b_w_streamed,
            kv_bytes_per_element=BYTES_PER_ELEMENT[kv_dtype],
            gpus=g,
            peak_flops_per_s=precision_axis("peak_flops_per_s"),
            attention_peak_flops_per_s=precision_axis("attention_peak_flops_per_s"),
            lm_head_peak_flops_per_s=precision_axis("lm_head_peak_flops_per_s"),
            lm_head_weight_bytes_per_param=precision_axis("lm_head_weight_bytes_per_param"),
            **{name: precision_axis(name) for name in ("gemm_t0_seconds", "gemm_e_max", "gemm_operand_bytes_per_s",
                                                        "gemm_operand_bytes_per_element")},
            hbm_bytes_per_s=hw_axis([hw.hbm_bytes_per_s for hw in hws]),
            link_bytes_per_s=links[0],
            link_latency_seconds=links[1],
            allreduce_curve=curves,
            eff_compute=hw_axis([hw.eff_compute for hw in hws]),
            eff_memory=hw_axis([hw.eff_memory for hw in hws]),
            overhead_seconds_per_step=hw_axis([hw.overhead_seconds_per_step for hw in hws]),
        )
        _, _, max_batch = memory_arrays(
            shape, hbm_bytes_per_gpu=hbm, gpus=g, weight_bytes_per_param=b_w,
            kv_bytes_per_element=BYTES_PER_ELEMENT[kv_dtype], context_tokens=c, head_weight_bytes_per_param=b_head,
        )
        steps.append(np.broadcast_to(raw.step_seconds, np.broadcast_shapes(np.shape(raw.step_seconds), (1, len(hws), len(gpus), len(weight_dtypes), len(batch), len(context_tokens)))))
        max_batches.append(np.broadcast_to(max_batch, (1, len(hws), len(gpus), len(weight_dtypes), 1, len(context_tokens))))
    step_seconds = np.concatenate(steps, axis=0)
    max_batch_all = np.concatenate(max_batches, axis=0)
    return GridResult(
        model_ids=tuple(model_ids),
        hardware_ids=tuple(hardware_ids),
        gpus=tuple(gpus),
        weight_dtypes=tuple(weight_dtypes),
        batch=tuple(batch),
        context_tokens=tuple(context_tokens),
        kv_dtype=kv_dtype,
        decode_step_seconds=step_seconds,
        max_batch=max_batch_all,
        fits=b <= max_batch_all,
    )
