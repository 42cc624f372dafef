"""Schema of the collectives probe (`costmodel probe --collectives`) and its alpha-beta fit.

Alpha-beta model (Hockney 1994, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3)): one collective of `bytes` takes latency_seconds + bytes / bytes_per_second,
fitted per op by least squares on the measured medians, both coefficients kept non-negative.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

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


def tp_link(result: CollectivesResult, *, gpus: int) -> tuple[float | None, float] | None:
    """(link_bytes_per_s, link_latency_seconds) that make `roofline.allreduce_seconds` reproduce the measured
    all-reduce fit on `gpus` ranks, or None when the probe ran over another number of ranks (the fit does not
    transfer: the ring's step count and the links used change) or has no all-reduce.

    The roofline charges each all-reduce ring_bytes / link + latency with ring_bytes = 2(N-1)/N * message;
    the fit is latency + message / bytes_per_second, so link = bytes_per_second * 2(N-1)/N. A fit without
    size dependence (bytes_per_second None) gives only the latency; the datasheet link stays.
    """
    fitted = result.ops.get("all_reduce")
    if fitted is None or result.processes != gpus or gpus < 2:
        return None
    bandwidth = fitted.fit.bytes_per_second
    link = None if bandwidth is None else bandwidth * 2.0 * (gpus - 1) / gpus
    return link, fitted.fit.latency_seconds
