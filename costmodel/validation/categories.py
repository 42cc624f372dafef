"""Reference measurements by category (issue 17): saturated, multi-GPU, fp4, MoE and online rows.

Each row of `costmodel/data/reference_measurements.csv` that belongs to a category is predicted with the
catalog's default efficiencies (nothing is fitted to these rows) or listed as not evaluated with the
reason (a model, accelerator or weight format the catalog lacks). A deterministic half of every category
is held out: a row's split is the parity of a hash of its configuration (never of its value), and
the held-out rows must never be used to tune an engine profile or an efficiency.
"""

from __future__ import annotations

import functools
import hashlib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from costmodel import dtypes
from costmodel.catalog.engines import load_engine
from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.simulation import arrival_times
from costmodel.validation import (
    HARDWARE_IDS,
    MODEL_IDS,
    REFERENCE_CSV,
    TRTLLM_BENCH_REQUESTS,
    read_reference_rows,
    trtllm_bench_settings,
)


@dataclass(frozen=True)
class Category:
    """One validation category and the target issue 17 sets for its median absolute error."""

    key: str
    title: str
    target_abs_error: float | None  # None: issue 17 sets no target


CATEGORIES: tuple[Category, ...] = (
    Category("saturated", "Saturated throughput, TensorRT-LLM, one GPU", 0.10),
    Category("multi_gpu", "Multi-GPU tensor-parallel throughput, TensorRT-LLM (TP2-TP8)", 0.20),
    Category("moe", "MoE models (Mixtral 8x7B, gpt-oss, DeepSeek-R1), TensorRT-LLM throughput", None),
    Category("fp4", "FP4 (NVFP4) on Blackwell, TensorRT-LLM throughput", None),
    Category("online_tpot", "Online TPOT / ITL at moderate load (SGLang, vLLM, TensorRT-LLM)", 0.15),
    Category("online_ttft", "Online TTFT at moderate load (SGLang, vLLM, TensorRT-LLM)", 0.25),
)

# Published errors of peer estimators. Source: this project's issue 17 (the table at its top: held-out
# saturated TensorRT-LLM rows run through aiconfigurator 0.12 and llm-analysis 0.2.2); not re-run here,
# and not on exactly these rows.
PEER_FIGURES: dict[str, str] = {
    "saturated": "aiconfigurator 0.12: 19%; llm-analysis 0.2.2: 45% (issue 17, 40 saturated TensorRT-LLM rows)",
}

MOE_MODELS = ("Mixtral", "Qwen3-30B-A3B", "Qwen3-235B", "DeepSeek", "gpt-oss", "Llama-4")
# Trtllm-bench precision strings -> (weight, KV) formats. FP8: "If you specify FP8 quantization, the KV
# cache will automatically be set to FP8" (perf-overview.md, commit 258c7540). FP4: fp8 KV is an
# unverified assumption (no stored page states the KV format of those runs).
THROUGHPUT_DTYPES = {"FP8": ("fp8", "fp8"), "FP4 (NVFP4)": ("fp4", "fp8")}
THROUGHPUT_METRICS = ("total_output_throughput", "output_throughput_per_gpu")
# trtllm-bench request counts for the release/1.2 shapes ("Number of Requests" table of that
# perf-overview.md version; the older shapes are in costmodel.validation.TRTLLM_BENCH_REQUESTS).
TRTLLM_BENCH_REQUESTS_V12 = {(1024, 1024): 3000, (8192, 1024): 1500, (1024, 8192): 1500, (32768, 1024): 1000,
                             (1024, 32768): 1000}

# ShareGPT rows are simulated with every request at the published mean lengths. Prompt: 229,711 input
# tokens over 1,000 ShareGPT prompts with the Llama-3.1 tokenizer (vllm-project/vllm PR #18566,
# 2025-05-22, https://github.com/vllm-project/vllm/pull/18566) -> 230. Output: the same README's offline
# table, 4,281.51 output tok/s / 22.03 req/s = 194 tokens per request (sgl-project/sglang
# benchmark/benchmark_vllm_060/README.md, commit 120affb9).
SHAREGPT_PROMPT_TOKENS = 230
SHAREGPT_OUTPUT_TOKENS = 194
ONLINE_METRICS = {
    "median_ttft_ms": ("online_ttft", "ttft", "p50"),
    "mean_ttft_ms": ("online_ttft", "ttft", "mean"),
    "median_tpot_ms": ("online_tpot", "tpot", "p50"),
    "mean_itl_ms": ("online_tpot", "tpot", "mean"),  # mean ITL over tokens ~ mean TPOT (no ITL output yet)
}


@dataclass(frozen=True)
class CategoryRow:
    """One published figure in a category, with our prediction or why there is none."""

    category: str
    label: str
    gpus: int
    precision: str
    metric: str
    measured: float
    predicted: float | None
    not_evaluated: str | None  # the reason, when predicted is None
    holdout: bool
    source: str

    @property
    def error(self) -> float | None:
        """Signed relative error (predicted - measured) / measured, None when not evaluated."""
        return None if self.predicted is None else (self.predicted - self.measured) / self.measured


ENGINES = ("SGLang", "vLLM", "TensorRT-LLM")


def engine_of(row: CategoryRow) -> str:
    """The serving engine an online row measured (throughput rows are all TensorRT-LLM)."""
    return next((name for name in ENGINES[:2] if name in row.label), "TensorRT-LLM")


def category_of(row: dict[str, str]) -> str | None:
    """The category a reference row belongs to (None: the batch-1 decode and CPU rows, reported apart)."""
    if row["metric"] in ONLINE_METRICS:
        return ONLINE_METRICS[row["metric"]][0]
    if row["metric"] not in THROUGHPUT_METRICS or "trtllm-bench" not in row["scenario"]:
        return None
    if row["precision"].startswith("FP4"):
        return "fp4"
    if any(name in row["model"] for name in MOE_MODELS):
        return "moe"
    return "multi_gpu" if int(row["n_gpus"]) > 1 else "saturated"


def is_holdout(row: dict[str, str]) -> bool:
    """Deterministic split: parity of a SHA-256 of the configuration fields (the value is not hashed)."""
    keys = ("model", "precision", "hardware", "n_gpus", "scenario", "input_len", "output_len", "metric")
    digest = hashlib.sha256("|".join(row[k] for k in keys).encode("utf-8")).digest()
    return digest[-1] % 2 == 1


def _ids(row: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    """(model id, hardware id, reason not evaluated)."""
    if " DEP" in row["scenario"]:
        return None, None, "attention data parallel + expert parallel (DEP) is not modelled"
    model_id, hardware_id = MODEL_IDS.get(row["model"]), HARDWARE_IDS.get(row["hardware"])
    if model_id is None:
        return None, None, f"model {row['model']} is not in the catalog"
    if hardware_id is None:
        return None, None, f"hardware {row['hardware']} is not in the catalog"
    if "approx" in row["source"]:
        return None, None, "the source gives an approximate figure"
    return model_id, hardware_id, None


@functools.cache
def _throughput(model_id: str, hardware_id: str, gpus: int, precision: str, isl: int, osl: int) -> float:
    """trtllm-bench max throughput as in costmodel.validation.max_throughput_rows, on `gpus` TP GPUs."""
    return throughput_prediction(model_id=model_id, hardware=load_accelerator(hardware_id), gpus=gpus,
                                 precision=precision, isl=isl, osl=osl)


def throughput_prediction(*, model_id: str, hardware: AcceleratorSpec, gpus: int, precision: str, isl: int,
                          osl: int) -> float:
    """`_throughput` on a given accelerator row (uncached: a fit passes rows with other values)."""
    weight_dtype, kv_dtype = THROUGHPUT_DTYPES[precision]
    batch, tokens = trtllm_bench_settings(
        model_id=model_id, hardware_id=hardware.id, input_tokens=isl, output_tokens=osl, gpus=gpus,
        weight_bytes_per_param=dtypes.BYTES_PER_ELEMENT[weight_dtype], kv_bytes_per_element=dtypes.BYTES_PER_ELEMENT[kv_dtype],
    )
    replica = build_replica(model_id, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            max_batched_tokens=tokens)
    if not replica.fits:
        raise CostmodelError(replica.memory.message)
    count = TRTLLM_BENCH_REQUESTS.get((isl, osl)) or TRTLLM_BENCH_REQUESTS_V12[(isl, osl)]
    run = simulate_requests(
        replica, arrival_seconds=np.zeros(count), prompt_tokens=np.full(count, isl),
        output_tokens=np.full(count, osl), kv_policy="reserve", max_num_seqs=min(batch, tokens),
    )
    return run.output_tokens_per_second


def scheduler_steps_of(row: dict[str, str]) -> int:
    """The multi-step scheduling the row's server ran: `--num-scheduler-steps K` in its scenario, else 1.

    The SGLang README's vLLM v0.6.0 rows state it ("added the `--num-scheduler-steps 10` parameter when
    starting the vLLM server", benchmark/benchmark_vllm_060/README.md, commit 120affb9): a configuration
    the source gives, not a fitted value.
    """
    flag = "--num-scheduler-steps "
    scenario = row["scenario"]
    return int(scenario.split(flag, 1)[1].split()[0]) if flag in scenario else 1


def mixed_prefill_decode_of(row: dict[str, str]) -> bool:
    """Whether the row's engine mixes prefill chunks and decode tokens in one step: the measured engine's
    bundled profile says (catalog/engines: sglang `mixed_prefill_decode: false`, SGLang's
    enable_mixed_chunk default; vllm and trtllm true). The profiles were read at today's commits, not at
    the benchmarked versions; the note in docs/validation.md says so."""
    return load_engine("sglang").mixed_prefill_decode if "SGLang" in row["scenario"] else True


@functools.cache
def _online(model_id: str, hardware_id: str, gpus: int, *, rate: float, requests: int, isl: int, osl: int,
            scheduler_steps: int = 1, mixed_prefill_decode: bool = True) -> dict[str, float]:
    """Poisson arrivals at `rate` with fixed lengths, bf16 weights and KV, simulator defaults (seed 0).

    sglang.bench_serving draws exponential gaps (python/sglang/bench_serving.py, get_request:
    np.random.exponential(1.0 / request_rate), commit 0033168f); the TensorRT-LLM online table does not
    state its arrival process, so Poisson is an assumption there.
    """
    replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="bf16", kv_dtype="bf16")
    arrivals = arrival_times(requests=requests, rate_per_second=rate, burstiness=1.0, seed=0)
    run = simulate_requests(replica, arrival_seconds=arrivals, prompt_tokens=np.full(requests, isl),
                            output_tokens=np.full(requests, osl), rate_per_second=rate,
                            scheduler_steps=scheduler_steps, mixed_prefill_decode=mixed_prefill_decode)
    return {"ttft_p50": run.ttft.p50_seconds, "ttft_mean": run.ttft.mean_seconds,
            "tpot_p50": run.tpot.p50_seconds, "tpot_mean": run.tpot.mean_seconds}


def _online_shape(row: dict[str, str]) -> tuple[float, int, int, int]:
    """(rate req/s, requests, prompt tokens, output tokens) of an online row."""
    rate = float(row["concurrency_or_batch"].split()[2])
    if row["input_len"] == "ShareGPT":
        requests = int(row["scenario"].split(" prompts at ")[0].rsplit(" ", 1)[1])
        return rate, requests, SHAREGPT_PROMPT_TOKENS, SHAREGPT_OUTPUT_TOKENS
    return rate, int(row["scenario"].split(" requests at ")[0].rsplit(" ", 1)[1]), int(row["input_len"]), int(row["output_len"])


def _predict(row: dict[str, str], category: str) -> tuple[float | None, str | None]:
    model_id, hardware_id, reason = _ids(row)
    if reason is not None or model_id is None or hardware_id is None:
        return None, reason
    gpus = int(row["n_gpus"])
    try:
        if category.startswith("online"):
            _, latency, stat = ONLINE_METRICS[row["metric"]]
            rate, requests, isl, osl = _online_shape(row)
            run = _online(model_id, hardware_id, gpus, rate=rate, requests=requests, isl=isl, osl=osl,
                          scheduler_steps=scheduler_steps_of(row), mixed_prefill_decode=mixed_prefill_decode_of(row))
            return run[f"{latency}_{stat}"] * 1e3, None
        if row["precision"] not in THROUGHPUT_DTYPES:
            return None, f"weight format '{row['precision']}' has no catalog equivalent"
        if THROUGHPUT_DTYPES[row["precision"]][0] not in dtypes.WEIGHT_DTYPES:
            return None, f"weight format {row['precision']} is not in costmodel/dtypes.py"
        total = _throughput(model_id, hardware_id, gpus, row["precision"], int(row["input_len"]), int(row["output_len"]))
        return (total / gpus if row["metric"] == "output_throughput_per_gpu" else total), None
    except CostmodelError as exc:
        return None, str(exc)


def _label(row: dict[str, str]) -> str:
    """Short configuration text: model, precision, hardware x GPUs, then the workload."""
    head = f"{row['model']} {row['precision']} {row['hardware']} x{row['n_gpus']}"
    if row["metric"] in ONLINE_METRICS:
        engine = row["scenario"].removeprefix("online serving, ").split(", TP")[0].split(" --")[0]
        lengths = "ShareGPT" if row["input_len"] == "ShareGPT" else f"ISL/OSL {row['input_len']}/{row['output_len']}"
        return f"{head}: {engine}, {row['concurrency_or_batch'].removeprefix('request rate ')}, {lengths}"
    version = next((v for v in ("v1.0", "v0.17", "v0.20", "release/1.2") if v in row["scenario"]), "")
    tag = f" (trtllm-bench {version})" if version else ""
    return f"{head}: ISL/OSL {row['input_len']}/{row['output_len']}{tag}"


def category_rows(path: Path = REFERENCE_CSV) -> list[CategoryRow]:
    """Every categorized reference row with its prediction (or reason) and split, in CSV order."""
    result = []
    for row in read_reference_rows(path):
        category = category_of(row)
        if category is None:
            continue
        predicted, reason = _predict(row, category)
        result.append(CategoryRow(
            category=category, label=_label(row), gpus=int(row["n_gpus"]), precision=row["precision"],
            metric=row["metric"], measured=float(row["value"]), predicted=predicted, not_evaluated=reason,
            holdout=is_holdout(row), source=row["source"],
        ))
    return result


@dataclass(frozen=True)
class CategorySummary:
    """Median errors of one category over its evaluated rows (None where no row was evaluated)."""

    rows: int
    evaluated: int
    median_abs_error: float | None
    median_signed_error: float | None
    tuning_median_abs_error: float | None
    tuning_evaluated: int
    holdout_median_abs_error: float | None
    holdout_evaluated: int


def _median_abs(rows: Sequence[CategoryRow]) -> float | None:
    errors = [abs(r.error) for r in rows if r.error is not None]
    return statistics.median(errors) if errors else None


def summarize_category(rows: Sequence[CategoryRow]) -> CategorySummary:
    """Medians over all evaluated rows and over each half of the split."""
    done = [r for r in rows if r.error is not None]
    tuning, holdout = [r for r in done if not r.holdout], [r for r in done if r.holdout]
    return CategorySummary(
        rows=len(rows), evaluated=len(done), median_abs_error=_median_abs(done),
        median_signed_error=statistics.median(r.error for r in done if r.error is not None) if done else None,
        tuning_median_abs_error=_median_abs(tuning), tuning_evaluated=len(tuning),
        holdout_median_abs_error=_median_abs(holdout), holdout_evaluated=len(holdout),
    )
