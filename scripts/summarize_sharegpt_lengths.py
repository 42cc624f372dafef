"""Summarize a per-request ShareGPT length trace into costmodel/data/sharegpt_length_histogram.csv.

Input: JonnyKong/vidur data/processed_traces/sharegpt_v3_filtered.csv (commit
941a76c34cc3135db0dd13250252e4b23f7ea103, 2025-03-04, "Profile ShareGPT V3 input & output lengths";
https://github.com/JonnyKong/vidur/blob/941a76c34cc3135db0dd13250252e4b23f7ea103/data/processed_traces/sharegpt_v3_filtered.csv).
Its scripts/gen_sharegpt_length_trace.py (same commit) runs vLLM's benchmark_serving.py
sample_sharegpt_requests (copied from vllm-project/vllm commit 5fe6bf29) on ShareGPT_V3_unfiltered_cleaned_split.json
with the meta-llama/Llama-3.1-8B-Instruct tokenizer: first two turns, prompt and output under 4 tokens
dropped, prompt over 1,024 or prompt + output over 2,048 dropped, random.seed(0) shuffle, the first 16,384
that pass. sglang.bench_serving v0.3.0 (the ShareGPT rows' harness) applies the same filter with the same
tokenizer family (sample_sharegpt_requests in the sglang 0.3.0 wheel; only its seed, 1, differs).

Output: a joint histogram (the two lengths are correlated, -0.28, so the marginals are not kept apart) on
power-of-two bins, each cell with its sample count and its samples' mean prompt and output tokens. The
trace itself is not bundled.
Usage: python scripts/summarize_sharegpt_lengths.py PATH/TO/sharegpt_v3_filtered.csv [--write]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from costmodel.fileio import atomic_write_text
from costmodel.validation.sharegpt import HISTOGRAM_CSV

# Power-of-two bin edges in tokens; the last prompt bin holds 1,024 (the filter's inclusive maximum).
EDGES = (4, 8, 16, 32, 64, 128, 256, 512, 1025, 2049)
HEADER = """\
# Joint histogram of ShareGPT prompt / output token lengths as vLLM's benchmark_serving.py and sglang.bench_serving
# v0.3.0 sample them (ShareGPT_V3_unfiltered_cleaned_split.json, first two turns, prompt 4-1,024 tokens, output
# >= 4, prompt + output <= 2,048; Llama-3.1-8B-Instruct tokenizer). Source: the requests sampled in
# JonnyKong/vidur data/processed_traces/sharegpt_v3_filtered.csv, commit 941a76c34cc3135db0dd13250252e4b23f7ea103
# (2025-03-04): {requests:,} requests, {prompt:,} prompt and {output:,} output tokens in all. Cells: [lo, hi)
# power-of-two bins; samples and their mean lengths. Written by scripts/summarize_sharegpt_lengths.py; read by
# costmodel/validation/sharegpt.py.
"""


def read_trace(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) per request of the trace CSV (header num_prefill_tokens,num_decode_tokens)."""
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    return table[:, 0], table[:, 1]


def histogram_rows(prompt: np.ndarray, output: np.ndarray) -> list[str]:
    """One CSV line per non-empty cell: prompt_lo, prompt_hi, output_lo, output_hi, samples, means."""
    rows = []
    for p_lo, p_hi in zip(EDGES[:-1], EDGES[1:], strict=True):
        for o_lo, o_hi in zip(EDGES[:-1], EDGES[1:], strict=True):
            cell = (prompt >= p_lo) & (prompt < p_hi) & (output >= o_lo) & (output < o_hi)
            if cell.any():
                rows.append(f"{p_lo},{p_hi},{o_lo},{o_hi},{int(cell.sum())},"
                            f"{prompt[cell].mean():.1f},{output[cell].mean():.1f}")
    return rows


def main(argv: list[str]) -> int:
    prompt, output = read_trace(Path(argv[0]))
    body = "prompt_lo,prompt_hi,output_lo,output_hi,samples,mean_prompt_tokens,mean_output_tokens\n"
    totals = HEADER.format(requests=prompt.size, prompt=int(prompt.sum()), output=int(output.sum()))
    text = totals + body + "\n".join(histogram_rows(prompt, output)) + "\n"
    print(f"{prompt.size} requests: mean prompt {prompt.mean():.2f}, mean output {output.mean():.2f} tokens; "
          f"correlation {np.corrcoef(prompt, output)[0, 1]:.3f}")
    if "--write" in argv:
        atomic_write_text(HISTOGRAM_CSV, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
