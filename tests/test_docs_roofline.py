"""docs/roofline.md, number by number: each figure on the page recomputed from the catalog and the engine.

A Claim pairs a snippet of the page (a sentence fragment or a table row, copied verbatim) with values
computed here and the format the page prints them in. The test asserts that each formatted value lies in
its snippet and that the snippet lies in the page. Where the page writes the arithmetic out, the same
snippet carries two claims, the written-out arithmetic and the engine's figure, so they must agree to the
printed digits. `test_every_number_on_the_page_is_claimed` fails when a number is added to the page
without a claim, and `test_reproduce_*` run the page's CLI commands through `costmodel.cli.main`.

Sources: shapes from each model's config.json (costmodel/catalog/models/*.yaml); H100 SXM datasheet
peaks (costmodel/catalog/accelerators.yaml); gpt-fast measurements (costmodel/data/reference_measurements.csv);
PyTorch blog "Accelerating Generative AI with PyTorch II: GPT, Fast" (2023-11-30) for the weight-only
kernel factors.
"""

from __future__ import annotations

import csv
import inspect
import json
import math
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from costmodel import dtypes
from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.catalog.links import intra_node_bytes_per_s
from costmodel.cli import main
from costmodel.dtypes import BYTES_PER_ELEMENT, WEIGHT_KERNEL_BANDWIDTH_FACTOR
from costmodel.estimate import estimate
from costmodel.memory import (
    MAX_BATCHED_TOKENS,
    RESERVE_FRACTION,
    activation_bytes_per_gpu,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    plan_memory,
)
from costmodel.ops import expected_distinct_experts
from costmodel.roofline import OpCost, StepResult, step
from costmodel.validation import read_reference_rows

DOC = Path(__file__).resolve().parents[1] / "docs" / "roofline.md"
XLA_ALLREDUCE = Path(__file__).resolve().parents[1] / "costmodel" / "data" / "xla_allreduce_throughput.csv"
Value = float | int | str
Fmt = Callable[[Value], str]


# ---- how the page prints numbers -------------------------------------------------------------------
def n0(v: Value) -> str:
    """8,030,261,248"""
    return f"{float(v):,.0f}"


def fixed(digits: int, suffix: str = "") -> Fmt:
    return lambda v: f"{float(v):,.{digits}f}{suffix}"


def ms(digits: int = 2) -> Fmt:
    return lambda v: f"{float(v) * 1e3:.{digits}f} ms"


def us(digits: int) -> Fmt:
    return lambda v: f"{float(v) * 1e6:.{digits}f} us"


def gb(digits: int = 2) -> Fmt:
    return lambda v: f"{float(v) / 1e9:.{digits}f} GB"


def pct(digits: int = 1) -> Fmt:
    return lambda v: f"{float(v) * 100:.{digits}f}%"


def sci(digits: int, exponent: int) -> Fmt:
    """'1.56e10' for (2, 10); '989.4e12' for (1, 12)."""
    return lambda v: f"{float(v) / 10**exponent:.{digits}f}e{exponent}"


def sig(digits: int) -> Fmt:
    """Significant digits, as the Reproduce table prints JSON floats: 0.02762."""
    return lambda v: f"{float(v):.{digits}g}"


def text(v: Value) -> str:
    return str(v)


@dataclass(frozen=True)
class Claim:
    snippet: str  # verbatim text of the page
    value: Value  # recomputed here
    fmt: Fmt  # how the page prints it
    what: str  # for the test id


CLAIMS: list[Claim] = []
SNIPPETS: list[str] = []  # every snippet, including those whose numbers are inputs only
FACTS: list[tuple[str, bool]] = []  # the page's qualitative statements (bounds, fits), checked by a test


def fact(statement: str, holds: bool) -> None:
    """Register a qualitative statement of the page and whether the engine agrees."""
    FACTS.append((statement, bool(holds)))


def claim(snippet: str, *pairs: tuple[str, Value, Fmt]) -> None:
    """Register a snippet and the (name, value, format) figures it shows."""
    SNIPPETS.append(snippet)
    for what, value, fmt in pairs:
        CLAIMS.append(Claim(snippet=snippet, value=value, fmt=fmt, what=what))


# ---- the running example ------------------------------------------------------------------------------
H100 = load_accelerator("h100-sxm")
SPEC_8B = load_model("llama-3.1-8b")
S8 = derive_shape(SPEC_8B)
EST = estimate("llama-3.1-8b", "h100-sxm", batch=1, prompt_tokens=1024, output_tokens=256)
BF16 = BYTES_PER_ELEMENT["bf16"]
GIB = 2**30


def op(result: StepResult, name: str) -> OpCost:
    """One op group of a step, by name."""
    return next(o for o in result.ops if o.name == name)


def build_intro() -> None:
    # Units line: definitions, checked verbatim.
    claim("GB = 10^9 B, TB/s = 10^12 B/s, ms = 10^-3 s, us = 10^-6 s. GiB (2^30 B)")
    claim("a 1,024-token prompt and 256 output tokens", ("prompt", EST.prompt_tokens, n0), ("output", EST.output_tokens, n0))
    claim(
        "W = 3.35e12 B/s, F = 989.4e12 FLOP/s (bf16, dense), 80 GiB = 85,899,345,920 B of HBM,",
        ("W", H100.hbm_bytes_per_s, sci(2, 12)),
        ("F bf16", H100.peak_flops_per_s["bf16"], sci(1, 12)),
        ("HBM GiB", H100.memory_bytes / GIB, fixed(0, " GiB")),
        ("HBM bytes", H100.memory_bytes, n0),
    )
    claim(
        "eff_compute = 0.55, eff_memory = 0.70, t_o = 0.4 ms, NVLink 450e9 B/s per direction, link latency 20 us.",
        ("eff_compute", H100.eff_compute, fixed(2)),
        ("eff_memory", H100.eff_memory, fixed(2)),
        ("overhead", H100.overhead_seconds_per_step, ms(1)),
        ("link", H100.interconnect_bytes_per_s, sci(0, 9)),
        ("link latency", H100.link_latency_seconds, us(0)),
    )
    claim("An all-reduce moves 370e9 B/s of that", ("achieved", intra_node_bytes_per_s(H100), sci(0, 9)))


def build_parameters() -> None:
    d, h, g, dh, inter, vocab, layers = (
        SPEC_8B.hidden_size, SPEC_8B.num_attention_heads, SPEC_8B.kv_heads, SPEC_8B.head_dim_resolved,
        SPEC_8B.intermediate_size, SPEC_8B.vocab_size, SPEC_8B.num_hidden_layers,
    )
    claim(
        "L = 32,\nd = 4,096, h = 32, g = 8, d_h = d / h = 128, I = 14,336, V = 128,256",
        ("L", layers, n0), ("d", d, n0), ("h", h, n0), ("g", g, n0), ("d_h", dh, n0), ("I", inter, n0),
        ("V", vocab, n0),
    )
    fact("Llama 3.1 8B: input embedding and lm_head not tied", not SPEC_8B.tie_word_embeddings)
    # Written-out counts (Llama-3.1-8B config.json), each next to the engine's ModelShape field.
    embedding = 128256 * 4096
    q = 4096 * 4096
    kv_proj = 2 * 4096 * 8 * 128
    o_proj = 32 * 128 * 4096
    mlp = 3 * 4096 * 14336
    per_layer = q + kv_proj + o_proj + mlp
    norms = (2 * 32 + 1) * 4096
    total = embedding + 32 * per_layer + norms + embedding
    claim("| input embedding | V x d = 128,256 x 4,096 | 525,336,576 |",
          ("embedding", embedding, n0), ("engine embedding", S8.embedding_params, n0))
    claim("| q projection, per layer | d x h x d_h = 4,096 x 4,096 | 16,777,216 |", ("q", q, n0))
    claim("| k and v projections, per layer | 2 x d x g x d_h = 2 x 4,096 x 1,024 | 8,388,608 |",
          ("kv proj", kv_proj, n0), ("engine kv proj", S8.qkv_params_per_layer - q, n0), ("g d_h", g * dh, n0))
    claim("| o projection, per layer | h x d_h x d = 4,096 x 4,096 | 16,777,216 |",
          ("o", o_proj, n0), ("engine o", S8.o_params_per_layer, n0))
    claim("| SwiGLU MLP, per layer | 3 x d x I = 3 x 4,096 x 14,336 | 176,160,768 |",
          ("mlp", mlp, n0), ("engine mlp", S8.dense_mlp_params_per_layer, n0))
    layer_engine = S8.qkv_params_per_layer + S8.o_params_per_layer + S8.dense_mlp_params_per_layer
    claim("| one layer | sum of the four rows above | 218,103,808 |", ("layer", per_layer, n0), ("engine layer", layer_engine, n0))
    claim("| all layers | 32 x 218,103,808 | 6,979,321,856 |", ("layers", 32 * per_layer, n0), ("engine layers", S8.layers * layer_engine, n0))
    claim("| RMSNorm weights | (2L + 1) x d = 65 x 4,096 | 266,240 |", ("norms", norms, n0), ("engine norms", S8.norm_params, n0),
          ("2L+1", 2 * layers + 1, n0))
    claim("| lm_head | V x d | 525,336,576 |", ("lm_head", S8.lm_head_params, n0))
    claim("| **P** | | **8,030,261,248** |", ("P", total, n0), ("engine P", S8.total_params, n0))
    # HF model card: "Model size 8.03B params" (published_total_params in the catalog).
    claim('P = 8.03e9, the "8.03B"', ("P 3 digits", S8.total_params, sci(2, 9)), ("published", SPEC_8B.published_total_params or 0, sci(2, 9)))
    weights = 8030261248 * 2
    claim("P x b_w = 8,030,261,248 x 2 B = 16,060,522,496 B = **16.06 GB**.",
          ("weights", weights, n0), ("engine weights", EST.memory.weights_bytes, n0),
          ("weights GB", EST.memory.weights_bytes, gb(2)), ("b_w", BF16, fixed(0, " B")))
    claim("the MLP is 80.8% of each layer, and the two vocabulary matrices together are 13.1% of P.",
          ("mlp share", mlp / per_layer, pct(1)), ("vocab share", 2 * S8.embedding_params / S8.total_params, pct(1)))
    claim("An 8B model in bf16 is 16 GB, 18.7% of an 80 GiB H100.",
          ("weights round", EST.memory.weights_bytes, gb(0)), ("share of HBM", EST.memory.weights_bytes / H100.memory_bytes, pct(1)))


def build_kv() -> None:
    kv = kv_bytes_per_token(S8, kv_bytes_per_element=BF16)
    claim("2 x L x g x d_h x b_kv = 2 x 32 x 8 x 128 x 2 B = **131,072 B** (128 KiB).",
          ("kv napkin", 2 * 32 * 8 * 128 * 2, n0), ("kv engine", kv, n0), ("KiB", kv / 1024, fixed(0, " KiB")))
    seq = kv_bytes_per_sequence(S8, context_tokens=1280, kv_bytes_per_element=BF16)
    claim("A 1,280-token sequence (1,024 prompt + 256 output) holds 1,280 x 131,072 B = 167,772,160 B = 0.168 GB.",
          ("seq napkin", 1280 * 131072, n0), ("seq engine", seq, n0), ("seq GB", seq, gb(3)),
          ("context", EST.memory.context_tokens, n0))
    claim("The weights weigh as much as 95.7 such sequences.", ("weights/seq", EST.memory.weights_bytes / seq, fixed(1)))
    mha = 2 * 32 * 32 * 128 * 2
    claim("(g = h = 32) it would be 524,288 B per token, 4x more.", ("mha", mha, n0), ("ratio", mha / kv, fixed(0, "x")))
    ds_spec = load_model("deepseek-v3")
    ds = derive_shape(ds_spec)
    ds_kv = kv_bytes_per_token(ds, kv_bytes_per_element=BF16)
    claim("one compressed latent (kv_lora_rank = 512) plus a shared\n  rotary key (64)",
          ("lora", ds_spec.kv_lora_rank or 0, n0), ("rope", ds_spec.qk_rope_head_dim or 0, n0))
    claim("L x (kv_lora_rank + rope) x b_kv = 61 x (512 + 64) x 2 B = **70,272 B**",
          ("mla napkin", 61 * (512 + 64) * 2, n0), ("mla engine", ds_kv, n0), ("ds layers", ds.layers, n0))
    claim("for a 671B-parameter model", ("ds P published", ds_spec.published_total_params or 0, lambda v: f"{float(v) / 1e9:.0f}B"))
    # Full MHA for DeepSeek-V3: K has qk_nope + qk_rope = 128 + 64 = 192 dims, V has 128, over 128 heads.
    ds_mha = 61 * 128 * (192 + 128) * 2
    claim("Full multi-head K (192 dims) and\n  V (128 dims) for its 128 heads would be 61 x 128 x (192 + 128) x 2 B = 4,997,120 B, 71x more.",
          ("k dims", (ds_spec.qk_nope_head_dim or 0) + (ds_spec.qk_rope_head_dim or 0), n0),
          ("v dims", ds_spec.v_head_dim or 0, n0), ("heads", ds_spec.num_attention_heads, n0),
          ("ds mha", ds_mha, n0), ("ratio", ds_mha / ds_kv, fixed(0, "x")))
    fact("MLA latent is replicated across TP ranks (kv_shardable false)", not ds.kv_shardable)
    mistral = derive_shape(load_model("mistral-7b"))
    windowed = kv_bytes_per_sequence(mistral, context_tokens=32768, kv_bytes_per_element=BF16)
    claim("windows every layer at 4,096 tokens, so at 32,768 tokens a sequence holds 4,096 x 131,072 B =\n  0.537 GB instead of 32,768 x 131,072 B = 4.29 GB.",
          ("window", mistral.sliding_window_tokens, n0), ("windowed napkin", 4096 * 131072, gb(3)),
          ("windowed engine", windowed, gb(3)), ("full", 32768 * 131072, gb(2)),
          ("mistral kv", kv_bytes_per_token(mistral, kv_bytes_per_element=BF16), n0))
    fact("mistral-7b windows every layer", mistral.sliding_attention_layers == mistral.layers)
    oss = derive_shape(load_model("gpt-oss-120b"))
    oss_seq = kv_bytes_per_sequence(oss, context_tokens=131072, kv_bytes_per_element=BF16)
    claim("`gpt-oss-120b` windows 18 of its 36 layers at\n  128 tokens, at 2 x 8 x 64 x 2 B = 2,048 B per layer per token",
          ("sliding layers", oss.sliding_attention_layers, n0), ("layers", oss.layers, n0),
          ("window", oss.sliding_window_tokens, n0), ("per layer napkin", 2 * 8 * 64 * 2, n0),
          ("per layer engine", oss.kv_elements_per_token_per_layer * BF16, n0))
    claim("2,048 B x (18 x 131,072 + 18 x 128) = 4.84 GB, against 9.66 GB if every layer were full.",
          ("oss napkin", 2048 * (18 * 131072 + 18 * 128), gb(2)), ("oss engine", oss_seq, gb(2)),
          ("oss full", 131072 * kv_bytes_per_token(oss, kv_bytes_per_element=BF16), gb(2)))


def build_decode() -> None:
    dec = EST.decode
    claim("C = 1,024 + 256 // 2 = 1,152 cached tokens, T = 1, B = 1.",
          ("C", 1024 + 256 // 2, n0), ("engine C", dec.context_tokens, n0), ("T", dec.new_tokens, n0), ("B", dec.batch, n0))
    touched = S8.total_params - S8.embedding_params
    claim("P - V x d = 8,030,261,248 - 525,336,576 = 7,504,924,672 params, x 2 B = 15.01 GB.",
          ("touched", touched, n0), ("engine touched", S8.weight_params_touched_per_step_dense, n0),
          ("touched GB", touched * BF16, gb(2)))
    matmul_params = S8.layers * (S8.qkv_params_per_layer + S8.o_params_per_layer + S8.dense_mlp_params_per_layer) + S8.lm_head_params
    weight_bytes = sum(
        S8.layers * p * BF16 for p in (S8.qkv_params_per_layer, S8.o_params_per_layer, S8.dense_mlp_params_per_layer)
    ) + S8.lm_head_params * BF16
    claim("(The engine's ops also leave out the 266,240 norm weights: 0.5 MB, below any digit shown here.)",
          ("norms", touched - matmul_params, n0), ("norm MB", (touched - matmul_params) * BF16 / 1e6, fixed(1, " MB")))
    kv_step = (1152 + 1) * 131072
    attn_kv_engine = op(dec, "attention").bytes - S8.layers * 2 * S8.heads * S8.head_dim * 2.0  # minus q in + o out
    claim("KV: read C cached tokens and write one: 1,153 x 131,072 B = 0.151 GB.",
          ("C+1", dec.context_tokens + 1, n0), ("kv step", kv_step, gb(3)), ("engine kv step", attn_kv_engine, gb(3)))
    activations = dec.bytes - weight_bytes - kv_step
    claim("Activations and fp32 logits: 2,610,176 B, 0.003 GB.", ("act", activations, n0), ("act GB", activations, gb(3)))
    claim("Total: **15.16 GB** per step (15,163,053,056 B).", ("bytes", dec.bytes, gb(2)), ("bytes exact", dec.bytes, n0),
          ("napkin bytes", touched * BF16 + kv_step, gb(2)))
    attn = 4 * 32 * 32 * 128 * 1153
    claim("2 x 7,504,658,432 = 15,009,316,864.", ("matmul params", matmul_params, n0), ("matmul flops", 2 * matmul_params, n0))
    claim("4 x L x h x d_h x (C + 1) = 4 x 32 x 32 x 128 x 1,153 = 604,504,064. Total 1.56e10 FLOP,\nagainst the napkin 2 x P = 1.61e10.",
          ("attn", attn, n0), ("engine attn", op(dec, "attention").flops, n0),
          ("flops", dec.flops, sci(2, 10)), ("napkin flops", 2 * matmul_params + attn, sci(2, 10)),
          ("2P", 2 * S8.total_params, sci(2, 10)))
    intensity = dec.flops / dec.bytes
    ridge = H100.peak_flops_per_s["bf16"] / H100.hbm_bytes_per_s
    claim("1.56e10 FLOP / 15.16 GB = **1.03 FLOP/B**.", ("flops", dec.flops, sci(2, 10)), ("bytes", dec.bytes, gb(2)),
          ("intensity", intensity, fixed(2, " FLOP/B")))
    claim("F / W = 989.4e12 / 3.35e12 = **295 FLOP/B**.", ("ridge", ridge, fixed(0, " FLOP/B")), ("ridge napkin", 989.4e12 / 3.35e12, fixed(0)))
    claim("Decode sits 287x below it: memory-bound.", ("below", ridge / intensity, fixed(0, "x")), ("bound", dec.bound, text))
    claim("weights / W = 16.06 GB / 3.35 TB/s = **4.79 ms** per token;",
          ("floor", EST.memory.weights_bytes / H100.hbm_bytes_per_s, ms(2)), ("napkin floor", 16.06e9 / 3.35e12, ms(2)))
    claim("15.16 GB / 3.35 TB/s = 4.53 ms.", ("touched floor", dec.bytes / H100.hbm_bytes_per_s, ms(2)))
    mem_s = dec.bytes / (H100.hbm_bytes_per_s * H100.eff_memory)
    claim("15.16 GB / (3.35 TB/s x 0.70) = 6.47 ms, + 0.40 ms = **6.87 ms** per token (TPOT), 145.6 tokens/s.",
          ("memory s", mem_s, ms(2)), ("engine memory s", dec.memory_seconds, ms(2)), ("overhead", dec.overhead_seconds, ms(2)),
          ("napkin tpot", mem_s + 0.4e-3, ms(2)), ("tpot", EST.tpot_seconds, ms(2)),
          ("tok/s", EST.decode_tokens_per_second, fixed(1, " tokens/s")))
    claim("The FLOPs take 1.56e10 / (989.4e12 x 0.55) = 0.029 ms, 0.4% of the step.",
          ("compute s", dec.compute_seconds, ms(3)), ("napkin compute", 1.56e10 / (989.4e12 * 0.55), ms(3)),
          ("share", dec.compute_seconds / dec.step_seconds, pct(1)))
    claim("15.16 GB / 6.87 ms / 3.35 TB/s = 65.9%.", ("mbu", dec.bytes / dec.step_seconds / H100.hbm_bytes_per_s, pct(1)))


def build_prefill() -> None:
    pre = EST.prefill
    claim("T = 1,024, C = 0, B = 1.", ("T", pre.new_tokens, n0), ("C", pre.context_tokens, n0), ("B", pre.batch, n0))
    claim("2 x P x T = 2 x 8,030,261,248 x 1,024 = 1.645e13,", ("2PT", 2 * S8.total_params * 1024, sci(3, 13)))
    claim("4 x L x h x d_h x T x T/2 = 4 x 32 x 32 x 128 x 1,024 x 512 = 2.749e11.",
          ("napkin attn", 4 * 32 * 32 * 128 * 1024 * 512, sci(3, 11)))
    claim("layers: 2 x T x 6,979,321,856 = 14,293,651,161,088",
          ("layers", 2 * 1024 * 6979321856, n0),
          ("engine layers", sum(op(pre, n).flops for n in ("qkv_proj", "o_proj", "mlp")), n0))
    claim("lm_head, one row: 2 x 525,336,576 = 1,050,673,152",
          ("head", 2 * 525336576, n0), ("engine head", op(pre, "lm_head").flops, n0))
    attn = 4 * 32 * 32 * 128 * 524800
    claim("attention over T(T + 1)/2 = 524,800 causal pairs: 4 x 32 x 32 x 128 x 524,800 = 275,146,342,400",
          ("pairs", 1024 * 1025 // 2, n0), ("attn", attn, n0), ("engine attn", op(pre, "attention").flops, n0))
    claim("total **1.457e13 FLOP**, 88.6% of the napkin 2 x P x T; attention is 1.9% of it.",
          ("flops", pre.flops, sci(3, 13)), ("napkin sum", 2 * 1024 * 6979321856 + 2 * 525336576 + attn, sci(3, 13)),
          ("ratio", pre.flops / (2 * S8.total_params * 1024), pct(1)), ("attn share", attn / pre.flops, pct(1)))
    claim("The step reads 17.29 GB", ("bytes", pre.bytes, gb(2)))
    claim("intensity is 1.457e13 / 17.29e9 = 843 FLOP/B, above the 295 FLOP/B ridge: compute-bound.",
          ("intensity", pre.flops / pre.bytes, fixed(0, " FLOP/B")), ("bound", pre.bound, text),
          ("ridge", H100.peak_flops_per_s["bf16"] / H100.hbm_bytes_per_s, fixed(0, " FLOP/B")),
          ("bytes", pre.bytes, sci(2, 9)))
    claim("1.457e13 FLOP / (989.4e12 FLOP/s x 0.55) = 26.77 ms of compute against 7.37 ms of memory\ntraffic.",
          ("compute", pre.compute_seconds, ms(2)), ("napkin compute", pre.flops / (989.4e12 * 0.55), ms(2)),
          ("memory", pre.memory_seconds, ms(2)))
    ops_sum = sum(o.seconds for o in pre.ops)
    claim("the engine gets 27.22 ms,\n+ 0.40 ms overhead = **27.62 ms** to the first token, 37,074 prompt tokens/s.",
          ("ops sum", ops_sum, ms(2)), ("ttft", EST.ttft_seconds, ms(2)), ("sum + overhead", ops_sum + 0.4e-3, ms(2)),
          ("prefill tok/s", 1024 / EST.prefill_seconds, n0))


def build_batching() -> None:
    ridge = H100.peak_flops_per_s["bf16"] / H100.hbm_bytes_per_s
    claim("B* = ridge x b_w / 2 = 295 x 2 / 2 = **295 sequences** (bf16, peak numbers).",
          ("B*", ridge * BF16 / 2, fixed(0, " sequences")), ("ridge", ridge, fixed(0)))
    ridge_eff = H100.peak_flops_per_s["bf16"] * H100.eff_compute / (H100.hbm_bytes_per_s * H100.eff_memory)
    mlp_flip = next(
        b for b in range(1, 1024)
        if op(step(S8, H100, batch=b, new_tokens=1, context_tokens=1152), "mlp").bound == "compute"
    )
    claim("(989.4e12 x 0.55) / (3.35e12 x 0.70) = 232 FLOP/B, so\nB* = 232; the engine's MLP op turns compute-bound at B = 235",
          ("ridge eff", ridge_eff, fixed(0, " FLOP/B")), ("B* eff", ridge_eff * BF16 / 2, fixed(0)), ("flip", mlp_flip, n0))
    fp8_ridge = H100.peak_flops_per_s["fp8"] / H100.hbm_bytes_per_s
    claim("In fp8 (b_w = 1 B and twice the FLOP/s) the ridge doubles to 591 FLOP/B and B* stays 295.",
          ("fp8 b_w", BYTES_PER_ELEMENT["fp8"], fixed(0, " B")), ("fp8 ridge", fp8_ridge, fixed(0, " FLOP/B")),
          ("fp8 B*", fp8_ridge * BYTES_PER_ELEMENT["fp8"] / 2, fixed(0)))
    attn_intensity = S8.attn_flops_per_pair_per_layer / (S8.kv_elements_per_token_per_layer * BF16)
    claim("2h / (g x b_kv) =\n2 x 32 / (8 x 2) = **4 FLOP/B**", ("napkin", 2 * 32 / (8 * 2), fixed(0, " FLOP/B")),
          ("engine", attn_intensity, fixed(0, " FLOP/B")))
    claim("the KV read takes over as B grows (C = 1,152, engine figures):", ("C", EST.decode.context_tokens, n0))
    rows = {
        1: "| 1 | 0.15 GB | 6.87 ms | 146 |",
        16: "| 16 | 2.42 GB | 7.85 ms | 2,038 |",
        64: "| 64 | 9.67 GB | 11.00 ms | 5,820 |",
        128: "| 128 | 19.34 GB | 15.19 ms | 8,425 |",
        256: "| 256 | 38.69 GB | 24.04 ms | 10,651 |",
        360: "| 360 | 54.41 GB | 33.61 ms | 10,711 |",
    }
    results = {}
    for batch, row in rows.items():
        r = step(S8, H100, batch=batch, new_tokens=1, context_tokens=1152)
        results[batch] = r
        kv_engine = op(r, "attention").bytes - batch * S8.layers * 2 * S8.heads * S8.head_dim * 2.0
        claim(row, ("kv", batch * 1153 * 131072, gb(2)), ("engine kv", kv_engine, gb(2)), ("tpot", r.step_seconds, ms(2)),
              ("tok/s", batch / r.step_seconds, n0))
        fact(f"decode step at B = {batch} stays memory-bound", r.bound == "memory")
    plan = EST.memory
    claim("Of 80 GiB = 85,899,345,920 B, the engine keeps a 10% reserve\n(vLLM's `gpu_memory_utilization` = 0.9), 8,589,934,592 B;",
          ("hbm", plan.hbm_bytes_per_gpu, n0), ("reserve pct", RESERVE_FRACTION, pct(0)),
          ("utilization", 1 - RESERVE_FRACTION, fixed(1)), ("reserve", plan.reserve_bytes_per_gpu, n0))
    workspace = 8192 * (4 * 4096 + 2 * 14336) * 2
    claim("the weights take 16,060,522,496 B; the\nactivation workspace for one 8,192-token step is 8,192 x (4 x 4,096 + 2 x 14,336) x 2 B =\n738,197,504 B.",
          ("weights", plan.weights_bytes_per_gpu, n0), ("tokens", MAX_BATCHED_TOKENS, n0), ("workspace", workspace, n0),
          ("engine workspace", activation_bytes_per_gpu(S8, gpus=1), n0))
    budget = 85899345920 - 8589934592 - 16060522496 - workspace
    claim("The KV budget left is 60,510,691,328 B = 60.51 GB.",
          ("budget", budget, n0), ("engine budget", plan.kv_budget_bytes_per_gpu, n0), ("budget GB", budget, gb(2)))
    claim("60,510,691,328 / 167,772,160 = 360.67, so **at most 360 sequences**.",
          ("ratio", budget / 167772160, fixed(2)), ("max", math.floor(budget / 167772160), n0), ("engine max", plan.max_batch, n0))
    ceilings = {
        c: plan_memory(S8, hbm_bytes_per_gpu=H100.memory_bytes, gpus=1, weight_bytes_per_param=BF16,
                       kv_bytes_per_element=BF16, context_tokens=c).max_batch
        for c in (8192, 32768, 131072)
    }
    claim("56 sequences of 8,192 tokens, 14 of 32,768 and 3 of 131,072.",
          ("8k", ceilings[8192], n0), ("32k", ceilings[32768], n0), ("128k", ceilings[131072], n0),
          ("8k napkin", budget // (8192 * 131072), n0))
    tput = {b: b / r.step_seconds for b, r in results.items()}
    claim("from B = 1 to 360, throughput rises\n73.5x while TPOT rises 4.9x.",
          ("tput ratio", tput[360] / tput[1], fixed(1, "x")),
          ("tpot ratio", results[360].step_seconds / results[1].step_seconds, fixed(1, "x")))
    claim("caps B at 360 for this workload.", ("max", plan.max_batch, n0))
    weights_read = sum(op(results[1], n).bytes for n in ("qkv_proj", "o_proj", "mlp", "lm_head"))
    claim("From B = 99 the cache outweighs the weights", ("crossover", weights_read / (1153 * 131072), fixed(0)))


def build_tensor_parallel() -> None:
    s70 = derive_shape(load_model("llama-3.1-70b"))
    claim("`llama-3.1-70b` has P = 70,553,706,496, 141.11 GB in bf16",
          ("P", s70.total_params, n0), ("weights", s70.total_params * BF16, gb(2)))
    one = plan_memory(s70, hbm_bytes_per_gpu=H100.memory_bytes, gpus=1, weight_bytes_per_param=BF16,
                      kv_bytes_per_element=BF16, context_tokens=1280)
    fact("llama-3.1-70b does not fit one 80 GiB H100", not one.fits)
    # One all-reduce from OpenXLA's sm_90 table (costmodel/data/xla_allreduce_throughput.csv, the 8-GPU node's
    # groups of N): the fastest time measured at the buffer's size or above, time = bytes / algbw, read here
    # from the CSV rows themselves (catalog/allreduce_curve.py is not called).
    table = [r for r in csv.DictReader(line for line in XLA_ALLREDUCE.read_text().splitlines() if not line.startswith("#"))
             if r["arch"] == "sm_90" and int(r["devices_per_group"]) * int(r["groups"]) == 8]

    def measured(n: int, size: float) -> float:
        return min(float(r["buffer_bytes"]) / float(r["algbw_bytes_per_s"]) for r in table
                   if int(r["devices_per_group"]) == n and float(r["buffer_bytes"]) >= size)

    decode_buffer = 8192 * 2
    floor = {n: measured(n, decode_buffer) for n in (2, 4, 8)}
    claim("At decode with batch 1 the buffer is 8,192 x 2 B = 16,384 B, where\nlatency rules: 14.34 us at N = 2, "
          "18.05 us at N = 4, 26.18 us at N = 8.", ("buffer", decode_buffer, n0), ("d", s70.hidden, n0),
          *((f"N={n}", floor[n], us(2)) for n in (2, 4, 8)))
    ests = {n: estimate("llama-3.1-70b", "h100-sxm", gpus=n, batch=1, prompt_tokens=1024, output_tokens=256) for n in (2, 4, 8)}
    claim("L x 2 = 160 all-reduces, 160 x 18.05 us = **2.89 ms** at N = 4.",
          ("allreduces", s70.layers * 2, n0), ("per", floor[4], us(2)), ("napkin", 160 * floor[4], ms(2)),
          ("engine", ests[4].decode.comm_seconds, ms(2)))
    ring = 2 * 3 / 4 * decode_buffer
    link = intra_node_bytes_per_s(H100)
    per_allreduce = ring / link + H100.link_latency_seconds
    claim("2 x 3/4 x 16,384 B / 370e9 B/s = 0.066 us, against 20 us of latency: 160 x 20.07 us = 3.21 ms.",
          ("buffer", decode_buffer, n0), ("time", ring / link, us(3)), ("latency", H100.link_latency_seconds, us(0)),
          ("per", per_allreduce, us(2)), ("napkin", 160 * per_allreduce, ms(2)))
    claim("Batch 1, 1,024 -> 256 tokens on `h100-sxm`, engine figures:", ("prompt", 1024, n0))
    rows = {
        2: "| 2 | 70.55 GB | 29.72 ms | 2.29 ms | 32.41 ms | 27 |",
        4: "| 4 | 35.28 GB | 14.86 ms | 2.89 ms | 18.15 ms | 393 |",
        8: "| 8 | 17.64 GB | 7.43 ms | 4.19 ms | 12.02 ms | 1,125 |",
    }
    for n, row in rows.items():
        e = ests[n]
        claim(row, ("weights/GPU", e.memory.weights_bytes_per_gpu, gb(2)), ("napkin weights/GPU", s70.total_params * BF16 / n, gb(2)),
              ("memory", e.decode.memory_seconds, ms(2)), ("comm", e.decode.comm_seconds, ms(2)),
              ("napkin comm", 160 * floor[n], ms(2)), ("tpot", e.tpot_seconds, ms(2)), ("max batch", e.memory.max_batch, n0))
    prefill_buffer = 1024 * 8192 * 2
    claim("at N = 4, 1,024 x 8,192 x 2 B = 16,777,216 B,\na size the table measured: 152.77 us, x 160 = 24.44 ms of "
          "the 90.10 ms TTFT", ("buffer", prefill_buffer, n0), ("time", measured(4, prefill_buffer), us(2)),
          ("napkin", 160 * measured(4, prefill_buffer), ms(2)), ("engine", ests[4].prefill.comm_seconds, ms(2)),
          ("ttft", ests[4].ttft_seconds, ms(2)))
    claim("2 x 3/4 x 16,777,216 B / 370e9 B/s = 68.0 us + 20 us).",
          ("buffer", prefill_buffer, n0), ("time", 2 * 3 / 4 * prefill_buffer / link, us(1)),
          ("latency", H100.link_latency_seconds, us(0)))
    # gpt-fast README (commit 32971d31): Llama-3.1-70B bf16, TP8 on A100-80GB (330 W cap), batch 1.
    measured = next(
        float(r["value"]) for r in read_reference_rows()
        if r["model"] == "Llama-3.1-70B" and r["precision"] == "BF16" and r["n_gpus"] == "8"
        and r["metric"] == "decode_tokens_per_second" and r["hardware"].startswith("A100")
    )
    predicted = estimate("llama-3.1-70b", "a100-80gb", gpus=8, batch=1, prompt_tokens=5, output_tokens=200).decode_tokens_per_second
    claim("gpt-fast reports 58.78 tokens/s for Llama 3.1 70B bf16 at batch 1 on\n8 A100s (330 W cap); the engine predicts 63.32 tokens/s, 7.7% high (the a100-80gb row has no measured\ntable: the ring formula).",
          ("measured", measured, fixed(2)), ("predicted", predicted, fixed(2)), ("error", predicted / measured - 1, pct(1)))
    claim("4.19 ms here, 34.8% of TPOT at N = 8.",
          ("comm", ests[8].decode.comm_seconds, ms(2)), ("share", ests[8].decode.comm_seconds / ests[8].tpot_seconds, pct(1)))


def build_moe() -> None:
    spec = load_model("mixtral-8x7b")
    mx = derive_shape(spec)
    claim("E = 8 experts per layer, k = 2 routed per token, 32 MoE layers, each expert\n3 x 4,096 x 14,336 = 176,160,768 params.",
          ("E", mx.experts, n0), ("k", mx.experts_per_token, n0), ("layers", mx.moe_layers, n0),
          ("expert napkin", 3 * 4096 * 14336, n0), ("expert engine", mx.expert_params, n0))
    claim("P = 46.70e9 stored, P_act = 12.88e9 used per token (Mistral\npublishes 46.7B and 12.9B).",
          ("P", mx.total_params, sci(2, 9)), ("P_act", mx.active_params, sci(2, 9)),
          ("published P", spec.published_total_params or 0, lambda v: f"{float(v) / 1e9:.1f}B"),
          ("published P_act", spec.published_active_params or 0, lambda v: f"{float(v) / 1e9:.1f}B"))
    touched = {n: expected_distinct_experts(experts=8, experts_per_token=2, routed_tokens=n) for n in (1, 4, 64)}
    claim("- n = 1: 8 x (1 - 0.75) = 2.00", ("1", 8 * (1 - 0.75), fixed(2)), ("engine", touched[1], fixed(2)),
          ("1-k/E", 1 - 2 / 8, fixed(2)))
    claim("- n = 4: 8 x (1 - 0.75^4) = 5.47", ("4", 8 * (1 - 0.75**4), fixed(2)), ("engine", touched[4], fixed(2)))
    claim("- n = 64: 8 x (1 - 0.75^64) = 8.00", ("64", 8 * (1 - 0.75**64), fixed(2)), ("engine", touched[64], fixed(2)))
    expert_bytes = {n: 32 * t * 176160768 * 2 for n, t in touched.items()}
    claim("32 x experts touched x 176,160,768 x 2 B: 22.55 GB at batch 1,\n61.66 GB at batch 4, 90.19 GB at batch 64 (every expert).",
          ("1", expert_bytes[1], gb(2)), ("4", expert_bytes[4], gb(2)), ("64", expert_bytes[64], gb(2)),
          ("all", 32 * 8 * 176160768 * 2, gb(2)))
    h200 = load_accelerator("h200")
    claim("On `h200` (141 GiB holds the 93.41 GB of\nweights), C = 1,152:",
          ("hbm", h200.memory_bytes / GIB, fixed(0, " GiB")), ("weights", mx.total_params * BF16, gb(2)))
    mx_plan = plan_memory(mx, hbm_bytes_per_gpu=h200.memory_bytes, gpus=1, weight_bytes_per_param=BF16,
                          kv_bytes_per_element=BF16, context_tokens=1280)
    fact("mixtral-8x7b fits batch 64 on one h200", mx_plan.max_batch >= 64)
    rows = {
        1: "| 1 | 22.55 GB | 8.03 ms | 124 |",
        4: "| 4 | 61.66 GB | 19.81 ms | 202 |",
        64: "| 64 | 90.19 GB | 31.04 ms | 2,062 |",
    }
    for batch, row in rows.items():
        r = step(mx, h200, batch=batch, new_tokens=1, context_tokens=1152)
        expert_op = op(r, "experts")
        act = mx.moe_layers * batch * 2 * mx.hidden * 2.0
        claim(row, ("expert bytes", expert_op.bytes - act - mx.moe_layers * mx.router_params_per_layer * BF16, gb(2)),
              ("napkin", expert_bytes[batch], gb(2)), ("tpot", r.step_seconds, ms(2)), ("tok/s", batch / r.step_seconds, n0))


def build_per_op() -> None:
    def row(result: StepResult) -> tuple[float, float]:
        ops_sum = sum(o.seconds for o in result.ops)
        return ops_sum, max(result.compute_seconds, result.memory_seconds)

    dec1 = step(S8, H100, batch=1, new_tokens=1, context_tokens=1152)
    dec256 = step(S8, H100, batch=256, new_tokens=1, context_tokens=1152)
    for snippet, result, bounds in (
        ("| decode, B = 1 (all ops memory-bound) | 6.47 ms | 6.47 ms | 0.00 ms |", dec1, {"memory"}),
        ("| prefill, T = 1,024 (lm_head memory-bound) | 27.22 ms | 26.77 ms | 0.45 ms |", EST.prefill, {"compute", "memory"}),
        ("| decode, B = 256 (q/k/v, MLP compute-bound) | 23.64 ms | 23.18 ms | 0.45 ms |", dec256, {"compute", "memory"}),
    ):
        ops_sum, max_totals = row(result)
        fact(f"sum of per-op maxima >= max of totals: {snippet}", ops_sum >= max_totals * (1 - 1e-12))
        diff = max(ops_sum - max_totals, 0.0)  # float noise would print "-0.00 ms" when they are equal
        claim(snippet, ("sum", ops_sum, ms(2)), ("max", max_totals, ms(2)), ("diff", diff, ms(2)))
        fact(f"op bounds of {snippet}", {o.bound for o in result.ops} == bounds)
    fact("prefill lm_head is memory-bound", op(EST.prefill, "lm_head").bound == "memory")
    fact("decode B = 256: q/k/v and MLP compute-bound, the rest memory-bound",
         {o.name for o in dec256.ops if o.bound == "compute"} == {"qkv_proj", "mlp"})
    head = op(EST.prefill, "lm_head")
    claim("1.05 GB of weights for 1.05e9 FLOP", ("bytes", S8.lm_head_params * BF16, gb(2)), ("flops", head.flops, sci(2, 9)))


def build_efficiencies() -> None:
    a100 = load_accelerator("a100-80gb")
    # gpt-fast README (commit 32971d31): Llama-2-7B bf16 batch 1 on one A100, achieved 1,397.31 GB/s.
    gpt_fast_gb_s = next(
        float(r["value"]) for r in read_reference_rows()
        if r["model"] == "Llama-2-7B" and r["precision"] == "BF16" and r["n_gpus"] == "1"
        and r["metric"].startswith("achieved_memory_bandwidth")
    )
    claim("gpt-fast measured 1,397 GB/s of the A100's 2,039 GB/s (330 W cap) for\n  Llama 2 7B bf16 at batch 1, 68.5%",
          ("peak", a100.hbm_bytes_per_s / 1e9, n0), ("mbu", 1397 / 2039, pct(1)), ("measured", gpt_fast_gb_s, n0))
    fact("a100 efficiency_reason cites gpt-fast 1,397 GB/s, 68.5%, ~72% MBU",
         all(s in a100.efficiency_reason for s in ("1,397", "68.5%", "~72% MBU")))
    claim("quotes\n  ~72% MBU); Databricks reports 55-60% MBU at batch 1.")
    fact("h100 efficiency_reason cites Databricks 55-60%", "55-60%" in H100.efficiency_reason)
    measured = next(
        float(r["value"]) for r in read_reference_rows()
        if r["model"] == "Llama-2-7B" and r["precision"] == "BF16" and r["n_gpus"] == "1"
        and r["metric"] == "decode_tokens_per_second"
    )
    predicted = estimate("llama-2-7b", "a100-80gb", batch=1, prompt_tokens=5, output_tokens=200).decode_tokens_per_second
    claim("the engine predicts\n  103.1 tokens/s for that run on `a100-80gb`; gpt-fast measured 104.9 tokens/s, 1.7% higher.",
          ("predicted", predicted, fixed(1)), ("measured", measured, fixed(1)), ("gap", measured / predicted - 1, pct(1)))
    claim("- **eff_compute = 0.55**: whole-model prefill MFU; large cuBLAS GEMMs alone reach 70-75% of the",
          ("h100", H100.eff_compute, fixed(2)), ("a100", a100.eff_compute, fixed(2)))
    fact("h100 efficiency_reason cites cuBLAS 70-75%", "70-75%" in H100.efficiency_reason)
    claim("`l4` uses 0.45 (its 72 W cap lowers\n  clocks) and `mi300x` 0.40",
          ("l4", load_accelerator("l4").eff_compute, fixed(2)), ("l4 W", load_accelerator("l4").tdp_watts, fixed(0, " W")),
          ("mi300x", load_accelerator("mi300x").eff_compute, fixed(2)))
    claim("- **t_o = 0.4 ms per step**", ("overhead", H100.overhead_seconds_per_step, ms(1)))
    claim("(bf16 107, int8 157.4,\n  int4 202.1 tokens/s)")
    fact("costmodel/dtypes.py derives its factors from the same blog figures",
         "bf16 107 tok/s, int8 157.4 tok/s,\n# int4 g32 202.1 tok/s" in inspect.getsource(dtypes))
    int4_bytes = BYTES_PER_ELEMENT["int4"]
    claim("(2x for int8; 2 / 0.625 = 3.2x for int4 with group 32,\n  whose scale and zero add 4/32 B per weight)",
          ("int4 bytes", int4_bytes, fixed(3)), ("int4 ratio", BF16 / int4_bytes, fixed(1, "x")),
          ("int8 ratio", BF16 / BYTES_PER_ELEMENT["int8"], fixed(0, "x")))
    # PyTorch blog (2023-11-30), Llama-2-7B on one A100: bf16 107, int8 157.4, int4 g32 202.1 tokens/s.
    claim("int8 157.4 / 107 / 2 = 0.74, int4 202.1 / 107 / 3.2 =\n  0.59.",
          ("int8", 157.4 / 107 / 2, fixed(2)), ("engine int8", WEIGHT_KERNEL_BANDWIDTH_FACTOR["int8"], fixed(2)),
          ("int4", 202.1 / 107 / 3.2, fixed(2)), ("engine int4", WEIGHT_KERNEL_BANDWIDTH_FACTOR["int4"], fixed(2)))
    claim("streams int8 as 1 / 0.74 = 1.35 B and int4 as 0.625 / 0.59 = 1.06 B per\n  weight.",
          ("int8", 1 / WEIGHT_KERNEL_BANDWIDTH_FACTOR["int8"], fixed(2)),
          ("int4", int4_bytes / WEIGHT_KERNEL_BANDWIDTH_FACTOR["int4"], fixed(2)))
    tpot = {
        wd: estimate("llama-3.1-8b", "h100-sxm", weight_dtype=wd, batch=1, prompt_tokens=1024, output_tokens=256).tpot_seconds
        for wd in ("bf16", "int8", "int4", "fp8")
    }
    claim("(1,024 -> 256): bf16 6.87 ms, int8 4.79 ms, int4 3.86 ms,\n  and fp8 (W8A8 on Hopper's fp8 tensor cores, no kernel factor; the lm_head stays bf16, as NVIDIA's fp8\n"
          "  checkpoints keep it, `dtypes.lm_head_weight_dtype`) 3.89 ms.",
          *((wd, t, ms(2)) for wd, t in tpot.items()))
    fact("fp8 has no weight-only kernel factor", "fp8" not in WEIGHT_KERNEL_BANDWIDTH_FACTOR)


def build_reproduce() -> None:
    contract = EST.contract()
    flag: Callable[[str], Fmt] = lambda name: (lambda v: f"--{name} {v}")  # noqa: E731
    claim("costmodel estimate --model llama-3.1-8b --hardware h100-sxm --batch 1 --prompt-tokens 1024 --output-tokens 256 --json",
          ("batch", EST.batch, flag("batch")), ("prompt", EST.prompt_tokens, flag("prompt-tokens")),
          ("output", EST.output_tokens, flag("output-tokens")))
    claim("costmodel estimate --model llama-3.1-70b --hardware h100-sxm --gpus 4 --batch 1 --prompt-tokens 1024 --output-tokens 256 --json",
          ("gpus", 4, flag("gpus")), ("prompt", EST.prompt_tokens, flag("prompt-tokens")))
    claim("| `prefill_seconds` = `ttft_seconds` | 0.02762 |", ("prefill", contract["prefill_seconds"], sig(4)))
    claim("| `decode_step_seconds` = `tpot_seconds` | 0.006866 |", ("tpot", contract["tpot_seconds"], sig(4)))
    claim("| `decode_tokens_per_second` | 145.6 |", ("tok/s", contract["decode_tokens_per_second"], fixed(1)))
    claim("| `weights_bytes` | 16060522496 |", ("weights", contract["weights_bytes"], lambda v: f"{float(v):.0f}"))
    claim("| `kv_bytes_per_token` | 131072 |", ("kv", contract["kv_bytes_per_token"], lambda v: f"{float(v):.0f}"))
    claim("| `max_batch` | 360 |", ("max", contract["max_batch"], text))
    claim("| `fits` | true |", ("fits", json.dumps(contract["fits"]), text))
    claim("| `prefill_bound` | compute |", ("bound", contract["prefill_bound"], text))
    claim("| `decode_bound` | memory |", ("bound", contract["decode_bound"], text))
    e70 = estimate("llama-3.1-70b", "h100-sxm", gpus=4, batch=1, prompt_tokens=1024, output_tokens=256)
    claim("The second prints `tpot_seconds` 0.01815 and `max_batch` 393.",
          ("tpot", e70.tpot_seconds, sig(4)), ("max", e70.memory.max_batch, text))


for _build in (build_intro, build_parameters, build_kv, build_decode, build_prefill, build_batching,
               build_tensor_parallel, build_moe, build_per_op, build_efficiencies, build_reproduce):
    _build()


# ---- tests --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("item", CLAIMS, ids=[f"{c.what}:{c.snippet[:40]}" for c in CLAIMS])
def test_claim_matches_the_engine(item: Claim) -> None:
    shown = item.fmt(item.value)
    assert shown in item.snippet, f"{item.what}: computed {shown!r}, the page says {item.snippet!r}"


@pytest.mark.parametrize(("statement", "holds"), FACTS, ids=[s for s, _ in FACTS])
def test_fact_holds_in_the_engine(statement: str, holds: bool) -> None:
    assert holds, statement


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s[:50] for s in SNIPPETS])
def test_snippet_is_on_the_page(doc: str, snippet: str) -> None:
    assert snippet in doc, f"docs/roofline.md no longer contains {snippet!r}"


# A number preceded by a letter, '.', '-', '_' or '/' is part of a name (llama-3.1-8b, bf16, 55-60%, 4/32).
NUMBER = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
# Numbers that are names, not figures: the model's marketing size in its own name.
NOT_FIGURES = {"Llama 3.1 8B": "3.1", "Llama 3.1 70B": "3.1", "Llama 2 7B": "2"}


def numbers(fragment: str) -> list[str]:
    for name in NOT_FIGURES:
        fragment = fragment.replace(name, " ")
    return [m.group(0).rstrip(",") for m in NUMBER.finditer(fragment)]


def test_every_number_on_the_page_is_claimed(doc: str) -> None:
    covered = {n for s in SNIPPETS for n in numbers(s)}
    # Numbers in a snippet that no Claim checks are inputs (shapes, batch sizes) written next to results.
    stray = sorted({n for n in numbers(doc) if n not in covered}, key=lambda n: (len(n), n))
    assert not stray, f"numbers on docs/roofline.md without a claim in this test: {stray}"


def test_each_claimed_snippet_carries_a_check_or_is_a_definition() -> None:
    checked = {c.snippet for c in CLAIMS}
    unchecked = [s for s in SNIPPETS if s not in checked]
    # Definitions checked verbatim only: the unit line and figures quoted from sources (asserted above
    # against accelerators.yaml's efficiency_reason or the PyTorch blog comment in dtypes.py).
    assert len(unchecked) <= 3, unchecked


def reproduce_commands(doc: str) -> list[list[str]]:
    section = doc.split("## Reproduce", 1)[1]
    block = section.split("```", 2)[1]
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("costmodel estimate")]


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_reproduce_first_command_prints_the_page_values(doc: str, capsys: pytest.CaptureFixture[str]) -> None:
    commands = reproduce_commands(doc)
    assert commands[0] == [
        "estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "1",
        "--prompt-tokens", "1024", "--output-tokens", "256", "--json",
    ]
    out = run_cli(commands[0], capsys)
    table = dict(re.findall(r"^\| `(\w+)`(?: = `\w+`)? \| (\S+) \|$", doc.split("## Reproduce", 1)[1], flags=re.M))
    assert set(table) == {"prefill_seconds", "decode_step_seconds", "decode_tokens_per_second", "weights_bytes",
                          "kv_bytes_per_token", "max_batch", "fits", "prefill_bound", "decode_bound"}
    for key, shown in table.items():
        value = out[key]
        if isinstance(value, (bool, str)):
            assert json.dumps(value).strip('"') == shown, key
        elif "." in shown:
            assert float(value) == pytest.approx(float(shown), rel=6e-4), key  # printed to 4 significant digits
        else:
            assert float(value) == float(shown), key
    assert out["ttft_seconds"] == out["prefill_seconds"] and out["tpot_seconds"] == out["decode_step_seconds"]


def test_reproduce_second_command_prints_the_page_values(doc: str, capsys: pytest.CaptureFixture[str]) -> None:
    commands = reproduce_commands(doc)
    assert len(commands) == 2 and "--gpus" in commands[1]
    out = run_cli(commands[1], capsys)
    match = re.search(r"The second prints `tpot_seconds` ([\d.]+) and `max_batch` (\d+)\.", doc)
    assert match
    assert float(out["tpot_seconds"]) == pytest.approx(float(match.group(1)), rel=6e-4)
    assert out["max_batch"] == int(match.group(2))
