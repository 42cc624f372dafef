"""docs/serving.md, number by number: every figure on the page recomputed from the engine and theory.

A claim pairs a snippet of the page (verbatim, line breaks as spaces) with a computed value and the
format the page prints it in; the value must print inside the snippet and the snippet must be in the
page. `test_every_number_on_the_page_is_claimed` fails when a number appears outside every claimed
snippet (small structural integers aside). Theory: Pollaczek-Khinchine for M/D/1,
Wq = rho D / (2 (1 - rho)); Little's law L = lambda W.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from costmodel import validation
from costmodel.memory import MAX_BATCHED_TOKENS, RESERVE_FRACTION
from costmodel.roofline import step
from costmodel.scenario.distributions import FixedTokens, LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import (
    MAX_NUM_SEQS,
    CapacitySearch,
    build_replica,
    capacity_for_replica,
    confidence,
    simulate,
    throughput_interactivity_curve,
)
from costmodel.serving import capacity as serving_capacity
from costmodel.serving.capacity import DEFAULT_REQUESTS

DOC = Path(__file__).resolve().parents[1] / "docs" / "serving.md"
PAGE = " ".join(DOC.read_text(encoding="utf-8").split())
ALLOWED = {"0", "1", "2", "3.1", "16"}  # t = 0, "1 / lambda", "(1 - rho)", "Llama 3.1", "16-token blocks"


def n0(v: float) -> str:
    return f"{v:,.0f}"


def fixed(digits: int) -> Callable[[float], str]:
    return lambda v: f"{v:,.{digits}f}"


def pct(digits: int, sign: bool = False) -> Callable[[float], str]:
    return lambda v: f"{100 * v:{'+' if sign else ''}.{digits}f}%"


@dataclass(frozen=True)
class Claim:
    snippet: str
    value: float
    fmt: Callable[[float], str]


@cache
def claims() -> tuple[Claim, ...]:
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    found = [
        Claim("Defaults: M = 8,192 (vLLM's default", MAX_BATCHED_TOKENS, n0),
        Claim("S = 256 (vLLM's long-standing", MAX_NUM_SEQS, n0),
        Claim("workspace and the 10% reserve", RESERVE_FRACTION, pct(0)),
        Claim("Example: 131,072 B per token", replica.kv_bytes_per_token_per_gpu, n0),
        Claim("(bf16), 60.5 GB of budget per GPU", replica.kv_budget_bytes_per_gpu / 1e9, fixed(1)),
        Claim("so K = 461,659 tokens", replica.kv_capacity_tokens, n0),
        Claim("the activation workspace is sized for 8,192 tokens", MAX_BATCHED_TOKENS, n0),
    ]
    # M/D/1 at rho = 0.5.
    fixed_len = {"prompt_tokens": FixedTokens(tokens=512), "output_tokens": FixedTokens(tokens=64)}
    service = simulate(replica, rate_per_second=1.0, requests=1, **fixed_len).e2e.mean_seconds
    rho = 0.5
    wait = simulate(replica, rate_per_second=rho / service, requests=40_000, seed=3, max_num_seqs=1,
                    **fixed_len).queue.mean_seconds
    pk = rho * service / (2 * (1 - rho))
    md1 = "a 512-token prompt and 64 output tokens take D = 0.4445 s alone (one prefill step and 63 decode steps)"
    found += [
        Claim(md1, 512, n0), Claim(md1, 64, n0), Claim(md1, service, fixed(4)), Claim(md1, 64 - 1, n0),
        Claim("rho = 0.5 (lambda = 1.125 requests/s)", rho, fixed(1)),
        Claim("rho = 0.5 (lambda = 1.125 requests/s)", rho / service, fixed(3)),
        Claim("Wq = rho x D / (2 (1 - rho)) = 0.2223 s", pk, fixed(4)),
        Claim("The simulator gives 0.2253 s over 40,000 requests (+1.4%; the bar is 5%)", wait, fixed(4)),
        Claim("The simulator gives 0.2253 s over 40,000 requests (+1.4%; the bar is 5%)", wait / pk - 1, pct(1, True)),
    ]
    # Little's law.
    chat = {"prompt_tokens": LognormalTokens(mean_tokens=1000, sigma=0.8),
            "output_tokens": LognormalTokens(mean_tokens=250, sigma=0.6)}
    run = simulate(replica, rate_per_second=8.0, requests=6000, seed=5, **chat)
    waiting, running = run.series.time_average(end_seconds=run.duration_seconds)
    throughput = run.completed / run.duration_seconds
    little = "throughput x mean E2E = 8.140 x 2.515 s = 20.47 (-0.4%; the bar is 3%)"
    found += [
        Claim("(lognormal, prompt mean 1,000, output mean 250) at 8 requests/s, 6,000 requests", 1000, n0),
        Claim("averages 20.39 in the system", waiting + running, fixed(2)),
        Claim(little, throughput, fixed(3)), Claim(little, run.e2e.mean_seconds, fixed(3)),
        Claim(little, throughput * run.e2e.mean_seconds, fixed(2)),
        Claim(little, (waiting + running) / (throughput * run.e2e.mean_seconds) - 1, pct(1)),
    ]
    # Zero load.
    prefill = step(replica.shape, replica.hardware, batch=1, new_tokens=1024, context_tokens=0).step_seconds
    decode = np.mean([step(replica.shape, replica.hardware, batch=1, new_tokens=1, context_tokens=1024 + j).step_seconds
                      for j in range(255)])
    found += [
        Claim("A 1,024-token prompt alone has TTFT = one prefill step = 27.62 ms", prefill * 1e3, fixed(2)),
        Claim("TPOT with 256 output tokens = the mean batch-1 decode step over its contexts = 6.866 ms",
              decode * 1e3, fixed(3)),
    ]
    # TensorRT-LLM.
    rows = validation.max_throughput_rows()
    by_label = {r.label: r for r in rows}
    h200 = by_label["Llama-3.1-8B-Instruct FP8 H200-SXM-141GB x1: ISL/OSL 128/128"]
    h100 = by_label["Llama-3.1-8B-Instruct FP8 H100-SXM-80GB x1: ISL/OSL 128/4096"]
    found += [
        Claim("**Median absolute error: 6.9%** over 20 rows (the bar is 20%)", validation.median_abs_error(rows), pct(1)),
        Claim("**Median absolute error: 6.9%** over 20 rows (the bar is 20%)", len(rows), n0),
        Claim("H200 at 128/128 is over-predicted by 13.2%", h200.error, pct(1)),
        Claim("H100 at 128/4096 is under-predicted by 13.3%", -h100.error, pct(1)),
        Claim("our overhead is a fixed 0.4 ms per step", replica.efficiency.overhead_seconds_per_step * 1e3, fixed(1)),
    ]
    # "sized by TensorRT-LLM's own rule, nine tenths of the memory the weights leave"
    engine = validation.trtllm_bench_engine(max_batched_tokens=MAX_BATCHED_TOKENS)
    assert (engine.kv_memory_rule, engine.kv_memory_fraction) == ("free_fraction", 0.9)
    assert "TensorRT-LLM's own rule, nine tenths of the memory the weights leave" in PAGE
    source = inspect.getsource(validation.trtllm_bench_settings)
    assert "* 0.95" in source and ", 4096)" in source and ", 32768)" in source
    heuristic = "the requests that fit 95% of the memory left after the weights, capped at 4,096; tokens that times 1 + ISL/OSL, capped at 32,768"
    found += [Claim(heuristic, 0.95, pct(0)), Claim(heuristic, 4096, n0), Claim(heuristic, 32768, n0)]
    # Confidence intervals and the converged capacity: the constants the code uses.
    found += [
        Claim("cut into 10 contiguous", confidence.BATCHES, n0),
        Claim("half-width 2.262 x sd / sqrt(10)", confidence.T_975_9_DOF, fixed(3)),
        Claim("Null under 20 samples", confidence.BATCHES * confidence.MIN_PER_BATCH, n0),
        Claim("Five capacity searches", serving_capacity.REPLICATIONS, lambda v: {5: "Five"}.get(int(v), str(v))),
        Claim("mean +- 2.776 x sd / sqrt(5)", serving_capacity.T_975_4_DOF, fixed(3)),
        Claim("(1,000 for the decision", serving_capacity.CONVERGE_START_REQUESTS, n0),
        Claim("5% of the capacity, or stops", serving_capacity.CONVERGED_HALF_WIDTH, pct(0)),
        Claim("stops at 8,000 requests per simulation", serving_capacity.MAX_CONVERGE_REQUESTS, n0),
        Claim("(5% for the decision", serving_capacity.CONVERGE_RATE_TOLERANCE, pct(0)),
    ]
    # Capacity at SLO.
    lengths = {"prompt_tokens": LognormalTokens(mean_tokens=1024, sigma=0.8),
               "output_tokens": LognormalTokens(mean_tokens=256, sigma=0.6)}
    tight = capacity_for_replica(replica, CapacitySearch(slo=[SloLimit("ttft", 90, 0.5), SloLimit("tpot", 90, 0.025)], **lengths))
    lenient = capacity_for_replica(replica, CapacitySearch(slo=[SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05)], **lengths))
    assert tight.feasible and not tight.saturation_bound and lenient.saturation_bound
    example = ("14.77 requests/s per replica, 3,684 output tokens/s, with TTFT p90 = 0.174 s and TPOT p90 = 23.7 ms"
               " there; TPOT binds. Saturation is 17.83 requests/s.")
    l4 = build_replica("llama-3.1-8b", "l4")
    l4_prefill = step(l4.shape, l4.hardware, batch=1, new_tokens=8000, context_tokens=0).step_seconds
    found += [
        Claim("(2,000 by default, seeded)", DEFAULT_REQUESTS, n0),
        Claim("8,000-token prompt: the prefill alone takes 2.36 s, so a 1 s TTFT p90 limit", l4_prefill, fixed(2)),
        Claim("to 2% of the rate", CapacitySearch.rate_tolerance, pct(0)),
        Claim("(prompt mean 1,024, sigma 0.8; output mean 256, sigma 0.6), TTFT p90 at most 0.5 s and TPOT p90 at most"
              " 25 ms:", 1024, n0),
        Claim(example, tight.max_rate_requests_per_second, fixed(2)),
        Claim(example, tight.output_tokens_per_second, n0),
        Claim(example, tight.ttft_p90_seconds, fixed(3)),
        Claim(example, tight.tpot_p90_seconds * 1e3, fixed(1)),
        Claim(example, tight.saturation_rate_requests_per_second, fixed(2)),
        Claim("with TTFT p90 at most 1 s and TPOT p90 at most 50 ms instead, the same replica is saturation-bound at"
              " 17.55 requests/s", lenient.max_rate_requests_per_second, fixed(2)),
    ]
    assert tight.tpot_p90_seconds / 0.025 > tight.ttft_p90_seconds / 0.5  # "TPOT binds"
    # Throughput vs interactivity.
    points = throughput_interactivity_curve(replica, prompt_tokens=FixedTokens(tokens=1024),
                                            output_tokens=FixedTokens(tokens=256), concurrency=(1, 16, 64, 256))
    found.append(Claim("Example, 1,024-token prompts and 256 output tokens:", 1024, n0))
    for point in points:
        row = f"| {point.concurrency} | {point.output_tokens_per_second_per_gpu:,.0f} | " \
              f"{point.output_tokens_per_second_per_user:.1f} |"
        found.append(Claim(row, point.output_tokens_per_second_per_user, fixed(1)))
    return tuple(found)


def test_every_claim_matches_the_page() -> None:
    wrong = [(c.fmt(c.value), c.snippet) for c in claims() if c.snippet not in PAGE or c.fmt(c.value) not in c.snippet]
    assert not wrong, "page and engine disagree (computed value, page snippet):\n" + "\n".join(map(str, wrong))


def test_every_number_on_the_page_is_claimed() -> None:
    text = re.sub(r"`[^`]*`", " ", PAGE)  # code spans name things, they do not state figures
    snippets = " || ".join(c.snippet for c in claims())
    numbers = re.findall(r"(?<![\w/.\-])\d[\d,]*(?:\.\d+)?%?(?![\w])", text)
    loose = sorted({n for n in numbers if n not in ALLOWED and n not in snippets})
    assert not loose, f"numbers on the page without a claim: {loose}"
