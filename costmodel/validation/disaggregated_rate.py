"""Disaggregated serving as a source ran it: at a stated request rate (SLO attainment, goodput over an
aggregated baseline) or under a stated number of closed-loop clients (output throughput).

For rows of `costmodel/data/mode_reference_measurements.csv` whose source states the whole run: the xPyD layout
(`layout`, e.g. `1P(TP4)1D(TP4)`), the aggregated baseline on the same GPUs (`baseline_layout`, e.g. `2xTP4`,
requests split round robin as the source's proxy does), the request rate and count, fixed ISL/OSL, the per-request
SLO (`ttft_limit_seconds`, `tpot_limit_seconds`), the KV dtype and each side's stated scheduler arguments
(`engine_args`, `baseline_engine_args`: `max_num_batched_tokens=N;max_num_seqs=M;gpu_memory_utilization=F`,
anything unstated is the engine profile's default; `prefill_engine_args`, where given, the prefill pool's own
instead of `engine_args`) and where the client's first token comes from (`first_token`: `decode` for vLLM's
P/D connectors behind their proxy, which stream every token from the decode instance, so TTFT includes its queue
and first step; empty = when the KV lands, `serving.disaggregated`). Arrivals are Poisson (vLLM bench's default burstiness) from the project's seeded stream,
the same requests on both sides.

- `slo_attainment`: the share of the requests meeting both limits on the disaggregated layout
  (`serving.disaggregated.simulate_disaggregated`).
- `goodput_gain`: requests meeting both limits per second (over each run's first arrival to last token)
  on the disaggregated layout over the aggregated baseline's.

- `output_tokens_per_second` (a `concurrency` column): the whole layout's output tokens/s under that many
  closed-loop clients (`serving.disaggregated_closed_loop`), `requests` requests of fixed ISL/OSL. Where the
  engine generates more tokens than the client counts (`generated_output_len`: genai-perf re-tokenizes each
  streamed response with `--tokenizer` and reports that count as the OSL, so a stated `max_tokens` with
  `ignore_eos` can read as 983.9), the run generates `generated_output_len` tokens per request and the
  throughput counts `output_len` per request, as the client's does.

`kv_link` = `none`: the decode instance runs without a KV connector and recomputes each prompt
(`DisaggregatedLayout.decode_recomputes_prompt`), as a source's launch command shows.

A source's 'ITL < x ms per token' per request is read as this project's TPOT (the request's mean gap after the
first token). `kv_link` names the link priced for the KV transfer (`serving.disaggregated.kv_link`).
"""

from __future__ import annotations

import re

import numpy as np

from costmodel.scenario.slo import SloLimit
from costmodel.serving import build_replica
from costmodel.serving.disaggregated import (
    DisaggregatedLayout,
    DisaggregatedResult,
    FirstToken,
    kv_link,
    simulate_disaggregated,
)
from costmodel.serving.disaggregated_closed_loop import ClosedLoopDisaggregated, closed_loop_disaggregated
from costmodel.serving.profile import EngineSettings, engine_settings
from costmodel.serving.replica import Replica
from costmodel.serving.simulation import arrival_times, simulate_requests

SEED = 0
XPYD = re.compile(r"^(\d+)P\(TP(\d+)\)(\d+)D\(TP(\d+)\)$")
REPLICAS = re.compile(r"^(\d+)xTP(\d+)$")


def _settings(engine_id: str, args: str) -> EngineSettings:
    """The engine profile with the row's stated scheduler arguments."""
    given = dict(pair.split("=", 1) for pair in args.split(";") if pair)
    seqs, budget = given.get("max_num_seqs"), given.get("max_num_batched_tokens")
    memory = given.get("gpu_memory_utilization")
    return engine_settings(engine_id, max_num_seqs=int(seqs) if seqs else None,
                           max_batched_tokens=int(budget) if budget else None,
                           gpu_memory_utilization=float(memory) if memory else None)


def _limits(row: dict[str, str]) -> tuple[SloLimit, SloLimit]:
    # Per-request limits (every request is checked); the percentile is not used for attainment or goodput.
    return (SloLimit("ttft", 100, float(row["ttft_limit_seconds"])), SloLimit("tpot", 100, float(row["tpot_limit_seconds"])))


def _workload(row: dict[str, str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = int(row["requests"])
    arrivals = arrival_times(requests=n, rate_per_second=float(row["rate_per_second"]), burstiness=1.0, seed=SEED)
    return arrivals, np.full(n, int(row["input_len"]), dtype=np.int64), np.full(n, int(row["output_len"]), dtype=np.int64)


def _replica(row: dict[str, str], ids: tuple[str, str], *, gpus: int, settings: EngineSettings) -> Replica:
    return build_replica(ids[0], ids[1], gpus=gpus, weight_dtype="fp8", kv_dtype=row["kv_dtype"], engine=settings)


def _first_token(row: dict[str, str]) -> FirstToken:
    return "decode" if row.get("first_token") == "decode" else "landed"


def _layout(row: dict[str, str], ids: tuple[str, str], settings: EngineSettings) -> DisaggregatedLayout:
    match = XPYD.match(row["layout"])
    if match is None:
        raise ValueError(f"layout {row['layout']!r} is not xP(TPg)yD(TPg)")
    x, gp, y, gd = (int(g) for g in match.groups())
    # the prefill pool's own stated arguments where its command differs from the decode pool's
    own = row.get("prefill_engine_args") or ""
    prefill_settings = _settings(settings.engine_id, own) if own else settings
    prefill = _replica(row, ids, gpus=gp, settings=prefill_settings)
    decode = _replica(row, ids, gpus=gd, settings=settings)
    recompute = row["kv_link"] == "none"
    return DisaggregatedLayout(prefill=prefill, decode=decode, prefill_instances=x, decode_instances=y,
                               link=kv_link(prefill, decode, choice="auto" if recompute else row["kv_link"] or "auto"),
                               decode_recomputes_prompt=recompute)


def _generated_tokens(row: dict[str, str]) -> int:
    """Tokens each request generates: `generated_output_len` where stated, else the client's `output_len`."""
    return int(row.get("generated_output_len") or row["output_len"])


def closed_loop_run(row: dict[str, str], ids: tuple[str, str], engine_id: str) -> ClosedLoopDisaggregated:
    """The row's xPyD layout under its closed-loop client count (per-request TTFT / TPOT and throughput)."""
    settings = _settings(engine_id, row["engine_args"])
    n = int(row["requests"])
    return closed_loop_disaggregated(_layout(row, ids, settings), concurrency=int(row["concurrency"]),
                                     prompt_tokens=np.full(n, int(row["input_len"])),
                                     output_tokens=np.full(n, _generated_tokens(row)),
                                     max_num_seqs=settings.max_num_seqs, first_token=_first_token(row))


def closed_loop_throughput(row: dict[str, str], ids: tuple[str, str], engine_id: str) -> float:
    """Output tokens/s of the row's xPyD layout under its closed-loop client count, as the client counts them."""
    counted = int(row["output_len"]) / _generated_tokens(row)
    return closed_loop_run(row, ids, engine_id).output_tokens_per_second * counted


def disaggregated_result(row: dict[str, str], ids: tuple[str, str], engine_id: str, *,
                         requests: int | None = None) -> DisaggregatedResult:
    """The row's xPyD layout serving its workload at its rate (the first `requests` of it when given)."""
    settings = _settings(engine_id, row["engine_args"])
    arrivals, prompts, outputs = (a[:requests] for a in _workload(row))
    return simulate_disaggregated(_layout(row, ids, settings), arrival_seconds=arrivals, prompt_tokens=prompts,
                                  output_tokens=outputs, slo=_limits(row), max_num_seqs=settings.max_num_seqs,
                                  first_token=_first_token(row))


def disaggregated_run(row: dict[str, str], ids: tuple[str, str], engine_id: str) -> tuple[float, float]:
    """(SLO attainment, goodput requests/s) of the row's xPyD layout at its rate."""
    result = disaggregated_result(row, ids, engine_id)
    return float(result.slo_attainment or 0.0), float(result.goodput_requests_per_second or 0.0)


def aggregated_run(row: dict[str, str], ids: tuple[str, str], engine_id: str) -> tuple[float, float]:
    """(SLO attainment, goodput requests/s) of the baseline's replicas, requests dealt round robin."""
    match = REPLICAS.match(row["baseline_layout"])
    if match is None:
        raise ValueError(f"baseline {row['baseline_layout']!r} is not NxTPg")
    count, gpus = (int(g) for g in match.groups())
    settings = _settings(engine_id, row["baseline_engine_args"])
    replica = _replica(row, ids, gpus=gpus, settings=settings)
    arrivals, prompts, outputs = _workload(row)
    met, first, last = 0, float(arrivals.min()), 0.0
    for k in range(count):
        share = slice(k, None, count)
        run = simulate_requests(replica, arrival_seconds=arrivals[share], prompt_tokens=prompts[share],
                                output_tokens=outputs[share], slo=_limits(row), max_num_seqs=settings.max_num_seqs)
        met += int(run.trace.meets(_limits(row)).sum())
        last = max(last, float(np.nanmax(run.trace.finish_seconds)))
    return met / len(arrivals), met / max(last - first, 1e-12)


def predict_rate_row(row: dict[str, str], ids: tuple[str, str], engine_id: str) -> float:
    """The row's metric: `slo_attainment`, `goodput_gain` or `output_tokens_per_second` (module docstring)."""
    if row["metric"] == "output_tokens_per_second":
        return closed_loop_throughput(row, ids, engine_id)
    attainment, goodput = disaggregated_run(row, ids, engine_id)
    if row["metric"] == "slo_attainment":
        return attainment
    _, baseline = aggregated_run(row, ids, engine_id)
    return goodput / baseline if baseline > 0 else float("inf")
