"""Number formats: bytes per element for weights and KV cache, and which tensor-core peak a dtype uses.

int8 and int4 are weight-only formats (gpt-fast / AWQ style): weights are stored small and
dequantized into bf16 matmuls, so they save bytes, not FLOPs. fp8 is W8A8 where the accelerator
has fp8 tensor cores (Hopper, Blackwell, MI300), else it falls back to bf16 compute. fp4 (NVFP4 /
MXFP4) is W4A4 on fp4 tensor cores and exists only where the accelerator row lists an fp4 peak
(NVIDIA Blackwell, AMD CDNA 4 with MXFP4); weights or KV in fp4 elsewhere are refused
(`unsupported_dtype_reason`). Under fp8 and fp4 only the blocks' linear layers are quantized: the
embedding and lm_head stay 16-bit (HEAD_KEPT_16_BIT), in the step time and in memory alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

WeightDtype = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp32", "fp4"]
KvDtype = Literal["bf16", "fp16", "fp8", "fp32", "fp4"]

WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "int4", "fp32", "fp4")
KV_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "fp32", "fp4")

# Formats that need the accelerator's own tensor-core support (a `peak_flops_per_s` entry), for weights
# and for the KV cache alike: there is no dequantizing fallback we model for them.
NATIVE_ONLY_DTYPES: frozenset[str] = frozenset({"fp4"})

# Bytes per element. int4 packs two weights per byte; with group size 32 a bf16 scale and a bf16 zero
# point per group add 4/32 = 0.125 B/param, which gpt-fast's int4 g32 reads on every step.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5 + 4.0 / 32.0,
    # fp4 (E2M1) packs two elements per byte. Its block scales are left out, as fp8's per-tensor scales
    # are: MXFP4 adds one E8M0 byte per 32 elements (+1/32 B, 6% of 0.5 B; ROCm docs, "MXFP4 training
    # for Flux models", https://rocm.docs.amd.com/projects/primus/en/latest/04-technical-guides/
    # diffusion-models/mxfp4_training.html, checked 2026-12-01), so fp4 is exactly half of fp8 here.
    "fp4": 0.5,
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


# Which ops run in the weight format. NVIDIA's FP8 and NVFP4 checkpoints (ModelOpt, the ones TensorRT-LLM's perf
# overview runs) are made by quantizing "the weights and activations of Meta-Llama-3.1-405B-Instruct to FP8 [FP4]
# data type ... Only the weights and activations of the linear operators within transformers blocks are
# quantized" (model cards of nvidia/Llama-3.1-405B-Instruct-FP8 and nvidia/Llama-3.1-405B-Instruct-FP4,
# https://huggingface.co/nvidia/Llama-3.1-405B-Instruct-FP8 and .../Llama-3.1-405B-Instruct-FP4, read
# 2026-12-01). So the lm_head (outside the blocks) keeps 16-bit weights and bf16 matmuls, and attention's
# QK^T and PV products (not linear operators) run on the KV cache's format. gpt-fast's int8/int4 handlers
# replace every nn.Linear, the output layer included, so those formats keep a quantized lm_head.
HEAD_KEPT_16_BIT: frozenset[str] = frozenset({"fp8", "fp4"})


def lm_head_weight_dtype(weight_dtype: str) -> str:
    """The format the lm_head's weights are stored and multiplied in for a model stored in `weight_dtype`."""
    return "bf16" if weight_dtype in HEAD_KEPT_16_BIT else weight_dtype


def attention_compute_dtype(*, kv_dtype: str, peak_flops_per_s: dict[str, float]) -> str:
    """The tensor-core format attention's QK^T / PV products run in: the KV cache's, at most fp8.

    8-bit (and 4-bit) KV runs fp8 attention where the accelerator has fp8 tensor cores (no fp4 attention
    kernel is modelled: the products are not the quantized linear operators); 16-bit KV runs bf16; fp32 KV
    runs fp32 where listed.
    """
    if BYTES_PER_ELEMENT[kv_dtype] <= 1.0 and "fp8" in peak_flops_per_s:
        return "fp8"
    if kv_dtype == "fp32" and "fp32" in peak_flops_per_s:
        return "fp32"
    return "bf16"


def streamed_weight_bytes_per_param(weight_dtype: str) -> float:
    """Bytes per weight as the memory roofline sees them: stored bytes / kernel bandwidth factor."""
    return BYTES_PER_ELEMENT[weight_dtype] / WEIGHT_KERNEL_BANDWIDTH_FACTOR.get(weight_dtype, 1.0)


def unsupported_dtype_reason(*, weight_dtype: str, kv_dtype: str, peak_flops_per_s: dict[str, float]) -> str | None:
    """Why this accelerator cannot hold these formats (a flag and the fix), or None when it can."""
    for flag, dtype in (("--weight-dtype", weight_dtype), ("--kv-dtype", kv_dtype)):
        if dtype in NATIVE_ONLY_DTYPES and dtype not in peak_flops_per_s:
            return f"{flag} {dtype} needs {dtype} tensor cores, which it does not have; use fp8 or bf16"
    return None


def compute_dtype(*, weight_dtype: str, peak_flops_per_s: dict[str, float]) -> str:
    """The tensor-core format the matmuls run in for a given weight format on this accelerator."""
    if weight_dtype in NATIVE_ONLY_DTYPES and weight_dtype in peak_flops_per_s:
        return weight_dtype  # W4A4 on fp4 tensor cores; without them `unsupported_dtype_reason` refuses it
    if weight_dtype == "fp8" and "fp8" in peak_flops_per_s:
        return "fp8"
    if weight_dtype == "fp32":
        return "fp32" if "fp32" in peak_flops_per_s else "bf16"
    return "bf16"


def peak_of(*, dtype: str, peak_flops_per_s: dict[str, float]) -> float:
    """Dense peak FLOP/s the matmuls of a `dtype` model run at (its `compute_dtype`'s entry)."""
    return peak_flops_per_s[compute_dtype(weight_dtype=dtype, peak_flops_per_s=peak_flops_per_s)]


@dataclass(frozen=True)
class OpPrecision:
    """The formats one replica's ops run in: bytes per weight and per KV element, peak FLOP/s per op group."""

    weight_bytes_per_param: float  # the blocks' linear layers, as streamed (kernel bandwidth factor applied)
    lm_head_weight_bytes_per_param: float
    kv_bytes_per_element: float
    peak_flops_per_s: float  # the blocks' linear layers
    attention_peak_flops_per_s: float
    lm_head_peak_flops_per_s: float
    # The linear layers' GEMM efficiency fit by shape (catalog/gemm_efficiency.py): t = t0 + F / (P e_max) +
    # operand bytes / beta; NaN = no fit for this accelerator and format (the constant eff_compute).
    gemm_t0_seconds: float = float("nan")
    gemm_e_max: float = float("nan")
    gemm_operand_bytes_per_s: float = float("nan")
    gemm_operand_bytes_per_element: float = float("nan")

    @classmethod
    def of(
        cls, *, peak_flops_per_s: dict[str, float], weight_dtype: str, kv_dtype: str, fp4_peak_fraction: float = 1.0,
        gemm: Any = None,
    ) -> OpPrecision:
        """Bytes and peaks per op for weights in `weight_dtype` and KV in `kv_dtype` (lm_head and attention
        rules above) on an accelerator with these dense peaks; the caller has checked the formats exist.
        `fp4_peak_fraction` scales the linear layers' peak when they run in fp4 (the accelerator row's
        fp4_realized_peak_fraction; 1 = the datasheet peak)."""
        head = lm_head_weight_dtype(weight_dtype)
        attention = attention_compute_dtype(kv_dtype=kv_dtype, peak_flops_per_s=peak_flops_per_s)
        linear = compute_dtype(weight_dtype=weight_dtype, peak_flops_per_s=peak_flops_per_s)
        return cls(
            weight_bytes_per_param=streamed_weight_bytes_per_param(weight_dtype),
            lm_head_weight_bytes_per_param=streamed_weight_bytes_per_param(head),
            kv_bytes_per_element=BYTES_PER_ELEMENT[kv_dtype],
            peak_flops_per_s=peak_flops_per_s[linear] * (fp4_peak_fraction if linear == "fp4" else 1.0),
            attention_peak_flops_per_s=peak_flops_per_s[attention],
            lm_head_peak_flops_per_s=peak_of(dtype=head, peak_flops_per_s=peak_flops_per_s),
            **({} if gemm is None else {
                "gemm_t0_seconds": gemm.t0_seconds, "gemm_e_max": gemm.e_max,
                "gemm_operand_bytes_per_s": gemm.operand_bytes_per_s,
                "gemm_operand_bytes_per_element": BYTES_PER_ELEMENT[gemm.dtype]}),
        )


def precision_kwargs(precision: OpPrecision) -> dict[str, float]:
    """`roofline.step_arrays` keyword arguments for the formats in `precision` (bytes and peaks per op)."""
    return {
        "weight_bytes_per_param": precision.weight_bytes_per_param,
        "lm_head_weight_bytes_per_param": precision.lm_head_weight_bytes_per_param,
        "kv_bytes_per_element": precision.kv_bytes_per_element,
        "peak_flops_per_s": precision.peak_flops_per_s,
        "attention_peak_flops_per_s": precision.attention_peak_flops_per_s,
        "lm_head_peak_flops_per_s": precision.lm_head_peak_flops_per_s,
        "gemm_t0_seconds": precision.gemm_t0_seconds,
        "gemm_e_max": precision.gemm_e_max,
        "gemm_operand_bytes_per_s": precision.gemm_operand_bytes_per_s,
        "gemm_operand_bytes_per_element": precision.gemm_operand_bytes_per_element,
    }


def op_peaks(peak_flops_per_s: Any, *, attention: Any = None, lm_head: Any = None) -> tuple[Any, ...]:
    """Peak FLOP/s of each op group in ops.OP_NAMES order (qkv_proj, attention, o_proj, mlp, experts,
    lm_head): the linear layers' peak, attention's and the lm_head's own (None = the linear layers')."""
    attn = peak_flops_per_s if attention is None else attention
    head = peak_flops_per_s if lm_head is None else lm_head
    return (peak_flops_per_s, attn, peak_flops_per_s, peak_flops_per_s, peak_flops_per_s, head)
