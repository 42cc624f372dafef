"""Serving simulator vs NVIDIA's TensorRT-LLM max-throughput table (llama-3.1-8b fp8, H100/H200 SXM).

Target (issue 4): median |error| <= 20% with the catalog's default efficiencies (none fitted to these rows).
"""

from __future__ import annotations

from costmodel.validation import max_throughput_rows, median_abs_error, trtllm_bench_settings


def test_trtllm_bench_heuristic_by_hand() -> None:
    # tensorrt_llm/bench/build/tuning.py on an 80 GiB H100, llama-3.1-8b fp8 weights + fp8 KV:
    # engine 8.03e9 B = 7.48 GiB; KV cache 0.95 x (80 - 7.48) = 68.9 GiB;
    # KV per token 2 x 32 layers x 8 heads x 128 x 1 B = 65,536 B = 6.10e-5 GiB.
    # ISL/OSL 128/128: 68.9 / (6.10e-5 x 256) = 4,409 requests -> capped at 4096 (a multiple of 256);
    #   tokens 4096 x (1 + 128/128) = 8192 -> 8192.
    assert trtllm_bench_settings(model_id="llama-3.1-8b", hardware_id="h100-sxm", input_tokens=128,
                                 output_tokens=128) == (4096, 8192)
    # 20000/2000: 68.9 / (6.10e-5 x 22000) = 51.3 -> max(64, 32 x ceil(51.3 / 32)) = 64;
    #   tokens 51.3 x 11 = 564 -> max(2048, 768) = 2048.
    assert trtllm_bench_settings(model_id="llama-3.1-8b", hardware_id="h100-sxm", input_tokens=20000,
                                 output_tokens=2000) == (64, 2048)


def test_max_throughput_against_trtllm_bench() -> None:
    rows = max_throughput_rows()
    assert len(rows) == 20  # ten ISL/OSL shapes x {H100 SXM, H200 SXM}
    assert {r.hardware_id for r in rows} == {"h100-sxm", "h200"}
    assert median_abs_error(rows) <= 0.20
    assert max(abs(r.error) for r in rows) <= 0.35  # no row wildly off
