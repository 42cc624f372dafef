"""Where the evaluated rate rows of the disaggregated mode miss, for docs/validation.md (numbers computed here).

The vLLM MORI-IO rows (Qwen3-235B-A22B on MI300X) and the B200 NVIDIA Dynamo 3P1D rows (Llama 3.1 70B, 26,000-token
prompts): the model's own figures for each, next to what the sources' per-request data and reported means say
(`costmodel/validation/closed_loop_reading.py` for the Little's-law split of the Dynamo runs).
"""

from __future__ import annotations

import textwrap

import numpy as np

from costmodel.serving import build_replica, simulate_requests
from costmodel.serving.profile import engine_settings
from costmodel.validation import disaggregated_rate as rate
from costmodel.validation.closed_loop_reading import (
    DYNAMO_B200_26K,
    DYNAMO_B200_PREFILL_WORKERS,
    step_seconds_per_sequence,
)
from costmodel.validation.modes import HARDWARE_IDS, MODEL_IDS, _engine, read_mode_rows


def _lone_ttft_seconds(model_id: str, hardware_id: str, *, gpus: int, prompt_tokens: int) -> float:
    """One prompt on an idle vLLM-profile replica in fp8 (weights and KV): its first token."""
    replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="fp8", kv_dtype="fp8",
                            engine=engine_settings("vllm"))
    run = simulate_requests(replica, arrival_seconds=np.zeros(1), prompt_tokens=np.full(1, prompt_tokens),
                            output_tokens=np.ones(1, dtype=np.int64))
    return float(run.trace.first_token_seconds[0])


def mori_notes(row: dict[str, str]) -> list[str]:
    """The MORI-IO rows: the model's 1P1D and 2x TP4 runs against the post's per-request data."""
    ids = (MODEL_IDS[row["model"]], HARDWARE_IDS[row["hardware"]])
    run = rate.disaggregated_result(row, ids, _engine(row))
    lone = rate.disaggregated_result(row, ids, _engine(row), requests=1)
    baseline, _ = rate.aggregated_run(row, ids, _engine(row))
    attained = float(run.slo_attainment or 0.0)
    return [
        "",
        "The vLLM MORI-IO rows (Qwen3-235B-A22B FP8 on 8 MI300X, 8 requests/s, 100 requests) take the client's first",
        "token from the decode instance, as the post counts TTFT ('TTFT ≈ max(queue(prefill) + prefill_forward_pass +",
        "RDMA_write_time, queue(decode)) + sample_T1 + ...'). With 1,000-token outputs and the stated",
        f"`--max_num_seqs 64`, the model's decode instance runs out of running slots: {round((1 - attained) * 100)} of",
        f"100 requests wait for one (TTFT p90 {run.ttft.p90_seconds:.1f} s), which is its whole miss (attainment",
        f"{attained:.2f}); its prefill instance never queues. The post's per-request data (Figure 3,",
        "assets/figures/2026-04-07-moriio-kv-connector/plotly-figure3.js, commit cbfa9dc8) say otherwise: write-mode",
        "TTFT rises steadily from 0.185 s (request 1) to 1.55 s (request 100), a prefill backlog, with no slot wait,",
        "where 1,000-token outputs at the measured ~37 ms per token would hold requests past the 64th for a slot. So",
        "either the outputs were shorter than 1,000 tokens (`vllm bench serve` stops at EOS unless `--ignore-eos`,",
        "and the post shows no bench command) or the cap did not bind, and the attainment comes out close for the",
        f"wrong requests. The idle deployment's first TTFT is 0.185 s where the model gives {lone.ttft.p50_seconds:.3f} s:",
        "prefill of vLLM on MI300X (ROCm, TP4 with expert parallelism) is several times slower than the catalog's",
        "MI300X row prices it, and nothing here is fitted to it. The 2x TP4 baseline's per-request ITLs sit in two",
        "clusters (about 0.152 s for requests 1-70, 0.031 s after): with 1,000-token outputs sharing steps a",
        "per-request mean gap cannot do that, so the post's ITL per request reads as a tail gap (Table 3: 'ITL",
        "spikes (P99 ITL >> 50 ms)'), or the outputs were shorter; the model reads the limit as TPOT and puts",
        f"{baseline:.0%} of the baseline's requests within it, which is why the goodput gain is under-predicted.",
    ]


def dynamo_notes(rows: list[dict[str, str]]) -> list[str]:
    """The B200 Dynamo 3P1D rows: Little's law on the report's means against the model's closed loops."""
    low, high = DYNAMO_B200_26K
    ids = (MODEL_IDS[rows[0]["model"]], HARDWARE_IDS[rows[0]["hardware"]])
    runs = [rate.closed_loop_run(row, ids, _engine(row)) for row in rows]
    ttft = [float(np.mean(r.ttft_seconds)) for r in runs]
    tpot = [float(np.nanmean(r.tpot_seconds)) * 1e3 for r in runs]
    slope = step_seconds_per_sequence(low, high)
    prompt = int(rows[0]["input_len"])
    kv_per_gpu = build_replica(ids[0], ids[1], gpus=4, weight_dtype="fp8", kv_dtype="fp8").kv_bytes_per_token_per_gpu
    kv_rate = (prompt + int(rows[0]["output_len"]) / 2) * kv_per_gpu / slope  # one sequence's KV read per step
    per_prompt = DYNAMO_B200_PREFILL_WORKERS / high.requests_per_second
    return [
        "",
        "The B200 Dynamo 3P1D rows (Llama 3.1 70B FP8, 26,000-token prompts, 16 and 32 closed-loop clients; one",
        "individual's report, whose manifest workato_3xtp4p_1xtp4d_2nodes.yaml at commit 4a78ea6c runs Dynamo",
        "vllm-runtime 1.2.1 with --max-num-batched-tokens 32768 (a prompt per step), 128-token blocks, no prefix",
        "caching, NixlConnector and UCX_TLS=all, and requests no RDMA network interfaces for its pods). Little's law on",
        "the report's means (`validation/closed_loop_reading.py`): of the 16 / 32 requests in flight,",
        f"{low.waiting_first_token_requests:.1f} / {high.waiting_first_token_requests:.1f} wait for their first token",
        f"and {low.decoding_requests:.1f} / {high.decoding_requests:.1f} decode. The prefill pool delivers",
        f"{high.requests_per_second:.2f} requests/s at 32 clients: {per_prompt:.2f} s per 26,000-token prompt per",
        "worker if the three share the load, where the model's TP4 prefill of one takes",
        f"{_lone_ttft_seconds(ids[0], ids[1], gpus=4, prompt_tokens=prompt):.2f} s (the model's mean TTFT",
        f"{ttft[0]:.2f} / {ttft[1]:.2f} s against 7.51 / 13.14 s measured). The decode step after the second token is",
        f"{low.decode_step_seconds * 1e3:.1f} / {high.decode_step_seconds * 1e3:.1f} ms, {slope * 1e3:.2f} ms more",
        f"per decoding sequence, a sequence's 26,000-token fp8 KV read at {kv_rate / 1e12:.1f} TB/s per GPU (the",
        f"model's TPOT {tpot[0]:.1f} / {tpot[1]:.1f} ms). Neither gap looks like the KV transfer's: the time to",
        "second token (which carries it if the first token is the prefill worker's) is 0.76 / 0.83 s and grows little",
        "with load. The same author's 8-GPU runs on this cluster",
        "(13_master.md, commit 5ab57ab3) show the pattern again: Dynamo's four TP1 prefill workers hold 8,000-token",
        "prompts to 0.63 requests/s at both 16 and 32 clients ('Ingestion of an 8,000-token prompt on a single GPU",
        "takes ~1.5 to 2.5 seconds', where the model's TP1 prefill of one takes",
        f"{_lone_ttft_seconds(ids[0], ids[1], gpus=1, prompt_tokens=8000):.2f} s), while plain vLLM (2x TP4) on the",
        "same GPUs serves 20.24 requests/s of 3,000-token prompts. No source found states the cause (prefill and",
        "decode-attention kernels at 26,000 tokens, or the spot-node setup) as a figure, so nothing is fitted and these",
        "rows stay over-predicted: the held-out target is not met honestly while they count.",
    ]


def disaggregated_notes() -> list[str]:
    """Markdown lines for the MORI-IO and the Dynamo rows."""
    rows = read_mode_rows()
    mori = next(r for r in rows if r["metric"] == "slo_attainment")
    dynamo = [r for r in rows if r["mode"] == "disaggregated" and r["metric"] == "output_tokens_per_second"]
    return [*_wrapped(mori_notes(mori)), *_wrapped(dynamo_notes(dynamo))]


def _wrapped(lines: list[str]) -> list[str]:
    """A leading blank line, then the paragraph's text re-wrapped at the doc's width (its numbers vary in length)."""
    return ["", *textwrap.wrap(" ".join(line for line in lines if line), width=114, break_on_hyphens=False)]
