"""The MoE fp4 rows' section of docs/validation.md (issue 26 items 1 and 5): what moved them and what is left.

The small-active MoE models (gpt-oss-20b/120b, Qwen3-30B-A3B, 3-5B active) at TP1 on B200, GB200 and B300 are
predicted far faster than trtllm-bench measured. "Before" is static: the medians at main 3b67abc, before
mixed steps priced attention per phase (`serving/engine_steps.py`). "After" and the residual table are
computed from today's rows; the residual is 1 / measured - 1 / predicted throughput, the time per output
token the measurement spends beyond the simulated run, and divided by the model's MoE layers.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.ops import uniform_work
from costmodel.roofline import step_from_work
from costmodel.validation import categories as cats

MOE_FP4_MODELS = ("gpt-oss", "Qwen3-30B-A3B")
DATACENTER = ("B200", "GB200", "B300")
SHAPES = ("1024/1024", "1024/8192", "1024/32768", "8192/1024", "32768/1024")
# Medians at main 3b67abc (attention priced over the summed work of a mixed step): signed error by ISL/OSL,
# |error| of the held-out and tuning halves (rows).
BEFORE_SIGNED = {"1024/1024": 1.040, "1024/8192": 0.432, "1024/32768": 0.131, "8192/1024": 0.731, "32768/1024": 1.073}
BEFORE_HALVES = ((0.729, 20), (0.776, 19))
# One decode step broken into its parts for these rows (model id, hardware id, ISL, OSL).
STEP_ROWS = (("qwen3-30b-a3b", "b200", 1024, 1024), ("gpt-oss-20b", "b200", 1024, 1024),
             ("gpt-oss-120b", "gb200", 1024, 1024))


def _moe_rows(rows: Sequence[cats.CategoryRow]) -> list[cats.CategoryRow]:
    return [r for r in rows if r.error is not None and any(m in r.label for m in MOE_FP4_MODELS)
            and any(f" {hw}-" in r.label for hw in DATACENTER)]


def _shape(row: cats.CategoryRow) -> str:
    match = re.search(r"ISL/OSL (\d+/\d+)", row.label)
    assert match is not None
    return match.group(1)


def _moe_layers(label: str) -> int:
    model_id = cats.MODEL_IDS[label.split(" ")[0]]
    return int(derive_shape(load_model(model_id)).moe_layers)


def _residual_lines(moe: Sequence[cats.CategoryRow]) -> list[str]:
    lines = ["| row | split | measured | predicted | error | residual per output token | per MoE layer |",
             "|---|---|---|---|---|---|---|"]
    for r in moe:
        assert r.predicted is not None and r.error is not None
        residual = 1.0 / r.measured - 1.0 / r.predicted  # s per output token (TP1: per GPU = total)
        lines.append(f"| {r.label.split(' (trtllm')[0]} | {'held-out' if r.holdout else 'tuning'} | {r.measured:,.0f} | "
                     f"{r.predicted:,.0f} | {r.error:+.1%} | {residual * 1e6:.1f} us | "
                     f"{residual * 1e6 / _moe_layers(r.label):.2f} us |")
    return lines


def _step_line(model_id: str, hardware_id: str, isl: int, osl: int) -> str:
    """One decode step at the simulated run's mean batch, at the mean context, split by op."""
    run = cats.throughput_run_cached(model_id, hardware_id, 1, "FP4 (NVFP4)", isl, osl)
    hardware = load_accelerator(hardware_id)
    shape = derive_shape(load_model(model_id))
    work = uniform_work(shape, batch=run.mean_batch, new_tokens=1.0, context_tokens=isl + osl / 2.0)
    step = step_from_work(shape, hardware, work, weight_dtype="fp4", kv_dtype="fp8", gpus=1)
    ms = {op.name: op.seconds * 1e3 for op in step.ops}
    projections = ms.get("qkv_proj", 0.0) + ms.get("o_proj", 0.0)
    return (f"| {model_id} {hardware_id} {isl}/{osl} | {run.mean_batch:,.0f} | {step.step_seconds * 1e3:.1f} | "
            f"{ms.get('attention', 0.0):.1f} | {ms.get('experts', 0.0):.1f} | {projections:.1f} | "
            f"{ms.get('lm_head', 0.0):.1f} | {step.overhead_seconds * 1e3:.1f} |")


def _rows_per_expert() -> str:
    """Rows each routed expert's GEMM gets in the STEP_ROWS decode steps (mean batch x top-k / experts)."""
    parts = []
    for model_id, hardware_id, isl, osl in STEP_ROWS:
        run = cats.throughput_run_cached(model_id, hardware_id, 1, "FP4 (NVFP4)", isl, osl)
        shape = derive_shape(load_model(model_id))
        parts.append(f"{run.mean_batch * shape.experts_per_token / shape.experts:.0f} for {model_id}")
    return ", ".join(parts)


def moe_fp4_section(rows: Sequence[cats.CategoryRow]) -> list[str]:
    """Markdown lines: the MoE fp4 rows before -> after, their residual, one step's parts and the candidates."""
    moe = _moe_rows(rows)
    held = [abs(r.error) for r in moe if r.holdout and r.error is not None]
    tuning = [abs(r.error) for r in moe if not r.holdout and r.error is not None]
    signed = {s: statistics.median(r.error for r in moe if _shape(r) == s and r.error is not None) for s in SHAPES}
    (before_held, n_held), (before_tuning, n_tuning) = BEFORE_HALVES
    moved = "; ".join(f"{s} {BEFORE_SIGNED[s]:+.0%} -> {signed[s]:+.0%}" for s in SHAPES)
    return [
        "",
        "### MoE fp4 rows: what moved them and what is left (issue 26 items 1 and 5)",
        "",
        f"gpt-oss-20b/120b and Qwen3-30B-A3B at TP1 on B200, GB200 and B300, {len(moe)} rows. Median |error| "
        f"before (main 3b67abc) -> after: held-out {before_held:.1%} ({n_held}) -> {statistics.median(held):.1%} "
        f"({len(held)}), tuning {before_tuning:.1%} ({n_tuning}) -> {statistics.median(tuning):.1%} ({len(tuning)}). "
        f"Median signed error by ISL/OSL: {moved}.",
        "",
        "**What moved them: attention per phase in a mixed step.** A step with prefill chunks and decoding",
        "sequences priced attention as one op, max(compute, memory) over the summed work, so a chunk's",
        "compute-bound attention hid under the decoders' KV reads. TensorRT-LLM runs the context requests'",
        "attention kernel and then the generation requests' (cpp/tensorrt_llm/thop/attentionOp.cpp @00dbe288), so",
        "the two now add (`serving/engine_steps.py`; `tests/test_mixed_step_phases.py`). It matters most where",
        "attention is most of the work: long prompts on models with few active weights. Nothing is fitted to it;",
        "the fp4 fraction was refitted on its tuning half after it (0.57 -> 0.59).",
        "",
        "**What is left: short prompts with thousands of sequences in flight.** The measured runs spend this much",
        "more time per output token than the simulated ones (residual = 1 / measured - 1 / predicted):",
        "",
        *_residual_lines(moe),
        "",
        "At 1,024-token prompts the residual per MoE layer is within a factor of two across the 24-, 36- and",
        "48-layer models (0.3-0.7 us), while the residual per output token is not (8-11 us for gpt-oss-20b, 14-32 us",
        "for Qwen3-30B-A3B); it grows with the prompt, where prefill is still short of the measurement. One decode step at the",
        "simulated run's mean batch, in ms (roofline parts; attention is memory-bound KV reads there):",
        "",
        "| row | mean batch | step | attention | experts | qkv + o | lm_head | overhead |",
        "|---|---|---|---|---|---|---|---|",
        *(_step_line(*row) for row in STEP_ROWS),
        "",
        "Candidates, each sized against that residual (at 1024/1024: 0.3-0.7 us per output token per MoE layer,",
        "some 17-24 ms per decode step at the batches above):",
        "",
        "- Model configs: hidden, layers, heads, experts, top-k and expert width match the HF config.json of",
        "  openai/gpt-oss-20b, openai/gpt-oss-120b and Qwen/Qwen3-30B-A3B (the catalog files cite them); no error.",
        f"- Grouped expert GEMMs at M = tokens per expert (batch x top-k / experts: {_rows_per_expert()} in the",
        "  steps above). OpenXLA's matmul table has no fp4, no grouped GEMM and no m below 256; its per-GEMM t0",
        "  (5.75 us) is paid once per grouped launch, two",
        "  per layer (0.55 ms per Qwen3 step against a residual of ~24 ms). To close the gap the expert GEMMs",
        "  would have to run at ~6-20% of the rate the dense fit gives them: possible, but no public figure says so.",
        "- Routing, permute and finalize traffic: about 130 KB per token per layer for Qwen3-30B-A3B (top-8: the",
        "  permuted fp4 copy, FC1's bf16 output written and read, the activation, FC2's output written and read),",
        "  0.02 us at 5.6 TB/s against 0.39 us per MoE layer on B200: some 17 times too small.",
        "- Per-step CPU or launch cost: a constant per step would have to be ~24 ms at 1024/1024 but ~3 ms at",
        "  1024/32768 (Qwen3, B200): it does not fit. A CPU cost per sequence per step (Python bookkeeping in the",
        "  PyTorch backend) would be the same for every model, while the residual per output token is 2.4x larger",
        "  for Qwen3-30B-A3B than for gpt-oss-20b on B200, and the dense Llama 3.3 70B 1024/1024 rows on the same",
        "  parts leave -2.5 to +11.5 us per output token (the fitted fp4 fraction could absorb part of such a cost",
        "  there). It fits less well than a per-layer cost, and no public figure for it was found.",
        "- trtllm-bench's limits: gpt-oss's MXFP4 checkpoint maps to W4A8_MXFP4_MXFP8 on SM100",
        "  (`ModelConfig.get_mxfp4_quant_algo`, tensorrt_llm/_torch/model_config.py), which is not among",
        "  TUNED_QUANTS in tensorrt_llm/bench/build/build.py, so that version uses BuildConfig's defaults (max batch",
        "  2,048, max tokens 8,192) instead of the heuristic; with chunked prefill off (trtllm-bench's default) it",
        "  also raises max tokens to the longest prompt + max batch. Whether release/1.2 keeps that gate is not",
        "  established (its refactored bench/tuning/heuristics.py has none), so it is not applied; applied, it",
        "  moves the gpt-oss rows by -1 to +16 points and the fp4 held-out median from 19.5% to 25.3%.",
        "- gpt-oss keeps attention, router, embedding and lm_head in bf16 (modules_to_not_convert in its",
        "  config.json; TensorRT-LLM's exclude_modules likewise) while the catalog runs qkv/o at the fp4 rate: about",
        "  +1.3 ms on a 15 ms decode step at batch 2,208 (~8%), not the 2x. Not modelled (one weight format per",
        "  block in `dtypes.OpPrecision`).",
        "",
        "What would settle it: a kernel-level profile of one TP1 Qwen3-30B-A3B NVFP4 decode step at ~1,300",
        "sequences on a B200 under TensorRT-LLM 1.2 (the MoE module's time against its tokens), or a published",
        "MoE-module latency table by num_tokens for these shapes. Until then the MoE fp4 rows stay over-predicted",
        "and no factor is fitted to them.",
    ]
