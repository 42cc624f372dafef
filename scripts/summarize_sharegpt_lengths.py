"""Summarize a per-request ShareGPT length trace into costmodel/data/sharegpt_length_quantiles.csv.

Input: JonnyKong/vidur data/processed_traces/sharegpt_v3_filtered.csv (commit
941a76c34cc3135db0dd13250252e4b23f7ea103, 2025-03-04, "Profile ShareGPT V3 input & output lengths";
https://github.com/JonnyKong/vidur/blob/941a76c34cc3135db0dd13250252e4b23f7ea103/data/processed_traces/sharegpt_v3_filtered.csv).
Its scripts/gen_sharegpt_length_trace.py (same commit) runs vLLM's benchmark_serving.py
sample_sharegpt_requests (copied from vllm-project/vllm commit 5fe6bf29) on ShareGPT_V3_unfiltered_cleaned_split.json
with the meta-llama/Llama-3.1-8B-Instruct tokenizer: first two turns, prompt and output under 4 tokens
dropped, prompt over 1,024 or prompt + output over 2,048 dropped, random.seed(0) shuffle, the first 16,384
that pass. sglang.bench_serving v0.3.0 (the ShareGPT rows' harness) applies the same filter with the same
tokenizer family (sample_sharegpt_requests in the sglang 0.3.0 wheel; only its seed, 1, differs).

Output: the percentiles of each length (every 1% to the 99th, then every 0.1% to the maximum: the
longest outputs end a saturated run, so the top is kept finer) and their Spearman rank correlation (the
two are anti-correlated), which costmodel/validation/sharegpt.py joins with a Gaussian copula. The trace
itself is not bundled.
Usage: python scripts/summarize_sharegpt_lengths.py PATH/TO/sharegpt_v3_filtered.csv [--write]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from costmodel.fileio import atomic_write_text
from costmodel.validation.sharegpt import QUANTILES_CSV

PERCENTS = tuple(float(p) for p in range(99)) + tuple(p / 10 for p in range(990, 1001))
HEADER = """\
# Percentiles of ShareGPT prompt / output token lengths as vLLM's benchmark_serving.py and sglang.bench_serving
# v0.3.0 sample them (ShareGPT_V3_unfiltered_cleaned_split.json, first two turns, prompt 4-1,024 tokens, output
# >= 4, prompt + output <= 2,048; Llama-3.1-8B-Instruct tokenizer). Source: the requests sampled in
# JonnyKong/vidur data/processed_traces/sharegpt_v3_filtered.csv, commit 941a76c34cc3135db0dd13250252e4b23f7ea103
# (2025-03-04): {requests:,} requests, {prompt:,} prompt and {output:,} output tokens in all (numpy percentile,
# linear). Written by scripts/summarize_sharegpt_lengths.py; read by costmodel/validation/sharegpt.py.
# spearman_rank_correlation: {spearman:.4f}
"""


def read_trace(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) per request of the trace CSV (header num_prefill_tokens,num_decode_tokens)."""
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    return table[:, 0], table[:, 1]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    def ranks(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="stable")
        r = np.empty(v.size)
        r[order] = np.arange(v.size)
        _, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse, weights=r)
        return (sums / counts)[inverse]
    return float(np.corrcoef(ranks(x), ranks(y))[0, 1])


def quantile_rows(prompt: np.ndarray, output: np.ndarray) -> list[str]:
    """One CSV line per percent: percent, prompt tokens, output tokens at that percentile."""
    p, o = np.percentile(prompt, PERCENTS), np.percentile(output, PERCENTS)
    return [f"{pc:g},{pv:.1f},{ov:.1f}" for pc, pv, ov in zip(PERCENTS, p, o, strict=True)]


def main(argv: list[str]) -> int:
    prompt, output = read_trace(Path(argv[0]))
    head = HEADER.format(requests=prompt.size, prompt=int(prompt.sum()), output=int(output.sum()),
                         spearman=spearman(prompt, output))
    text = head + "percent,prompt_tokens,output_tokens\n" + "\n".join(quantile_rows(prompt, output)) + "\n"
    print(f"{prompt.size} requests: mean prompt {prompt.mean():.2f}, mean output {output.mean():.2f} tokens")
    if "--write" in argv:
        atomic_write_text(QUANTILES_CSV, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
