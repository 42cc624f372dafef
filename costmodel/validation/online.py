"""Online reference rows (TTFT / TPOT at moderate load): how each row is simulated.

Every online row runs with the bundled profile of the engine it measured (`ROW_ENGINES`: vllm, sglang,
trtllm) for what the profile adds on the CPU side and in the step: the per-request overhead (a TTFT floor),
the fixed CPU cost per engine step (where a profile names one; else the accelerator row's), the
per-sequence step cost, the TP all-reduce overlap and whether prefill and decode share a step. The scheduler limits stay at the values these rows
were simulated with before profiles were used (256 sequences, 8192 tokens, preempt): the profiles hold
today's defaults (vLLM V1 on an H100: 1024 sequences), not those of the benchmarked versions (vLLM v0.6.0,
SGLang v0.3.0, TensorRT-LLM v0.14 through Triton), and at 2-8 req/s neither limit binds.
`scripts/fit_online_overheads.py` fits two of them, the per-request and the per-step CPU cost, on the tuning half of these rows (the profiles'
`sources` entries say so); `predict_online` is what the fit and docs/validation.md both run.
"""

from __future__ import annotations

import functools

import numpy as np

from costmodel.catalog.engines import EngineProfile, load_engine
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.profile import engine_settings
from costmodel.serving.replica import MAX_NUM_SEQS
from costmodel.serving.results import LatencySummary
from costmodel.serving.simulation import arrival_times
from costmodel.validation.sharegpt import sharegpt_lengths

# Online ShareGPT rows are simulated with every request at the published mean lengths. Prompt: 229,711
# input tokens over 1,000 ShareGPT prompts with the Llama-3.1 tokenizer (vllm-project/vllm PR #18566,
# 2025-05-22, https://github.com/vllm-project/vllm/pull/18566) -> 230. Output: the same README's offline
# table, 4,281.51 output tok/s / 22.03 req/s = 194 tokens per request (sgl-project/sglang
# benchmark/benchmark_vllm_060/README.md, commit 120affb9). The offline (saturated) rows draw the spread
# of ShareGPT lengths instead (validation/sharegpt.py); the online rows, on which the CPU costs were
# fitted, keep the means.
SHAREGPT_PROMPT_TOKENS = 230
SHAREGPT_OUTPUT_TOKENS = 194
# Offline rows: the mean throughput over this many draws (seeds 0-7) of the 5,000 lengths. One draw's
# throughput varies by 1-2% from seed to seed (the run's longest requests end it); the harness measured one
# sample, whose best estimate is the mean over samples. Not tuned: any count gives the same expectation.
SHAREGPT_DRAWS = 8
ONLINE_METRICS = {
    "median_ttft_ms": ("online_ttft", "ttft", "p50"),
    "mean_ttft_ms": ("online_ttft", "ttft", "mean"),
    "median_tpot_ms": ("online_tpot", "tpot", "p50"),
    "mean_itl_ms": ("online_tpot", "tpot", "mean"),  # mean ITL over tokens ~ mean TPOT (the fitted category)
    # Median gap between streamed chunks (sglang.bench_serving's ITL: one gap per SSE chunk): vLLM v0.6.0
    # with --num-scheduler-steps 10 streams a chunk per 10-step window (serving.itl).
    "median_itl_ms": ("online_itl", "itl", "p50"),
}
# Offline ShareGPT throughput (sglang.bench_serving with every prompt sent at once, through the server).
OFFLINE_METRIC = "output_token_throughput"
# The engine named in a row's scenario -> its bundled profile (catalog/engines); TensorRT-LLM otherwise.
ROW_ENGINES = {"SGLang": "sglang", "vLLM": "vllm", "TensorRT-LLM": "trtllm"}


def engine_id_of(row: dict[str, str]) -> str:
    """The bundled engine profile of the engine an online row measured."""
    return next((pid for name, pid in ROW_ENGINES.items() if name in row["scenario"]), "trtllm")


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
    bundled profile says (sglang `mixed_prefill_decode: false`, SGLang's enable_mixed_chunk default; vllm
    and trtllm true). Read at today's commits, not at the benchmarked versions (docs/validation.md)."""
    return load_engine(engine_id_of(row)).mixed_prefill_decode


def online_shape(row: dict[str, str]) -> tuple[float, int, int, int]:
    """(rate req/s, requests, prompt tokens, output tokens) of an online row."""
    rate = float(row["concurrency_or_batch"].split()[2])
    if row["input_len"] == "ShareGPT":
        requests = int(row["scenario"].split(" prompts at ")[0].rsplit(" ", 1)[1])
        return rate, requests, SHAREGPT_PROMPT_TOKENS, SHAREGPT_OUTPUT_TOKENS
    return rate, int(row["scenario"].split(" requests at ")[0].rsplit(" ", 1)[1]), int(row["input_len"]), int(row["output_len"])


def _profile(engine_id: str, *, request_overhead_seconds: float | None, step_overhead_seconds: float | None,
             unfitted: bool = False) -> EngineProfile:
    """The bundled profile, with the two fitted CPU costs replaced where given (the fit tries values), or
    (`unfitted`) set back to the generic profile's: no per-request cost, the accelerator row's step overhead."""
    profile = load_engine(engine_id)
    if unfitted:
        return profile.model_copy(update={"request_overhead_seconds": 0.0, "step_overhead_seconds": None})
    update = {k: v for k, v in (("request_overhead_seconds", request_overhead_seconds),
                                ("step_overhead_seconds", step_overhead_seconds)) if v is not None}
    return profile.model_copy(update=update) if update else profile


@functools.cache
def simulate_online(model_id: str, hardware_id: str, gpus: int, *, rate: float, requests: int, isl: int, osl: int,
                    engine_id: str, scheduler_steps: int = 1, request_overhead_seconds: float | None = None,
                    step_overhead_seconds: float | None = None, unfitted: bool = False) -> dict[str, float]:
    """Poisson arrivals at `rate` with fixed lengths, bf16 weights and KV, seed 0, under `engine_id`'s profile
    (its CPU costs replaced by the given ones, if any); today's scheduler limits (module docstring).

    sglang.bench_serving draws exponential gaps (python/sglang/bench_serving.py, get_request:
    np.random.exponential(1.0 / request_rate), commit 0033168f); the TensorRT-LLM online table does not
    state its arrival process, so Poisson is an assumption there.
    """
    profile = _profile(engine_id, request_overhead_seconds=request_overhead_seconds,
                       step_overhead_seconds=step_overhead_seconds, unfitted=unfitted)
    settings = engine_settings(profile, max_num_seqs=MAX_NUM_SEQS, max_batched_tokens=MAX_BATCHED_TOKENS,
                               kv_policy="preempt")
    replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="bf16", kv_dtype="bf16", engine=settings)
    arrivals = arrival_times(requests=requests, rate_per_second=rate, burstiness=1.0, seed=0)
    run = simulate_requests(replica, arrival_seconds=arrivals, prompt_tokens=np.full(requests, isl),
                            output_tokens=np.full(requests, osl), rate_per_second=rate, kv_policy=settings.kv_policy,
                            max_num_seqs=settings.max_num_seqs, scheduler_steps=scheduler_steps)
    return {"ttft_p50": run.ttft.p50_seconds, "ttft_mean": run.ttft.mean_seconds,
            "tpot_p50": run.tpot.p50_seconds, "tpot_mean": run.tpot.mean_seconds, "itl_p50": run.itl.p50_seconds,
            # ITL as per-token gaps, ignoring the streamed chunk (what the simulator reported before it read it)
            "itl_unstreamed_p50": LatencySummary.of_gaps(run.itl_groups).p50_seconds}


def memory_fraction_of(row: dict[str, str]) -> float | None:
    """The memory fraction the row's server ran with where its source states one (`--mem-frac F`), else None
    (the profile's 0.9: vLLM's gpu_memory_utilization default, which the SGLang README says the vLLM runs kept)."""
    flag = "--mem-frac "
    scenario = row["scenario"]
    return float(scenario.split(flag, 1)[1].split(",")[0].split()[0]) if flag in scenario else None


def predict_offline_sharegpt(row: dict[str, str], model_id: str, hardware_id: str, *, unfitted: bool = False,
                             mean_lengths: bool = False) -> float:
    """Output tokens/s of an offline ShareGPT row: every prompt at t = 0 (sglang.bench_serving at an infinite
    rate, through the server) with ShareGPT's spread of lengths (`sharegpt.sharegpt_lengths`, the mean over
    `SHAREGPT_DRAWS` draws), the row's
    engine profile with its fitted CPU costs (a per-request cost only delays the start: the server
    tokenizes while the GPU runs), the scheduler limits of the online rows and
    the multi-step scheduling and memory fraction the row's source states (`unfitted`: the CPU costs set back
    to the generic profile's, as for the online rows; `mean_lengths`: every request at the online rows'
    mean lengths instead, as these rows ran before the spread was drawn)."""
    requests = int(row["scenario"].split(" prompts at ")[0].rsplit(" ", 1)[1])
    return _offline(model_id, hardware_id, int(row["n_gpus"]), requests=requests, engine_id=engine_id_of(row),
                    scheduler_steps=scheduler_steps_of(row), memory_fraction=memory_fraction_of(row), unfitted=unfitted,
                    mean_lengths=mean_lengths)


@functools.cache
def _offline(model_id: str, hardware_id: str, gpus: int, *, requests: int, engine_id: str, scheduler_steps: int,
             memory_fraction: float | None, unfitted: bool, mean_lengths: bool) -> float:
    profile = _profile(engine_id, request_overhead_seconds=None, step_overhead_seconds=None, unfitted=unfitted)
    settings = engine_settings(profile, max_num_seqs=MAX_NUM_SEQS, max_batched_tokens=MAX_BATCHED_TOKENS,
                               kv_policy="preempt", scheduler_steps=scheduler_steps,
                               gpu_memory_utilization=memory_fraction)
    replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="bf16", kv_dtype="bf16", engine=settings)
    draws = ([(np.full(requests, SHAREGPT_PROMPT_TOKENS), np.full(requests, SHAREGPT_OUTPUT_TOKENS))] if mean_lengths
             else [sharegpt_lengths(requests=requests, seed=seed) for seed in range(SHAREGPT_DRAWS)])
    return float(np.mean([
        simulate_requests(replica, arrival_seconds=np.zeros(requests), prompt_tokens=prompt_tokens,
                          output_tokens=output_tokens, kv_policy=settings.kv_policy,
                          max_num_seqs=settings.max_num_seqs).output_tokens_per_second
        for prompt_tokens, output_tokens in draws]))


def predict_online(row: dict[str, str], model_id: str, hardware_id: str, *, request_overhead_seconds: float | None = None,
                   step_overhead_seconds: float | None = None, unfitted: bool = False, unstreamed: bool = False) -> float:
    """The row's metric in ms as simulated (profile CPU costs, the ones given, or - `unfitted` - none;
    `unstreamed`: ITL as per-token gaps, one token per chunk whatever the server streamed)."""
    _, latency, stat = ONLINE_METRICS[row["metric"]]
    if unstreamed and latency == "itl":
        latency = "itl_unstreamed"
    rate, requests, isl, osl = online_shape(row)
    run = simulate_online(model_id, hardware_id, int(row["n_gpus"]), rate=rate, requests=requests, isl=isl, osl=osl,
                          engine_id=engine_id_of(row), scheduler_steps=scheduler_steps_of(row),
                          request_overhead_seconds=request_overhead_seconds, step_overhead_seconds=step_overhead_seconds,
                          unfitted=unfitted)
    return run[f"{latency}_{stat}"] * 1e3
