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

# Bytes per element. int4 packs two weights per byte; with group size 32 a bf16 scale and a bf16 zero
# point per group add 4/32 = 0.125 B/param, which gpt-fast's int4 g32 reads on every step.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5 + 4.0 / 32.0,
}

# Weight-only formats dequantize on CUDA cores inside the GEMV, so their kernels reach a smaller share
# of HBM bandwidth than a bf16 GEMV. Derived from the PyTorch blog "Accelerating Generative AI with
# PyTorch II: GPT, Fast" (2023-11-30) headline figures on one A100: bf16 107 tok/s, int8 157.4 tok/s,
# int4 g32 202.1 tok/s. Bytes per token fall 2x (int8) and 2/0.625 = 3.2x (int4), so the kernels run at
# 157.4/107/2 = 0.74 and 202.1/107/3.2 = 0.59 of the bf16 kernel's bandwidth. Engines with Marlin-class
# kernels do better: calibrate (`costmodel calibrate`) to replace these.
WEIGHT_KERNEL_BANDWIDTH_FACTOR: dict[str, float] = {"int8": 0.74, "int4": 0.59}

# Activations stay in 16-bit in every engine we model.
ACTIVATION_BYTES_PER_ELEMENT = 2.0


def streamed_weight_bytes_per_param(weight_dtype: str) -> float:
    """Bytes per weight as the memory roofline sees them: stored bytes / kernel bandwidth factor."""
    return BYTES_PER_ELEMENT[weight_dtype] / WEIGHT_KERNEL_BANDWIDTH_FACTOR.get(weight_dtype, 1.0)


def compute_dtype(*, weight_dtype: str, peak_flops_per_s: dict[str, float]) -> str:
    """The tensor-core format the matmuls run in for a given weight format on this accelerator."""
    if weight_dtype == "fp8" and "fp8" in peak_flops_per_s:
        return "fp8"
    if weight_dtype == "fp32":
        return "fp32" if "fp32" in peak_flops_per_s else "bf16"
    return "bf16"
