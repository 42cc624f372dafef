"""Number formats: bytes per element for weights and KV cache, and which tensor-core peak a dtype uses.

int8 and int4 are weight-only formats (gpt-fast / AWQ style): weights are stored small and
dequantized into bf16 matmuls, so they save bytes, not FLOPs. fp8 is W8A8 where the accelerator
has fp8 tensor cores (Hopper, Blackwell, MI300), else it falls back to bf16 compute.
"""

from __future__ import annotations

from typing import Literal

WeightDtype = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp32"]
KvDtype = Literal["bf16", "fp16", "fp8", "fp32"]

WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "int4", "fp32")
KV_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "fp32")

# Bytes per element. int4 packs two weights per byte; group scales (~1/32 extra for g=32 at fp16,
# i.e. +0.0625 B/param) are included because gpt-fast's int4 g32 reads them on every step.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5 + 2.0 / 32.0,
}

# Activations stay in 16-bit in every engine we model.
ACTIVATION_BYTES_PER_ELEMENT = 2.0


def compute_dtype(*, weight_dtype: str, peak_flops_per_s: dict[str, float]) -> str:
    """The tensor-core format the matmuls run in for a given weight format on this accelerator."""
    if weight_dtype == "fp8" and "fp8" in peak_flops_per_s:
        return "fp8"
    if weight_dtype == "fp32":
        return "fp32" if "fp32" in peak_flops_per_s else "bf16"
    return "bf16"
