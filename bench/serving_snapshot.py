"""Dump every per-request array and summary figure of a fixed set of simulations, or compare with a dump.

A guard for speed work on the engine loop: results must not move. `save PATH` writes an .npz; `check PATH`
re-runs the cases and reports, per array, whether it is bit-identical to the dump (and the largest
relative difference where it is not). Cases cover dense, MoE and sliding-window models, tensor parallel,
fp8, both KV policies, chunked prefill, multi-step scheduling, prefill-only steps, bursty arrivals,
prefix caching, tight KV (preemptions), overload, every engine profile and the 100,000-request bench case.

    PYTHONPATH=$PWD python -m bench.serving_snapshot save /tmp/before.npz
    PYTHONPATH=$PWD python -m bench.serving_snapshot check /tmp/before.npz
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np

from costmodel.scenario.distributions import LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving.profile import engine_settings
from costmodel.serving.replica import build_replica
from costmodel.serving.simulation import arrival_times, draw_lengths, simulate_requests

SLO = (SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05))

# name: (model, hardware, replica kwargs, rate, requests, prompt mean, output mean, simulate kwargs)
CASES: dict[str, tuple[str, str, dict[str, Any], float, int, int, int, dict[str, Any]]] = {
    "bench-100k": ("llama-3.1-8b", "h100-sxm", {}, 10.0, 100_000, 1024, 256, {}),
    "dense-overload": ("llama-3.1-8b", "h100-sxm", {}, 40.0, 4000, 1024, 256, {}),
    "dense-chunked-512": ("llama-3.1-8b", "h100-sxm", {"max_batched_tokens": 512}, 12.0, 4000, 2048, 256, {}),
    "dense-reserve": ("llama-3.1-8b", "l4", {}, 3.0, 3000, 2048, 512, {"kv_policy": "reserve"}),
    "dense-preempt-tight": ("llama-3.1-8b", "l4", {}, 3.0, 3000, 2048, 512, {"kv_policy": "preempt"}),
    "dense-preempt-moderate": ("llama-3.1-8b", "l4", {}, 0.8, 2000, 2048, 512, {"kv_policy": "preempt"}),
    "dense-reserve-moderate": ("llama-3.1-8b", "l4", {}, 0.8, 2000, 2048, 512, {"kv_policy": "reserve"}),
    "dense-multistep-10": ("llama-3.1-8b", "h100-sxm", {}, 10.0, 5000, 1024, 256, {"scheduler_steps": 10}),
    "dense-prefill-only": ("llama-3.1-8b", "h100-sxm", {}, 10.0, 5000, 1024, 256, {"mixed_prefill_decode": False}),
    "dense-prefill-only-chunked": ("llama-3.1-8b", "h100-sxm", {"max_batched_tokens": 1024}, 8.0, 3000, 2048, 256,
                                   {"mixed_prefill_decode": False}),
    "dense-bursty": ("llama-3.1-8b", "h100-sxm", {}, 12.0, 5000, 1024, 256, {"burstiness": 0.3}),
    "dense-prefix": ("llama-3.1-8b", "h100-sxm", {}, 12.0, 5000, 1024, 256, {"prefix_cached_fraction": 0.5}),
    "tp4-70b-fp8": ("llama-3.1-70b", "h100-sxm", {"gpus": 4, "weight_dtype": "fp8", "kv_dtype": "fp8"}, 6.0, 4000,
                    1024, 256, {}),
    "tp8-70b-multistep": ("llama-3.1-70b", "a100-80gb", {"gpus": 8}, 5.0, 3000, 1024, 256, {"scheduler_steps": 10}),
    "moe-sliding": ("gpt-oss-20b", "h100-sxm", {}, 15.0, 5000, 2048, 256, {}),
    "moe-sliding-prefill-only": ("gpt-oss-20b", "h100-sxm", {"max_batched_tokens": 1024}, 10.0, 3000, 2048, 256,
                                 {"mixed_prefill_decode": False, "kv_policy": "reserve"}),
    "all-sliding-tight": ("mistral-7b", "l4", {"max_batched_tokens": 2048}, 4.0, 3000, 3000, 600, {}),
    "moe-qwen3": ("qwen3-30b-a3b", "h100-sxm", {}, 10.0, 4000, 1024, 512, {"burstiness": 0.5}),
    "engine-vllm": ("llama-3.1-8b", "h100-sxm", {"engine": "vllm"}, 10.0, 4000, 1024, 256, {}),
    "engine-sglang": ("llama-3.1-8b", "h100-sxm", {"engine": "sglang"}, 10.0, 4000, 1024, 256, {}),
    "engine-trtllm": ("llama-3.1-8b", "h100-sxm", {"engine": "trtllm"}, 10.0, 4000, 1024, 256, {}),
    "engine-naive": ("llama-3.1-8b", "h100-sxm", {"engine": "naive"}, 0.5, 500, 1024, 256, {}),
}


def _flatten(prefix: str, value: Any, out: dict[str, np.ndarray]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name in ("replica", "_breakdowns"):
                continue
            _flatten(f"{prefix}.{f.name}", getattr(value, f.name), out)
    elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
        for i, item in enumerate(value):
            _flatten(f"{prefix}[{i}]", item, out)
    elif isinstance(value, (np.ndarray, int, float, bool)) or value is None:
        out[prefix] = np.asarray(np.nan if value is None else value)


def run_case(name: str) -> dict[str, np.ndarray]:
    """Every figure of one case, flattened to named arrays."""
    model, hardware, replica_kwargs, rate, requests, prompt_mean, output_mean, sim_kwargs = CASES[name]
    replica_kwargs = dict(replica_kwargs)
    sim_kwargs = dict(sim_kwargs)
    engine_id = replica_kwargs.pop("engine", None)
    prompt = LognormalTokens(mean_tokens=prompt_mean, sigma=0.8)
    output = LognormalTokens(mean_tokens=output_mean, sigma=0.6)
    prompts, outputs = draw_lengths(prompt_tokens=prompt, output_tokens=output, requests=requests, seed=3)
    settings = None
    if engine_id is not None:
        settings = engine_settings(engine_id, longest_prompt_tokens=int(prompts.max()))
        sim_kwargs.setdefault("kv_policy", settings.kv_policy)
        sim_kwargs.setdefault("max_num_seqs", settings.max_num_seqs)
    replica = build_replica(model, hardware, engine=settings, **replica_kwargs)
    arrivals = arrival_times(requests=requests, rate_per_second=rate, burstiness=sim_kwargs.pop("burstiness", 1.0),
                             seed=3)
    result = simulate_requests(replica, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
                               slo=SLO, rate_per_second=rate, **sim_kwargs)
    out: dict[str, np.ndarray] = {}
    _flatten(name, result, out)
    _flatten(f"{name}.itl", result.itl, out)
    # Arrays built on first use (not dataclass fields), under the keys they had as fields
    for key in ("seconds", "waiting", "running"):
        out[f"{name}.series.{key}"] = getattr(result.series, key)
    out[f"{name}.itl_groups"] = result.itl_groups
    return out


def run_all() -> dict[str, np.ndarray]:
    """Every case."""
    out: dict[str, np.ndarray] = {}
    for name in CASES:
        out.update(run_case(name))
    return out


def compare(saved: dict[str, np.ndarray], fresh: dict[str, np.ndarray]) -> list[str]:
    """One line per array that is not bit-identical (or missing)."""
    problems = []
    for key in sorted(set(saved) | set(fresh)):
        if key not in saved or key not in fresh:
            problems.append(f"{key}: only in {'dump' if key in saved else 'run'}")
            continue
        a, b = saved[key], fresh[key]
        if a.shape != b.shape:
            problems.append(f"{key}: shape {a.shape} vs {b.shape}")
        elif not np.array_equal(a, b, equal_nan=True):
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.nanmax(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)) if a.dtype.kind == "f" else np.nan
            problems.append(f"{key}: differs (max relative {rel:.3g})")
    return problems


def main(argv: list[str]) -> int:
    action, path = argv
    fresh = run_all()
    if action == "save":
        np.savez_compressed(path, **fresh)
        print(f"saved {len(fresh)} arrays of {len(CASES)} cases to {path}")
        return 0
    with np.load(path) as data:
        saved = {key: data[key] for key in data.files}
    problems = compare(saved, fresh)
    for line in problems:
        print(line)
    print(f"{len(fresh)} arrays of {len(CASES)} cases: {'bit-identical' if not problems else f'{len(problems)} differ'}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
