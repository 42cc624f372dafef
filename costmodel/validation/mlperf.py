"""MLPerf Inference v4.1 rows (closed division, Offline and Server): how each is simulated.

Rows come from `scripts/import_mlperf_rows.py` (each system's `mlperf_log_summary.txt`, its systems JSON and the
layout its own config or scripts state). Every row is one system running `replicas` data-parallel copies of a
TP-`tp` engine; one copy is simulated and its steady-state output tokens/s multiplied by the copy count.

Lengths. Output: each row's own mean (its log's tokens/s over samples/s, the `output_len` column), with the
spread of the 100 output lengths MLPerf's TEST06 compliance run logged (`data/mlperf_output_tokens.csv`),
rescaled to that mean. Input: every prompt at its dataset's mean input length (`PROMPT_TOKENS`), the sum of
the per-sample `tok_input_length` / `tok_input_len` of the official pickles over their sample count
(`INPUT_TOKENS`, sources there). The per-sample lengths themselves are not bundled; drawing every prompt
from them instead of the mean moved the medians by at most half a point when this was written
(docs/validation.md).

Engines. NVIDIA's harness (TensorRT-LLM in-flight batching, `max_util` scheduling: admit while KV memory
allows, evict when it runs out; closed/NVIDIA/code/harness/harness_llm/main_llm.cc and code/common/arguments.py)
runs the generic engine's CPU costs (no HTTP server) with TensorRT-LLM's KV rule at the config's
kvcache_free_gpu_mem_frac, the preempt policy, gpu_batch_size sequences and max_num_tokens per step. The
MI300X rows (vLLM 0.4.3) run the generic CPU costs with vLLM's KV rule at the scripts' gpu_memory_utilization,
prefill in steps of its own (chunked prefill off) and their max_num_seqs / max_num_batched_tokens.

Offline: every request queued at t = 0; throughput is measured from the first completion to the last admission
(the engine is saturated in between). Server: Poisson arrivals (loadgen draws exponential gaps,
mlcommons/inference loadgen/loadgen.cc, commit a8d4d783) at the logged scheduled QPS over the copies;
throughput is completed output tokens/s over the last 80% of the arrival span, so it caps at the simulated
capacity. MLPerf runs >= 2,400 s (min_duration); these runs are cut to `REQUESTS` requests per copy.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from costmodel.catalog.engines import GENERIC_ENGINE_ID, load_engine
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.profile import EngineSettings, engine_settings
from costmodel.serving.results import RequestTrace
from costmodel.serving.simulation import arrival_times

OUTPUT_TOKENS_CSV = Path(__file__).resolve().parents[1] / "data" / "mlperf_output_tokens.csv"
METRICS = {"mlperf_offline_tokens_per_second": "mlperf_offline",
           "mlperf_server_completed_tokens_per_second": "mlperf_server"}
# (input tokens summed over every sample, samples) of each benchmark's official dataset (read 2026-12-02):
# - Llama 2 70B, open_orca_gpt4_tokenized_llama.sampled_24576.pkl.gz (MLCommons storage, md5 c247a315...):
#   24,576 samples, 5,463,976 input tokens (48-1,021, median 152). Two independent extractions of the same file
#   agree: openshift-psap/performance-dashboard mlperf-data/summaries/llama2-70b-99.csv (per-sample
#   tok_input_length, commit 7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb, 2025-11-04) and FlashLab-MBZUAI/HBFSim
#   validation/calibration/h100-llama2-70b-calibration-protocol.json (its lengths_csv input_tokens min 48,
#   max 1021, sum 5463976 for the file by md5 and SHA-256, commit 96cf1b37cd60e8fabb77967a591cf60edb8d1f23).
# - Mixtral 8x7B, 09292024_mixtral_15k_mintoken2_v1.pkl (OpenOrca, GSM8K and MBXP, 5,000 each): 15,000
#   samples, 6,410,905 input tokens (35-1,948, median 283): openshift-psap/performance-dashboard
#   mlperf-data/summaries/mixtral-8x7b.csv (per-sample tok_input_len, commit
#   67033baeaac181a3a35641dd2b86a7cb22d856dd, 2025-11-20).
INPUT_TOKENS = {"Llama-2-70B": (5_463_976, 24_576), "Mixtral-8x7B": (6_410_905, 15_000)}
PROMPT_TOKENS = {model: round(total / samples) for model, (total, samples) in INPUT_TOKENS.items()}  # 222, 427
BENCHMARK_OF = {"Llama-2-70B": "llama2-70b", "Mixtral-8x7B": "mixtral-8x7b"}
# Requests per simulated copy. Server: 8,000 (>= 6 x the largest sequence cap, 1,200); going to 16,000 moved the
# checked rows by at most 1.1 points (the overloaded Mixtral H200 row), 4,000 by up to 5. Offline: at least
# 4 x the sequence cap, so several waves of admissions overlap.
REQUESTS = 8000
OFFLINE_REQUESTS_PER_SLOT = 4
SERVER_WARMUP_FRACTION = 0.2  # of the arrival span, left out of the server throughput


@dataclass(frozen=True)
class Layout:
    """What a row's scenario says the system ran: copies of a TP engine and its scheduler limits."""

    tp: int
    replicas: int
    max_num_seqs: int
    max_batched_tokens: int
    vllm: bool
    memory_fraction: float


def layout_of(row: dict[str, str]) -> Layout:
    """Parse the layout `scripts/import_mlperf_rows.py` wrote into the scenario text."""
    text = row["scenario"]

    def grab(pattern: str) -> str:
        match = re.search(pattern, text)
        if match is None:
            raise ValueError(f"no '{pattern}' in scenario: {text}")
        return match.group(1)

    vllm = "vLLM" in text
    return Layout(
        tp=int(grab(r"TP(\d+) x \d+")), replicas=int(grab(r"TP\d+ x (\d+)")), vllm=vllm,
        max_num_seqs=int(grab(r"max_num_seqs (\d+)" if vllm else r"gpu_batch_size (\d+)")),
        max_batched_tokens=int(grab(r"max_num_batched_tokens (\d+)" if vllm else r"max_num_tokens (\d+)")),
        memory_fraction=float(grab(r"gpu_memory_utilization ([\d.]+)" if vllm else r"kvcache_free_gpu_mem_frac ([\d.]+)")),
    )


def engine_of(layout: Layout) -> EngineSettings:
    """Generic CPU costs, the measured engine's KV rule at the stated fraction, the stated limits (docstring)."""
    base = engine_settings(GENERIC_ENGINE_ID, max_batched_tokens=layout.max_batched_tokens,
                           max_num_seqs=layout.max_num_seqs, kv_policy="preempt")
    profile = load_engine("vllm" if layout.vllm else "trtllm")
    return replace(base, kv_memory_rule=profile.kv_memory_rule, kv_memory_fraction=layout.memory_fraction,
                   mixed_prefill_decode=not layout.vllm)


@functools.cache
def test06_counts(benchmark: str) -> tuple[int, ...]:
    """The output token counts of `benchmark`'s 100 TEST06 samples (data/mlperf_output_tokens.csv)."""
    lines = [ln for ln in OUTPUT_TOKENS_CSV.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    rows = [ln.split(",") for ln in lines[1:]]  # after the header: benchmark, qsl_idx, token_count
    return tuple(int(count) for name, _, count in rows if name == benchmark)


def output_shape(benchmark: str) -> tuple[float, ...]:
    """The TEST06 output lengths of `benchmark`, divided by their mean (a spread with mean 1)."""
    counts = np.array(test06_counts(benchmark), dtype=np.float64)
    return tuple(counts / counts.mean())


def output_lengths(benchmark: str, *, mean_tokens: float, requests: int, seed: int = 0) -> np.ndarray:
    """`requests` output lengths drawn from the TEST06 spread, rescaled to `mean_tokens` (at least 1)."""
    shape = np.asarray(output_shape(benchmark))
    draws = np.random.default_rng(seed).choice(shape, size=requests, replace=True)
    return np.maximum(1, np.rint(draws * mean_tokens)).astype(np.int64)


def window_tokens_per_second(trace: RequestTrace, *, start: float, end: float) -> float:
    """Output tokens produced in [start, end] per second: each request's first token at its time, the rest
    spread evenly between its first token and its finish."""
    done = trace.completed
    first, finish = trace.first_token_seconds[done], trace.finish_seconds[done]
    later = trace.output_tokens[done] - 1
    first_in = ((first >= start) & (first <= end)).sum()
    span = np.maximum(finish - first, 1e-12)
    overlap = np.clip(np.minimum(finish, end) - np.maximum(first, start), 0.0, None)
    return float((first_in + np.sum(later * overlap / span)) / (end - start))


@dataclass(frozen=True)
class MlperfPrediction:
    """Whole-system output tokens/s, and for server rows the simulated p99 TTFT and TPOT (s) in the window."""

    tokens_per_second: float
    ttft_p99_seconds: float | None
    tpot_p99_seconds: float | None


@functools.cache
def simulate(model_id: str, hardware_id: str, layout: Layout, *, benchmark: str, prompt_tokens: int,
             mean_output_tokens: float, qps: float | None) -> MlperfPrediction:
    """One copy simulated (offline when `qps` is None, else Poisson at qps / copies), times the copies."""
    replica = build_replica(model_id, hardware_id, gpus=layout.tp, weight_dtype="fp8", kv_dtype="fp8",
                            engine=engine_of(layout))
    count = max(REQUESTS, OFFLINE_REQUESTS_PER_SLOT * layout.max_num_seqs) if qps is None else REQUESTS
    outputs = output_lengths(benchmark, mean_tokens=mean_output_tokens, requests=count)
    rate = None if qps is None else qps / layout.replicas
    arrivals = np.zeros(count) if rate is None else arrival_times(requests=count, rate_per_second=rate,
                                                                  burstiness=1.0, seed=0)
    run = simulate_requests(replica, arrival_seconds=arrivals, prompt_tokens=np.full(count, prompt_tokens),
                            output_tokens=outputs, rate_per_second=rate, kv_policy="preempt",
                            max_num_seqs=layout.max_num_seqs, mixed_prefill_decode=not layout.vllm)
    trace = run.trace
    if rate is None:
        start, end = float(np.nanmin(trace.finish_seconds)), float(np.nanmax(trace.admitted_seconds))
        return MlperfPrediction(window_tokens_per_second(trace, start=start, end=end) * layout.replicas, None, None)
    span = float(arrivals[-1])
    start = SERVER_WARMUP_FRACTION * span
    tokens = window_tokens_per_second(trace, start=start, end=span) * layout.replicas
    inside = trace.completed & (trace.arrival_seconds >= start)
    ttft = trace.first_token_seconds[inside] - trace.arrival_seconds[inside]
    many = inside & (trace.output_tokens > 1)
    tpot = (trace.finish_seconds[many] - trace.first_token_seconds[many]) / (trace.output_tokens[many] - 1)
    return MlperfPrediction(tokens, float(np.percentile(ttft, 99)), float(np.percentile(tpot, 99)))


def scheduled_qps(row: dict[str, str]) -> float | None:
    """The server row's scheduled QPS (None for offline rows)."""
    match = re.search(r"scheduled ([\d.]+) QPS", row["concurrency_or_batch"])
    return float(match.group(1)) if match else None


def latency_limits(row: dict[str, str]) -> tuple[float, float]:
    """A server row's p99 limits (TTFT s, TPOT s) as its log states them."""
    match = re.search(r"TTFT ([\d.]+) s, TPOT ([\d.]+) ms", row["concurrency_or_batch"])
    if match is None:
        raise ValueError(f"no latency limits in: {row['concurrency_or_batch']}")
    return float(match.group(1)), float(match.group(2)) / 1e3


def predict_mlperf(row: dict[str, str], model_id: str, hardware_id: str, *,
                   prompt_tokens: int | None = None) -> MlperfPrediction:
    """A row's simulated whole-system figure (`prompt_tokens`: another fixed prompt length, for sensitivity)."""
    return simulate(model_id, hardware_id, layout_of(row), benchmark=BENCHMARK_OF[row["model"]],
                    prompt_tokens=prompt_tokens or PROMPT_TOKENS[row["model"]],
                    mean_output_tokens=round(float(row["output_len"]), 1), qps=scheduled_qps(row))


def label(row: dict[str, str]) -> str:
    """Short configuration text: model, GPUs, submitter and system, scenario, layout."""
    head = f"{row['model']} {row['precision']} {row['hardware']} x{row['n_gpus']}"
    where = row["scenario"].split(", ", 2)[2].split(":")[0]  # "<submitter> <system>"
    scen = "Offline" if row["metric"] == "mlperf_offline_tokens_per_second" else f"Server {scheduled_qps(row):g} QPS"
    lay = layout_of(row)
    return f"{head}: {scen}, {where}, TP{lay.tp} x {lay.replicas}"
