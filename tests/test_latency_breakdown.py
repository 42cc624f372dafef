"""Which layer owns the latency: TTFT/TPOT breakdowns sum to their percentile and name the right owner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.catalog.engines import load_engine
from costmodel.cli import main
from costmodel.scenario.distributions import FixedTokens
from costmodel.serving import build_replica, simulate
from costmodel.serving.breakdown import LatencyBreakdown, latency_owner, own_prefill_seconds, owner_sentence
from costmodel.serving.profile import engine_settings

PROMPT, OUTPUT = FixedTokens(tokens=1024), FixedTokens(tokens=128)
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "chat-assistant.yaml"
BASE = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "1024", "--output-tokens", "128"]


def test_parts_sum_to_the_percentile() -> None:
    result = simulate(build_replica("llama-3.1-8b", "h100-sxm"), prompt_tokens=PROMPT, output_tokens=OUTPUT,
                      rate_per_second=15.0, requests=600, seed=2)
    for metric, summary in (("ttft", result.ttft), ("tpot", result.tpot)):
        for pct, value in ((50.0, summary.p50_seconds), (90.0, summary.p90_seconds)):
            part = result.breakdown(metric, pct)
            assert part is not None and part.total_seconds == value
            assert sum(part.as_dict().values()) == pytest.approx(value, rel=1e-9)
            assert all(seconds >= 0 for seconds in part.as_dict().values())


def test_a_request_alone_is_all_prefill_compute_plus_overhead() -> None:
    slow = load_engine("generic").model_copy(update={"id": "test-slow", "request_overhead_seconds": 0.05})
    replica = build_replica("llama-3.1-8b", "h100-sxm", engine=engine_settings(slow))
    result = simulate(replica, prompt_tokens=PROMPT, output_tokens=OUTPUT, rate_per_second=1.0, requests=1)
    parts = result.breakdown("ttft", 50.0).as_dict()  # type: ignore[union-attr]
    alone = own_prefill_seconds(replica, uncached_tokens=1024, cached_tokens=0)
    assert parts["request_overhead"] == pytest.approx(0.05, rel=1e-9)
    assert parts["queueing"] == pytest.approx(0.0, abs=1e-12)
    # 1024 tokens fit the 8192-token budget: one prefill step, the whole TTFT after the overhead.
    assert parts["prefill_compute"] == pytest.approx(alone, rel=1e-9)
    assert result.ttft.p50_seconds == pytest.approx(0.05 + alone, rel=1e-9)
    # Batch-1 decode of an 8B model in bf16 on an H100 streams 16 GB of weights per token: weights own TPOT.
    assert result.breakdown("tpot", 50.0).owner[0] == "weight_reads"  # type: ignore[union-attr]


def test_overload_is_owned_by_queueing() -> None:
    result = simulate(build_replica("llama-3.1-8b", "h100-sxm"), prompt_tokens=PROMPT, output_tokens=OUTPUT,
                      rate_per_second=200.0, requests=600, seed=1)
    ttft = result.breakdown("ttft", 90.0)
    assert ttft is not None and ttft.owner[0] == "queueing" and ttft.owner[1] > 0.5
    assert owner_sentence(ttft).startswith("p90 TTFT is ") and "queueing: add a replica" in owner_sentence(ttft)


def test_owner_sentence_format() -> None:
    ttft = LatencyBreakdown(metric="ttft", percentile=90.0, total_seconds=1.0,
                            parts_seconds=(("queueing", 0.7), ("prefill_compute", 0.3)))
    assert owner_sentence(ttft) == "p90 TTFT is 70% queueing: add a replica or cap the batch; faster kernels won't help"
    assert latency_owner(None, None) is None
    assert latency_owner(ttft, None) == owner_sentence(ttft)


def test_simulate_json_breakdowns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *BASE, "--rate", "10", "--requests", "300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["ttft_breakdown_seconds"]) == {"request_overhead", "queueing", "prefill_wait", "prefill_compute"}
    assert sum(out["ttft_breakdown_seconds"].values()) == pytest.approx(out["ttft_p50_seconds"], rel=1e-9)
    assert {"weight_reads", "kv_reads", "compute", "communication", "step_overhead"} <= set(out["tpot_breakdown_seconds"])
    assert sum(out["tpot_breakdown_seconds"].values()) == pytest.approx(out["tpot_p50_seconds"], rel=1e-9)


def test_compare_json_names_the_latency_owner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(EXAMPLE), "--json"]) == 0
    options = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert all("latency_owner" in o for o in options.values())
    owners = [o["latency_owner"] for o in options.values() if o["kind"] == "self-host" and o["meets_slo"]]
    assert owners and all(text.startswith("p90 TTFT is ") and "p90 TPOT is " in text for text in owners)
    assert all(o["latency_owner"] is None for o in options.values() if o["kind"] == "api")
