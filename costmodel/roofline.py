"""The roofline step function: one engine step (prefill or decode) -> seconds, FLOPs, bytes, bound.

One formula, one place. `step_arrays` holds every op's FLOPs and bytes and works on numpy arrays or
plain floats (broadcasting), so the scalar `step` (prefill and decode alike) and the grid evaluator
(`costmodel.grid`) run the same arithmetic.

Symbols (DESIGN.md): B sequences, T new tokens per sequence, C tokens already cached, N GPUs (tensor
parallel), b_w bytes per weight, b_kv bytes per KV element, b_act = 2 bytes per activation.
Per op: seconds = max(FLOPs / (peak * eff_compute), bytes / (hbm_bytes_per_s * eff_memory)); the step
is the sum over ops plus a fixed overhead plus tensor-parallel all-reduces. Summing per-op maxima (rather
than max of the totals) is deliberate: a decode step's MLP can be compute-bound while its attention is
memory-bound, and kernels run one after another. Refs: Scaling Book "All About Transformer Inference";
kipply "Transformer Inference Arithmetic"; Horace He "Making Deep Learning Go Brrrr".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np

from costmodel.catalog.links import tp_link
from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.comm import allreduce_seconds as allreduce_seconds  # re-exported; the formula lives there
from costmodel.dtypes import ACTIVATION_BYTES_PER_ELEMENT, op_peaks, precision_kwargs

# A float or a numpy array of any broadcastable shape: every formula here runs on both (grids pass arrays).
FloatOrArray: TypeAlias = float | np.ndarray
Bound = Literal["compute", "memory", "overhead"]
OP_NAMES: tuple[str, ...] = ("qkv_proj", "attention", "o_proj", "mlp", "experts", "lm_head")
LOGIT_BYTES = 4.0  # fp32 logits written per vocab entry


@dataclass(frozen=True)
class Efficiency:
    """Achieved fractions of peak and fixed costs; datasheet defaults or a calibration's fit."""

    eff_compute: float
    eff_memory: float
    overhead_seconds_per_step: float
    # Small GEMMs run below peak: effective eff_compute = eff_compute * m / (m + this), m = rows (tokens),
    # for m >= 2 (a 1-row GEMV is exempt; see gemm_saturation). 0 keeps eff_compute constant (the
    # datasheet default); calibration fits it (CPU MKL, see docs/probes.md).
    compute_half_saturation_tokens: float = 0.0
    # Small GEMMs that stream their weights once per row, up to this many rows (see weight_rereads);
    # 1 = weights read once per step (GPUs, the default); calibration fits it (CPU MKL, docs/probes.md).
    weight_reads_max_rows: float = 1.0
    # Share of the tensor-parallel all-reduce time the serving engine hides behind compute or fuses away
    # (the engine profile's tp_comm_overlap_fraction, catalog/engines); 0 = every all-reduce on the
    # critical path, the pre-profile behaviour.
    comm_overlap_fraction: float = 0.0
    source: str = "datasheet defaults"

    @classmethod
    def from_accelerator(cls, hardware: AcceleratorSpec) -> Efficiency:
        """The catalog's default efficiencies for this accelerator."""
        return cls(
            eff_compute=hardware.eff_compute,
            eff_memory=hardware.eff_memory,
            overhead_seconds_per_step=hardware.overhead_seconds_per_step,
            source=f"datasheet defaults for {hardware.id}",
        )


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


def expected_distinct_experts(*, experts: float, experts_per_token: float, routed_tokens: FloatOrArray) -> FloatOrArray:
    """Experts touched by `routed_tokens` tokens if routing is uniform: E * (1 - (1 - k/E)^n)."""
    if experts <= 0:
        return 0.0 * routed_tokens
    return experts * (1.0 - (1.0 - experts_per_token / experts) ** routed_tokens)


@dataclass(frozen=True)
class StepWork:
    """What one step computes, summed over the sequences in it (floats or broadcastable arrays).

    A uniform batch (B sequences x T new tokens at context C) comes from `uniform_work`; the serving
    simulator sums mixed steps (prefill chunks + decode tokens) into the same shape.
    """

    tokens: FloatOrArray  # new tokens in the step: rows of every projection GEMM
    logit_rows: FloatOrArray  # sequences that emit a token this step (lm_head rows)
    full_pairs: FloatOrArray  # (query, key) pairs in one full-attention layer
    sliding_pairs: FloatOrArray  # (query, key) pairs in one sliding-window layer
    full_cached_tokens: FloatOrArray  # cached tokens read by one full-attention layer
    sliding_cached_tokens: FloatOrArray  # cached tokens read by one sliding-window layer


def uniform_work(shape: ModelShape, *, batch: FloatOrArray, new_tokens: FloatOrArray, context_tokens: FloatOrArray) -> StepWork:
    """B sequences each adding T tokens after C cached ones (prefill: T = prompt; decode: T = 1)."""
    # Causal attention: new token i (0..T-1) sees C + i + 1 keys -> T*C + T(T+1)/2 pairs per sequence.
    full_pairs = batch * (new_tokens * context_tokens + new_tokens * (new_tokens + 1) / 2.0)
    window = shape.sliding_window_tokens
    if window:
        # Query i sees min(C + i + 1, W) keys: the first k = clip(W - C, 0, T) queries see C + i + 1,
        # the rest see W -> k*C + k(k+1)/2 + (T - k)*W per sequence (exact, vectorized).
        k = np.clip(window - context_tokens, 0.0, new_tokens)
        sliding_pairs = batch * (k * context_tokens + k * (k + 1) / 2.0 + (new_tokens - k) * window)
        sliding_cached = batch * np.minimum(context_tokens, window)
    else:
        sliding_pairs = 0.0 * full_pairs
        sliding_cached = 0.0 * full_pairs
    return StepWork(
        tokens=batch * new_tokens,
        logit_rows=batch + 0.0 * new_tokens,
        full_pairs=full_pairs,
        sliding_pairs=sliding_pairs,
        full_cached_tokens=batch * context_tokens,
        sliding_cached_tokens=sliding_cached,
    )


def op_flops_and_bytes(
    shape: ModelShape,
    work: StepWork,
    *,
    weight_bytes_per_param: FloatOrArray,
    kv_bytes_per_element: FloatOrArray,
    gpus: FloatOrArray,
    lm_head_weight_bytes_per_param: FloatOrArray | None = None,
) -> tuple[tuple[FloatOrArray, ...], tuple[FloatOrArray, ...]]:
    """FLOPs and bytes per GPU of each op in OP_NAMES for one step (arrays broadcast); the lm_head may store
    other weights than the blocks (None = the same; fp8/fp4 checkpoints keep it 16-bit, dtypes.OpPrecision)."""
    head_b_w = weight_bytes_per_param if lm_head_weight_bytes_per_param is None else lm_head_weight_bytes_per_param
    tokens = work.tokens
    b_act = ACTIVATION_BYTES_PER_ELEMENT
    d = shape.hidden
    layers = shape.layers
    act_linear = layers * tokens * 2.0 * d * b_act  # read input + write output of each projection

    qkv_flops = 2.0 * tokens * layers * shape.qkv_params_per_layer
    qkv_bytes = layers * shape.qkv_params_per_layer * weight_bytes_per_param + act_linear
    o_flops = 2.0 * tokens * layers * shape.o_params_per_layer
    o_bytes = layers * shape.o_params_per_layer * weight_bytes_per_param + act_linear

    attn_flops = shape.attn_flops_per_pair_per_layer * (
        shape.full_attention_layers * work.full_pairs + shape.sliding_attention_layers * work.sliding_pairs
    )
    kv_per_token = shape.kv_elements_per_token_per_layer * kv_bytes_per_element  # bytes, one layer
    cached_read = (
        shape.full_attention_layers * work.full_cached_tokens
        + shape.sliding_attention_layers * work.sliding_cached_tokens
    )
    # GQA KV heads split across TP ranks (replicated once N > g); an MLA latent is replicated on all.
    kv_split = np.minimum(gpus, shape.kv_heads) if shape.kv_shardable else 1.0
    kv_bytes = kv_per_token * (cached_read + layers * tokens) * gpus / kv_split
    q_o_act = layers * tokens * 2.0 * shape.heads * shape.head_dim * b_act
    attn_bytes = kv_bytes + q_o_act

    mlp_params = shape.dense_mlp_layers * shape.dense_mlp_params_per_layer
    mlp_flops = 2.0 * tokens * mlp_params
    mlp_bytes = mlp_params * weight_bytes_per_param + shape.dense_mlp_layers * tokens * 2.0 * d * b_act

    touched = expected_distinct_experts(
        experts=shape.experts, experts_per_token=shape.experts_per_token, routed_tokens=tokens
    )
    moe_static = shape.shared_expert_params_per_layer + shape.router_params_per_layer
    exp_flops = 2.0 * tokens * shape.moe_layers * (shape.experts_per_token * shape.expert_params + moe_static)
    exp_bytes = shape.moe_layers * (
        (touched * shape.expert_params + moe_static) * weight_bytes_per_param + tokens * 2.0 * d * b_act
    )

    # Logits only for the last position of each sequence (engines skip the rest in prefill).
    head_flops = 2.0 * work.logit_rows * shape.lm_head_params
    head_bytes = shape.lm_head_params * head_b_w + work.logit_rows * shape.vocab * LOGIT_BYTES

    flops = (qkv_flops, attn_flops, o_flops, mlp_flops, exp_flops, head_flops)
    bytes_ = (qkv_bytes, attn_bytes, o_bytes, mlp_bytes, exp_bytes, head_bytes)
    return tuple(f / gpus for f in flops), tuple(b / gpus for b in bytes_)


def weight_bytes_touched(
    shape: ModelShape, *, tokens: FloatOrArray, weight_bytes_per_param: FloatOrArray, gpus: FloatOrArray,
    lm_head_weight_bytes_per_param: FloatOrArray | None = None,
) -> tuple[FloatOrArray, ...]:
    """Weight bytes per GPU each op in OP_NAMES reads whatever the tokens are, in OP_NAMES order.

    The weight terms of `op_flops_and_bytes` with no tokens in the step: projections, dense MLP and lm_head
    read all their weights; the experts op reads its shared experts and router (the routed experts a token
    picks are counted per token in `op_flops_and_bytes`, `expected_distinct_experts`); attention multiplies
    no weights. `tokens` only sets the broadcast shape. `step_arrays` multiplies these by `weight_rereads`.
    """
    zero = 0.0 * tokens
    head_b_w = weight_bytes_per_param if lm_head_weight_bytes_per_param is None else lm_head_weight_bytes_per_param
    moe_static = shape.shared_expert_params_per_layer + shape.router_params_per_layer
    weights = (
        zero + shape.layers * shape.qkv_params_per_layer * weight_bytes_per_param,
        zero,
        zero + shape.layers * shape.o_params_per_layer * weight_bytes_per_param,
        zero + shape.dense_mlp_layers * shape.dense_mlp_params_per_layer * weight_bytes_per_param,
        zero + shape.moe_layers * (moe_static * weight_bytes_per_param),
        zero + shape.lm_head_params * head_b_w,
    )
    return tuple(w / gpus for w in weights)


def gemm_saturation(*, gemm_rows: FloatOrArray, half_saturation_tokens: FloatOrArray) -> FloatOrArray:
    """Share of eff_compute a weight GEMM with `gemm_rows` rows (tokens in the step) reaches.

    m / (m + half) for m >= 2: a fixed per-call cost (packing the weight panel, filling tiles) that only
    many rows amortise. A single row is a GEMV: it streams the weights once with no such cost, so it keeps
    the full eff_compute (it is memory-bound anyway). half = 0 gives 1 everywhere (the datasheet default);
    `costmodel calibrate` fits it (docs/probes.md).
    """
    rows = np.maximum(gemm_rows, 1.0)
    return np.where(rows <= 1.0, 1.0, rows / (rows + half_saturation_tokens))


def op_gemm_rows(work: StepWork) -> tuple[FloatOrArray, ...]:
    """Rows of each op's weight GEMM, in OP_NAMES order: every new token goes through the projections,
    MLP and experts; one row per sequence through the lm_head; attention multiplies no weights."""
    tokens = work.tokens
    return (tokens, 0.0 * tokens, tokens, tokens, tokens, work.logit_rows)


def weight_rereads(*, gemm_rows: FloatOrArray, weight_reads_max_rows: FloatOrArray) -> FloatOrArray:
    """Extra passes over an op's weights: min(rows, R) - 1 (0 for R = 1, the default).

    Some GEMM libraries run a GEMM of a few rows as one pass over the weights per row: on the project's
    CPU (MKL, fp32, AMD Zen 3) decode at batch 2 and 4 costs about 2x and 4x batch 1, then levels off
    (the decode rows of examples/probe-cpu.json, docs/probes.md). `costmodel calibrate` fits R.
    """
    return np.minimum(np.maximum(gemm_rows, 1.0), weight_reads_max_rows) - 1.0


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
) -> StepArrays:
    """Step time from the per-op roofline; every argument may be a float or a broadcastable array. Attention
    and the lm_head may run at other peaks than the linear layers' (`dtypes.op_peaks`; None = the same)."""
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
    peaks = op_peaks(peak_flops_per_s, attention=attention_peak_flops_per_s, lm_head=lm_head_peak_flops_per_s)
    rates = tuple(peak * eff_c for peak in peaks)
    bytes_per_s = hbm_bytes_per_s * eff_memory
    op_seconds = tuple(np.maximum(f / r, b / bytes_per_s) for f, b, r in zip(flops, bytes_, rates, strict=True))
    comm = allreduce_seconds(
        shape, tokens=tokens, gpus=gpus, link_bytes_per_s=link_bytes_per_s, link_latency_seconds=link_latency_seconds,
        overlap_fraction=comm_overlap_fraction,
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
    precision = hardware.op_precision(weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    link = tp_link(hardware, gpus=gpus)
    raw = step_arrays(
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
    )
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
