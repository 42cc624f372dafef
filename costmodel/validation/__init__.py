"""Predicted vs published measurements (../shared/reference rows, copied into costmodel/data/).

Each comparison is a ValidationRow; `docs/validation.md` is generated from them by
`scripts/make_validation_doc.py`, and tests check the median errors against the targets.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from costmodel.catalog.engines import GENERIC_ENGINE_ID, load_engine
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.estimate import estimate
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.profile import EngineSettings, engine_settings

REFERENCE_CSV = Path(__file__).resolve().parents[1] / "data" / "reference_measurements.csv"

# Reference hardware strings -> catalog ids (the gpt-fast A100s were power-capped at 330 W; we use the
# stock a100-80gb datasheet and say so in docs/validation.md).
HARDWARE_IDS = {
    "A100-SXM-80GB (330W cap)": "a100-80gb",
    "H100-SXM-80GB": "h100-sxm",
    "H200-SXM-141GB": "h200",
    "H100-PCIe-80GB": "h100-pcie",
    "RTX 4090 24GB": "rtx-4090",
    "A100-SXM-80GB": "a100-80gb",
    "B200-180GB": "b200",
    "MI300X-192GB": "mi300x",  # MLPerf v4.1 rows (validation/mlperf.py)
    # TensorRT-LLM release/1.2 perf overview fp4 columns; the page names 288 GB (B300) and 192 GB (GB200) parts,
    # the catalog rows hold 270 GiB and 186 GiB (their cited datasheets): memory planning uses the catalog's.
    "B300-288GB": "b300",
    "GB200-192GB": "gb200",
    "RTX-PRO-6000-Server-96GB": "rtx-pro-6000",
}
MODEL_IDS = {
    "Llama-2-7B": "llama-2-7b",
    "Llama-2-70B": "llama-2-70b",
    "Llama-3.1-8B": "llama-3.1-8b",
    "Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "Llama-3.1-70B": "llama-3.1-70b",
    "Llama-3.1-405B": "llama-3.1-405b",
    "Mixtral-8x7B": "mixtral-8x7b",
    "Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "Llama-3.1-405B-Instruct": "llama-3.1-405b",
    "Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
}
# Precision strings -> our weight dtypes. Eager and speculative-decoding rows are not comparable
# (a non-compiled baseline and a different algorithm) and are listed as excluded.
PRECISIONS = {
    "BF16": "bf16",
    "FP8": "fp8",
    "INT8 weight-only": "int8",
    "INT4 weight-only g32": "int4",
    "INT4 weight-only (GPTQ)": "int4",
}


@dataclass(frozen=True)
class ValidationRow:
    """One published figure next to our prediction for the same configuration."""

    label: str
    model_id: str
    hardware_id: str
    gpus: int
    weight_dtype: str
    metric: str
    measured: float
    predicted: float
    source: str

    @property
    def error(self) -> float:
        """Signed relative error (predicted - measured) / measured."""
        return (self.predicted - self.measured) / self.measured


def read_reference_rows(path: Path = REFERENCE_CSV) -> list[dict[str, str]]:
    """Raw rows of the reference CSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def batch1_decode_rows(path: Path = REFERENCE_CSV) -> list[ValidationRow]:
    """gpt-fast / PyTorch-blog batch-1 decode tok/s vs `estimate` with default efficiencies."""
    result = []
    for row in read_reference_rows(path):
        if row["metric"] != "decode_tokens_per_second" or row["concurrency_or_batch"] != "1":
            continue
        if "eager" in row["scenario"] or "spec" in row["precision"] or "speculative" in row["scenario"]:
            continue
        model_id = MODEL_IDS.get(row["model"])
        hardware_id = HARDWARE_IDS.get(row["hardware"])
        dtype = PRECISIONS.get(row["precision"])
        if not (model_id and hardware_id and dtype):
            continue
        gpus = int(row["n_gpus"])
        # gpt-fast's default run: a ~5-token prompt then 200 new tokens.
        est = estimate(model_id, hardware_id, gpus=gpus, weight_dtype=dtype, batch=1, prompt_tokens=5, output_tokens=200)
        result.append(
            ValidationRow(
                label=f"{row['model']} {row['precision']} {row['hardware']} x{gpus}: {row['scenario']}",
                model_id=model_id,
                hardware_id=hardware_id,
                gpus=gpus,
                weight_dtype=dtype,
                metric="decode tok/s (batch 1)",
                measured=float(row["value"]),
                predicted=est.decode_tokens_per_second,
                source=row["source"],
            )
        )
    return result


def median_abs_error(rows: Sequence[ValidationRow]) -> float:
    """Median of |predicted - measured| / measured."""
    return statistics.median(abs(r.error) for r in rows)


# trtllm-bench's request counts per ISL/OSL in NVIDIA's perf overview ("Preparing a Dataset" table,
# TensorRT-LLM docs/source/performance/perf-overview.md, commit 00f37686).
TRTLLM_BENCH_REQUESTS = {
    (128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
    (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000,
}  # fmt: skip


def _round_up(value: float, step: int) -> int:
    return step * math.ceil(value / step)


def trtllm_bench_settings(
    *, model_id: str, hardware_id: str, input_tokens: int, output_tokens: int, gpus: int = 1,
    weight_bytes_per_param: float = 1.0, kv_bytes_per_element: float = 1.0,
) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) trtllm-bench picks for a model on `gpus` tensor-parallel GPUs.

    Its heuristic (tensorrt_llm/bench/build/tuning.py, calc_engine_setting + finetune_setting): requests
    that fit 95% of the memory of all GPUs left after the weights (1 B/param for fp8) at ISL + OSL tokens
    each (KV heads at least one per GPU; 1 B/element for fp8 KV), capped at 4096; tokens = that x
    (1 + ISL / OSL), capped at 32768; both rounded up on its grid. An engine setting, not a fit.
    """
    spec = load_model(model_id)
    gib = float(1 << 30)
    kv_heads = max(gpus, spec.kv_heads)  # "Each GPU in TP group has at least 1 kv head"
    kv_gib_per_token = 2 * spec.num_hidden_layers * kv_heads * spec.head_dim_resolved * kv_bytes_per_element / gib
    engine_gib = derive_shape(spec).total_params * weight_bytes_per_param / gib
    cache_gib = (load_accelerator(hardware_id).memory_bytes * gpus / gib - engine_gib) * 0.95
    raw_batch = min(cache_gib / (kv_gib_per_token * (input_tokens + output_tokens)), 4096)
    raw_tokens = min(raw_batch * (1 + input_tokens / output_tokens), 32768)
    if raw_batch < 256:
        batch = max(64, _round_up(raw_batch, 32))
    else:
        batch = _round_up(raw_batch, 128 if raw_batch < 1024 else 256)
    if raw_tokens < 4096:
        tokens = max(2048, _round_up(raw_tokens, 256))
    else:
        tokens = _round_up(raw_tokens, 512 if raw_tokens < 8192 else 1024)
    return batch, tokens


def trtllm_bench_engine(*, max_batched_tokens: int) -> EngineSettings:
    """The engine a trtllm-bench row runs under: the generic scheduler costs (an offline run, no HTTP server:
    0.4 ms per step, no per-request cost) with TensorRT-LLM's own KV memory rule from the trtllm profile,
    free_gpu_memory_fraction 0.90 of what the weights leave. NVIDIA's perf overview (commit 00f37686) says
    "In many cases, we also use a higher KV cache percentage by setting --kv_cache_free_gpu_mem_fraction 0.95
    ... than the default setting of 0.90"; which rows ran 0.95 is not stated, so the default is used."""
    trtllm = load_engine("trtllm")
    return replace(engine_settings(GENERIC_ENGINE_ID, max_batched_tokens=max_batched_tokens),
                   kv_memory_rule=trtllm.kv_memory_rule, kv_memory_fraction=trtllm.kv_memory_fraction)


def max_throughput_rows(path: Path = REFERENCE_CSV) -> list[ValidationRow]:
    """TensorRT-LLM trtllm-bench max throughput (llama-3.1-8b fp8, H100/H200 SXM) vs the serving simulator.

    Simulated as trtllm-bench runs: every request queued at t = 0 with fixed ISL/OSL, fp8 weights and
    fp8 KV (trtllm-bench forces fp8 KV for fp8 checkpoints), max batch and token budget from its
    heuristic, TRT-LLM's default GUARANTEED_NO_EVICT scheduling (reserve prompt + output at admission) and
    its KV memory rule (`trtllm_bench_engine`), default catalog efficiencies. Output tokens/s = all output tokens / time to the last token.
    """
    result = []
    for row in read_reference_rows(path):
        if row["metric"] != "total_output_throughput" or "trtllm-bench, requests at infinite rate" not in row["scenario"]:
            continue
        model_id, hardware_id = MODEL_IDS.get(row["model"]), HARDWARE_IDS.get(row["hardware"])
        if not (model_id and hardware_id) or row["precision"] != "FP8":
            continue
        isl, osl, gpus = int(row["input_len"]), int(row["output_len"]), int(row["n_gpus"])
        batch, tokens = trtllm_bench_settings(model_id=model_id, hardware_id=hardware_id, input_tokens=isl,
                                              output_tokens=osl)
        replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="fp8", kv_dtype="fp8",
                                engine=trtllm_bench_engine(max_batched_tokens=tokens))
        count = TRTLLM_BENCH_REQUESTS[(isl, osl)]
        run = simulate_requests(
            replica, arrival_seconds=np.zeros(count), prompt_tokens=np.full(count, isl),
            output_tokens=np.full(count, osl), kv_policy="reserve", max_num_seqs=min(batch, tokens),
        )
        result.append(
            ValidationRow(
                label=f"{row['model']} FP8 {row['hardware']} x{gpus}: ISL/OSL {isl}/{osl}",
                model_id=model_id,
                hardware_id=hardware_id,
                gpus=gpus,
                weight_dtype="fp8",
                metric="output tok/s (max throughput)",
                measured=float(row["value"]),
                predicted=run.output_tokens_per_second,
                source=row["source"],
            )
        )
    return result
