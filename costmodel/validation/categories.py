"""Reference measurements by category (issue 17): saturated, multi-GPU, fp4, MoE and online rows.

Each row of `costmodel/data/reference_measurements.csv` that belongs to a category is predicted with the
catalog's default efficiencies or listed as not evaluated with the reason (a model, accelerator or weight
format the catalog lacks). Online rows run with their engine's bundled profile (`validation.online`), whose
two CPU costs are fitted on the tuning half of the online rows (scripts/fit_online_overheads.py). A deterministic half of every category
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
from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.results import SimulationResult
from costmodel.validation import (
    HARDWARE_IDS,
    MODEL_IDS,
    REFERENCE_CSV,
    TRTLLM_BENCH_REQUESTS,
    mlperf,
    read_reference_rows,
    trtllm_bench_engine,
    trtllm_bench_settings,
)
from costmodel.validation.online import (  # noqa: F401 -- re-exported: the online rows' simulation lives there
    OFFLINE_METRIC,
    ONLINE_METRICS,
    SHAREGPT_OUTPUT_TOKENS,
    SHAREGPT_PROMPT_TOKENS,
    mixed_prefill_decode_of,
    predict_offline_sharegpt,
    predict_online,
    scheduler_steps_of,
)
from costmodel.validation.online import online_shape as _online_shape  # noqa: F401 -- tests read it


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
    Category("online_itl", "Online ITL: median gap between streamed chunks (SGLang, vLLM)", 0.20),
    Category("sharegpt_saturated", "ShareGPT saturated throughput through the server (SGLang, vLLM)", 0.15),
    # Issue 26 item 7 (validation/mlperf.py).
    Category("mlperf_offline", "MLPerf Inference v4.1 Offline throughput (Llama 2 70B, Mixtral 8x7B)", 0.20),
    Category("mlperf_server", "MLPerf Inference v4.1 Server completed tokens/s at the scheduled QPS", 0.25),
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
    if row["metric"] in mlperf.METRICS:
        return mlperf.METRICS[row["metric"]]
    if row["metric"] in ONLINE_METRICS:
        return ONLINE_METRICS[row["metric"]][0]
    if row["metric"] == OFFLINE_METRIC:
        return "sharegpt_saturated"
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
        return None, None, ("the attention-DP (DEP) runs of trtllm-bench: the simulator runs DEP "
                            "(serving/expert_parallel_timer.py), but the per-rank batch and token limits trtllm-bench "
                            "picks under attention DP are not modelled (the heuristic here is the tensor-parallel one)")
    model_id, hardware_id = MODEL_IDS.get(row["model"]), HARDWARE_IDS.get(row["hardware"])
    if model_id is None:
        return None, None, f"model {row['model']} is not in the catalog"
    if hardware_id is None:
        return None, None, f"hardware {row['hardware']} is not in the catalog"
    if "approx" in row["source"]:
        return None, None, "the source gives an approximate figure"
    return model_id, hardware_id, None


def _throughput(model_id: str, hardware_id: str, gpus: int, precision: str, isl: int, osl: int) -> float:
    """trtllm-bench max throughput as in costmodel.validation.max_throughput_rows, on `gpus` TP GPUs."""
    return throughput_run_cached(model_id, hardware_id, gpus, precision, isl, osl).output_tokens_per_second


@functools.cache
def throughput_run_cached(model_id: str, hardware_id: str, gpus: int, precision: str, isl: int,
                          osl: int) -> SimulationResult:
    """`throughput_run` on the catalog's accelerator row, once per configuration (the doc reads it twice)."""
    return throughput_run(model_id=model_id, hardware=load_accelerator(hardware_id), gpus=gpus, precision=precision,
                          isl=isl, osl=osl)


def throughput_prediction(*, model_id: str, hardware: AcceleratorSpec, gpus: int, precision: str, isl: int,
                          osl: int) -> float:
    """`_throughput` on a given accelerator row (uncached: a fit passes rows with other values)."""
    return throughput_run(model_id=model_id, hardware=hardware, gpus=gpus, precision=precision, isl=isl,
                          osl=osl).output_tokens_per_second


def throughput_run(*, model_id: str, hardware: AcceleratorSpec, gpus: int, precision: str, isl: int,
                   osl: int) -> SimulationResult:
    """The simulated trtllm-bench run behind `throughput_prediction` (its batch and steps, for a diagnosis)."""
    weight_dtype, kv_dtype = THROUGHPUT_DTYPES[precision]
    batch, tokens = trtllm_bench_settings(
        model_id=model_id, hardware_id=hardware.id, input_tokens=isl, output_tokens=osl, gpus=gpus,
        weight_bytes_per_param=dtypes.BYTES_PER_ELEMENT[weight_dtype], kv_bytes_per_element=dtypes.BYTES_PER_ELEMENT[kv_dtype],
    )
    replica = build_replica(model_id, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            engine=trtllm_bench_engine(max_batched_tokens=tokens))
    if not replica.fits:
        raise CostmodelError(replica.memory.message)
    count = TRTLLM_BENCH_REQUESTS.get((isl, osl)) or TRTLLM_BENCH_REQUESTS_V12[(isl, osl)]
    run = simulate_requests(
        replica, arrival_seconds=np.zeros(count), prompt_tokens=np.full(count, isl),
        output_tokens=np.full(count, osl), kv_policy="reserve", max_num_seqs=min(batch, tokens),
    )
    return run


def _predict(row: dict[str, str], category: str, *, unfitted: bool = False, unstreamed: bool = False,
             mean_lengths: bool = False) -> tuple[float | None, str | None]:
    model_id, hardware_id, reason = _ids(row)
    if reason is not None or model_id is None or hardware_id is None:
        return None, reason
    gpus = int(row["n_gpus"])
    try:
        if category.startswith("online"):
            return predict_online(row, model_id, hardware_id, unfitted=unfitted, unstreamed=unstreamed), None
        if category == "sharegpt_saturated":
            return predict_offline_sharegpt(row, model_id, hardware_id, unfitted=unfitted,
                                            mean_lengths=mean_lengths), None
        if category in mlperf.METRICS.values():
            return mlperf.predict_mlperf(row, model_id, hardware_id).tokens_per_second, None
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
    if row["metric"] in mlperf.METRICS:
        return mlperf.label(row)
    head = f"{row['model']} {row['precision']} {row['hardware']} x{row['n_gpus']}"
    if row["metric"] in ONLINE_METRICS:
        engine = row["scenario"].removeprefix("online serving, ").split(", TP")[0].split(" --")[0]
        lengths = "ShareGPT" if row["input_len"] == "ShareGPT" else f"ISL/OSL {row['input_len']}/{row['output_len']}"
        return f"{head}: {engine}, {row['concurrency_or_batch'].removeprefix('request rate ')}, {lengths}"
    if row["metric"] == OFFLINE_METRIC:
        engine = row["scenario"].removeprefix("offline throughput, ").split(", TP")[0]
        prompts = row["scenario"].split(" prompts at ")[0].rsplit(" ", 1)[1]
        return f"{head}: {engine}, all {prompts} prompts at once, ShareGPT"
    version = next((v for v in ("v1.0", "v0.17", "v0.20", "release/1.2") if v in row["scenario"]), "")
    tag = f" (trtllm-bench {version})" if version else ""
    return f"{head}: ISL/OSL {row['input_len']}/{row['output_len']}{tag}"


def category_rows(path: Path = REFERENCE_CSV, *, unfitted: bool = False, unstreamed: bool = False,
                  mean_lengths: bool = False) -> list[CategoryRow]:
    """Every categorized reference row with its prediction (or reason) and split, in CSV order
    (`unfitted`: online and ShareGPT rows without the fitted engine CPU costs, as before the fit;
    `unstreamed`: ITL as per-token gaps, ignoring the chunks the server streamed; `mean_lengths`: offline
    ShareGPT rows at fixed mean lengths, without ShareGPT's spread)."""
    result = []
    for row in read_reference_rows(path):
        category = category_of(row)
        if category is None:
            continue
        predicted, reason = _predict(row, category, unfitted=unfitted, unstreamed=unstreamed, mean_lengths=mean_lengths)
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
