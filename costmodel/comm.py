"""Tensor-parallel communication: the all-reduces a step of an N-GPU replica pays.

One concept, split out of the roofline: a Megatron-style tensor-parallel layer ends its attention and its
MLP with an all-reduce of the activations (Shoeybi et al. 2019, "Megatron-LM", section 3: two all-reduces
per layer in the forward pass). A ring all-reduce moves 2(N-1)/N of the buffer through every GPU's link
(Patarasuk and Yuan 2009; nccl-tests doc/PERFORMANCE.md calls this the bus bandwidth), so one costs
2(N-1)/N * tokens * d * b_act / link + the link's latency. The link (bandwidth, latency) comes from
`catalog.links.tp_link` (the achieved NVLink rate where a row cites one) or a measured collectives fit.
Where the link carries a measured curve (`allreduce_curve`: OpenXLA's all-reduce times by message size for
the row's GPU family and group size), one all-reduce of the tokens * d * b_act buffer costs the curve's time
at that size instead, latency included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from costmodel.catalog.allreduce_curve import curve_seconds
from costmodel.catalog.params import ModelShape
from costmodel.dtypes import ACTIVATION_BYTES_PER_ELEMENT

FloatOrArray: TypeAlias = float | np.ndarray
ALLREDUCES_PER_LAYER = 2  # after attention (o_proj) and after the MLP (down projection)


def allreduce_seconds(
    shape: ModelShape, *, tokens: FloatOrArray, gpus: FloatOrArray, link_bytes_per_s: FloatOrArray,
    link_latency_seconds: FloatOrArray, overlap_fraction: FloatOrArray = 0.0, curve: np.ndarray | Sequence[float] | None = None,
) -> FloatOrArray:
    """Tensor-parallel all-reduces left on the step: 2 per layer, each 2(N-1)/N * tokens * d * b_act over
    the link plus its latency (or, where `curve` is given, its measured time at that buffer size; a row of
    NaN keeps the formula), times (1 - overlap_fraction) for what the engine hides (0 = all serial)."""
    buffer_bytes = tokens * shape.hidden * ACTIVATION_BYTES_PER_ELEMENT
    one = 2.0 * (gpus - 1) / gpus * buffer_bytes / link_bytes_per_s + link_latency_seconds
    if curve is not None:
        measured = curve_seconds(buffer_bytes, curve)
        one = np.where(np.isnan(measured), one, measured)
    per_layer = ALLREDUCES_PER_LAYER * one
    return np.where(gpus > 1, shape.layers * per_layer, 0.0) * (1.0 - overlap_fraction)
