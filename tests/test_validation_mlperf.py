"""MLPerf Inference v4.1 rows (issue 26 item 7): pinned sources, the layout each row states, the split, the
length inputs, the steady-state measurement, and docs/validation.md printing the figures computed here."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from costmodel.serving.results import RequestTrace
from costmodel.validation import categories as cats
from costmodel.validation import mlperf, read_reference_rows

DOC = Path(__file__).resolve().parents[1] / "docs" / "validation.md"
SUMMARY = re.compile(r"^mlcommons/inference_results_v4\.1 (closed/[^/]+/results/[^/]+/(llama2-70b-99|mixtral-8x7b)/"
                     r"(Offline|Server)/performance/run_1/mlperf_log_summary\.txt), commit ([0-9a-f]{40}), "
                     r"https://github\.com/mlcommons/inference_results_v4\.1/blob/\4/\1; layout: closed/")


def _rows() -> list[dict[str, str]]:
    return [r for r in read_reference_rows() if r["metric"] in mlperf.METRICS]


def test_rows_cite_their_summary_log_and_layout() -> None:
    rows = _rows()
    assert len(rows) == 70
    for row in rows:
        match = SUMMARY.match(row["source"])
        assert match, row["source"]
        scenario = match.group(3)
        assert f"closed {scenario}," in row["scenario"]
        assert (scenario == "Offline") == (row["metric"] == "mlperf_offline_tokens_per_second")
        assert row["precision"] == "FP8" and row["unit"] == "tok/s (all GPUs)"
        layout = mlperf.layout_of(row)
        assert layout.tp * layout.replicas == int(row["n_gpus"])  # copies of the stated TP fill the system
    # One row per system, benchmark and scenario.
    keys = [(r["scenario"].split(":")[0], r["metric"]) for r in rows]
    assert len(set(keys)) == len(keys)


def test_layouts_are_what_the_configs_state() -> None:
    by_gpu = {(r["model"], r["hardware"], r["metric"]): mlperf.layout_of(r) for r in _rows()}
    # NVIDIA llama2-70b configs: H100 TP2 with 896 (Offline) / 1024 (Server); H200 TP1 with 806 / 896.
    offline, server = "mlperf_offline_tokens_per_second", "mlperf_server_completed_tokens_per_second"
    assert by_gpu[("Llama-2-70B", "H100-SXM-80GB", offline)].tp == 2
    assert by_gpu[("Llama-2-70B", "H200-SXM-141GB", offline)].max_num_seqs == 806
    assert by_gpu[("Llama-2-70B", "H200-SXM-141GB", server)].max_num_seqs == 896
    mi300x = by_gpu[("Llama-2-70B", "MI300X-192GB", offline)]
    assert mi300x.vllm and mi300x.tp == 1 and mi300x.max_num_seqs == 2048 and mi300x.memory_fraction == 0.99
    engine = mlperf.engine_of(by_gpu[("Llama-2-70B", "H100-SXM-80GB", offline)])
    assert (engine.kv_policy, engine.kv_memory_rule, engine.kv_memory_fraction) == ("preempt", "free_fraction", 0.9)
    assert not mlperf.engine_of(mi300x).mixed_prefill_decode  # vLLM 0.4.3 with chunked prefill off


def test_output_means_come_from_each_log() -> None:
    for row in _rows():
        mean = float(row["output_len"])
        assert (280 < mean < 300) if row["model"] == "Llama-2-70B" else (140 < mean < 150), row["scenario"]
    # TEST06's 100 logged lengths (the spread): their means by hand from the stored logs.
    assert statistics.mean(mlperf.test06_counts("llama2-70b")) == pytest.approx(278.71)
    assert statistics.mean(mlperf.test06_counts("mixtral-8x7b")) == pytest.approx(140.03)
    draws = mlperf.output_lengths("llama2-70b", mean_tokens=290.3, requests=20000)
    assert draws.mean() == pytest.approx(290.3, rel=0.02) and draws.min() >= 1
    # Prompts: each dataset's summed input tokens over its samples (the cited per-sample lengths), by hand:
    # 5,463,976 / 24,576 = 222.33 and 6,410,905 / 15,000 = 427.39.
    assert mlperf.INPUT_TOKENS == {"Llama-2-70B": (5_463_976, 24_576), "Mixtral-8x7B": (6_410_905, 15_000)}
    assert mlperf.PROMPT_TOKENS == {"Llama-2-70B": 222, "Mixtral-8x7B": 427}


def test_window_throughput_by_hand() -> None:
    # Two requests of 11 tokens: first token at 0 and 10 s, last at 10 and 20 s; window [5, 15].
    trace = RequestTrace(arrival_seconds=np.array([0.0, 0.0]), admitted_seconds=np.array([0.0, 0.0]),
                         first_token_seconds=np.array([0.0, 10.0]), finish_seconds=np.array([10.0, 20.0]),
                         prompt_tokens=np.array([5, 5]), cached_tokens=np.array([0, 0]),
                         output_tokens=np.array([11, 11]), rejected=np.array([False, False]))
    # Request 1: 10 later tokens over [0, 10], half in the window = 5; request 2: its first token + 5.
    assert mlperf.window_tokens_per_second(trace, start=5.0, end=15.0) == pytest.approx(11 / 10)


def test_split_has_both_halves_and_ignores_the_value() -> None:
    for key in ("mlperf_offline", "mlperf_server"):
        members = [r for r in _rows() if cats.category_of(r) == key]
        held = [r for r in members if cats.is_holdout(r)]
        assert len(members) == 35 and 5 < len(held) < 30, key
        assert all(cats.is_holdout(r) == cats.is_holdout(dict(r, value="1")) for r in members)


def test_server_rows_report_the_offered_load_when_the_copy_keeps_up() -> None:
    # Completed tokens/s caps at the simulated capacity: where the simulated p99 TTFT is within the limit the
    # prediction is the offered load (scheduled QPS x mean output), within a few percent.
    for row in _rows():
        qps = mlperf.scheduled_qps(row)
        if qps is None:
            continue
        pred = mlperf.predict_mlperf(row, "llama-2-70b" if row["model"] == "Llama-2-70B" else "mixtral-8x7b",
                                     cats.HARDWARE_IDS[row["hardware"]])
        offered = qps * float(row["output_len"])
        assert pred.tokens_per_second <= offered * 1.05
        assert pred.ttft_p99_seconds is not None
        if pred.ttft_p99_seconds <= mlperf.latency_limits(row)[0]:
            assert pred.tokens_per_second == pytest.approx(offered, rel=0.05)


def test_doc_prints_the_mlperf_figures() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = [r for r in cats.category_rows() if r.category.startswith("mlperf")]
    for key in ("mlperf_offline", "mlperf_server"):
        s = cats.summarize_category([r for r in rows if r.category == key])
        assert s.holdout_median_abs_error is not None and s.tuning_median_abs_error is not None
        assert (f"held-out half **{s.holdout_median_abs_error:.1%}** over {s.holdout_evaluated} rows, tuning half "
                f"{s.tuning_median_abs_error:.1%} over {s.tuning_evaluated}") in text
    for r in rows:
        assert r.predicted is not None and f"| {r.label} | {r.metric} | {r.measured:,.2f} | {r.predicted:,.2f} |" in text
    assert "5,463,976 tokens over 24,576 samples = 222.3" in text and "6,410,905 tokens over 15,000 samples = 427.4" in text
    assert "| 222 / 427 (headline) |" in text and "| 512 / 1,024 |" in text  # the old assumed midpoints, last
