"""Schema of the collectives probe (`costmodel probe --collectives`) and its alpha-beta fit.

Alpha-beta model (Hockney 1994, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3)): one collective of `bytes` takes latency_seconds + bytes / bytes_per_second,
fitted per op by least squares on the measured medians, both coefficients kept non-negative.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.fileio import load_json_model
from costmodel.strict import StrictModel


class CollectivePoint(StrictModel):
    """One op at one message size: the median over repeats, on the slowest rank."""

    op: Literal["all_reduce", "all_gather"]
    message_bytes: int = Field(gt=0, description="bytes each rank contributes")
    seconds: float = Field(ge=0)


class AlphaBetaFit(StrictModel):
    """seconds = latency_seconds + message_bytes / bytes_per_second."""

    latency_seconds: float
    bytes_per_second: float | None = Field(description="None when time did not grow with size")


class OpFit(StrictModel):
    """The fit of one op."""

    fit: AlphaBetaFit


class CollectivesResult(StrictModel):
    """The collectives probe file."""

    kind: Literal["collectives_probe"] = "collectives_probe"
    backend: str
    processes: int
    device: str
    repeats: int
    points: list[CollectivePoint]
    ops: dict[str, OpFit]


def fit_alpha_beta(message_bytes: list[int], seconds: list[float]) -> AlphaBetaFit:
    """Least-squares line through (bytes, seconds); a negative slope or intercept is dropped and refitted."""
    x = np.asarray(message_bytes, dtype=float)
    y = np.asarray(seconds, dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    if intercept < 0:
        slope, intercept = float(np.dot(x, y) / np.dot(x, x)), 0.0
    if slope <= 0:
        return AlphaBetaFit(latency_seconds=float(np.mean(y)), bytes_per_second=None)
    return AlphaBetaFit(latency_seconds=float(intercept), bytes_per_second=float(1.0 / slope))


def load_collectives(path: str | Path) -> CollectivesResult:
    """Read and validate a collectives probe file (`costmodel probe --collectives --out FILE`)."""
    return load_json_model(path, CollectivesResult, what="collectives file")


def bus_bytes_per_s(fit: AlphaBetaFit, *, processes: int) -> float | None:
    """The fit's bandwidth as the bus bandwidth the TP model charges (None when time did not grow with size).

    The fit's bytes/s is message bytes over time (nccl-tests' "algbw"); a ring all-reduce moves
    2(n-1)/n of the message over each GPU's link, so the link carries algbw * 2(n-1)/n ("busbw", NVIDIA
    nccl-tests doc/PERFORMANCE.md). `roofline.allreduce_seconds` charges 2(n-1)/n * bytes / link, so
    busbw is the link figure that reproduces the measured time at the measured size.
    """
    if fit.bytes_per_second is None:
        return None
    return fit.bytes_per_second * 2.0 * (processes - 1) / processes


def apply_collectives(hardware: AcceleratorSpec, result: CollectivesResult) -> AcceleratorSpec:
    """`hardware` with its measured all-reduce (latency, bus bandwidth) in place of the datasheet link.

    The probe runs its ranks inside one node, so the fit replaces the intra-node link; a file measured on
    more ranks than the row's `gpus_per_node` replaces the cross-node figures instead. A fit whose time
    did not grow with size keeps the datasheet bandwidth and takes the measured latency.
    """
    if "all_reduce" not in result.ops:
        raise CostmodelError("the collectives file has no 'all_reduce' fit; rerun `costmodel probe --collectives`")
    if result.processes < 2:
        raise CostmodelError(f"the collectives file was measured on {result.processes} rank(s); it needs >= 2")
    fit = result.ops["all_reduce"].fit
    bandwidth = bus_bytes_per_s(fit, processes=result.processes)
    per_node = hardware.gpus_per_node
    label = f"measured all-reduce ({result.backend}, {result.processes} ranks, {result.device})"
    if per_node is not None and result.processes > per_node:
        return hardware.model_copy(update={
            "inter_node_bytes_per_s": bandwidth or hardware.inter_node_bytes_per_s or hardware.interconnect_bytes_per_s,
            "inter_node_latency_seconds": fit.latency_seconds,
            "inter_node": label,
            "inter_node_source": hardware.inter_node_source or label,
        })
    return hardware.model_copy(update={
        "allreduce_table": None,  # the measured fit replaces the bundled per-size curve too
        "interconnect_bytes_per_s": bandwidth or hardware.interconnect_bytes_per_s,
        # a measured bus bandwidth already includes the protocol overhead: the datasheet's achieved figure goes
        "interconnect_achieved_bytes_per_s": None if bandwidth else hardware.interconnect_achieved_bytes_per_s,
        "interconnect_achieved_source": None if bandwidth else hardware.interconnect_achieved_source,
        "link_latency_seconds": fit.latency_seconds,
        "interconnect": label,
    })


def tp_link(result: CollectivesResult, *, gpus: int) -> tuple[float | None, float] | None:
    """(link_bytes_per_s, link_latency_seconds) that make `roofline.allreduce_seconds` reproduce the measured
    all-reduce fit on `gpus` ranks, or None when the probe ran over another number of ranks (the fit does not
    transfer: the ring's step count and the links used change) or has no all-reduce. The bandwidth is
    `bus_bytes_per_s` (one formula); None when the fit has no size dependence (the datasheet link stays).
    """
    fitted = result.ops.get("all_reduce")
    if fitted is None or result.processes != gpus or gpus < 2:
        return None
    return bus_bytes_per_s(fitted.fit, processes=gpus), fitted.fit.latency_seconds
