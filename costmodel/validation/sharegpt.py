"""ShareGPT request lengths with their spread, for the offline ShareGPT reference rows.

sglang.bench_serving (the rows' harness, v0.3.0) sends ShareGPT's first-turn prompts with their own
lengths and forces each output to its first answer's length (ignore_eos on by default), so a run mixes
4-token and 1,000-token prompts and outputs. `data/sharegpt_length_histogram.csv` holds that mix as a
joint histogram of 16,384 requests sampled the same way with the same tokenizer family (sources in the
file and in scripts/summarize_sharegpt_lengths.py); its means are 219.6 prompt and 199.3 output tokens,
near the 230 / 194 the rows' own sources give (the samples differ: other seeds).

Validation only: nothing in the user-facing model reads it.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

HISTOGRAM_CSV = Path(__file__).resolve().parents[1] / "data" / "sharegpt_length_histogram.csv"


@functools.cache
def histogram() -> tuple[tuple[int, float, float], ...]:
    """(samples, mean prompt tokens, mean output tokens) of each cell of the bundled histogram."""
    lines = [ln for ln in HISTOGRAM_CSV.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    cells = [ln.split(",") for ln in lines[1:]]  # after the header; columns 4-6: samples, the two means
    return tuple((int(c[4]), float(c[5]), float(c[6])) for c in cells)


def cell_counts(samples: np.ndarray, *, requests: int) -> np.ndarray:
    """`requests` split over the cells in proportion to their samples (largest remainder: exact total)."""
    quotas = samples * requests / samples.sum()
    counts = np.floor(quotas).astype(np.int64)
    short = requests - int(counts.sum())
    counts[np.argsort(-(quotas - counts), kind="stable")[:short]] += 1
    return counts


def sharegpt_lengths(*, requests: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) of `requests` ShareGPT requests: each histogram cell's share of them
    at the cell's mean lengths, in an order shuffled with `seed` (the harness shuffles the dataset)."""
    table = np.array(histogram())
    counts = cell_counts(table[:, 0], requests=requests)
    prompt = np.repeat(np.rint(table[:, 1]).astype(np.int64), counts)
    output = np.repeat(np.rint(table[:, 2]).astype(np.int64), counts)
    order = np.random.default_rng(seed).permutation(requests)
    return prompt[order], output[order]
