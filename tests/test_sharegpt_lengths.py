"""ShareGPT's spread of lengths for the offline ShareGPT rows (costmodel/validation/sharegpt.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from costmodel.validation import sharegpt

ROOT = Path(__file__).resolve().parents[1]


def _summarizer():
    spec = importlib.util.spec_from_file_location("summarize", ROOT / "scripts" / "summarize_sharegpt_lengths.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_histogram_holds_the_cited_trace() -> None:
    table = np.array(sharegpt.histogram())
    samples = table[:, 0]
    # JonnyKong/vidur sharegpt_v3_filtered.csv (commit 941a76c3): 16,384 requests whose means are
    # 3,598,561 / 16,384 = 219.64 prompt and 3,265,280 / 16,384 = 199.30 output tokens (summed from the trace);
    # each cell's mean is rounded to 0.1 token, so the weighted means agree to within 0.05.
    assert samples.sum() == 16_384
    assert abs((samples * table[:, 1]).sum() / 16_384 - 3_598_561 / 16_384) < 0.05
    assert abs((samples * table[:, 2]).sum() / 16_384 - 3_265_280 / 16_384) < 0.05


def test_lengths_respect_the_harness_filter_and_are_deterministic() -> None:
    prompt, output = sharegpt.sharegpt_lengths(requests=5_000)
    again = sharegpt.sharegpt_lengths(requests=5_000)
    assert prompt.size == output.size == 5_000
    assert np.array_equal(prompt, again[0]) and np.array_equal(output, again[1])
    # sample_sharegpt_requests keeps prompts of 4-1,024 tokens, outputs of >= 4 and pairs of <= 2,048
    assert prompt.min() >= 4 and prompt.max() <= 1_024 and output.min() >= 4
    assert (prompt + output).max() <= 2_048
    # 5,000 requests split in proportion over the cells keep the trace's means within a token
    assert abs(prompt.mean() - 219.64) < 1.0 and abs(output.mean() - 199.30) < 1.0


def test_cell_counts_split_exactly_in_proportion() -> None:
    # quotas 10 * (1, 2, 7) / 10 = 1, 2, 7; and 4 * (1, 1, 2) / 4 = 1, 1, 2: exact totals either way
    assert sharegpt.cell_counts(np.array([1.0, 2.0, 7.0]), requests=10).tolist() == [1, 2, 7]
    # 5 * (1, 1, 1) / 3 = 1.67 each: floors 1, 1, 1 and the two largest remainders (the first two) get one more
    assert sharegpt.cell_counts(np.array([1.0, 1.0, 1.0]), requests=5).tolist() == [2, 2, 1]


def test_summarizer_bins_on_powers_of_two() -> None:
    summarize = _summarizer()
    prompt = np.array([4, 5, 1024, 600])
    output = np.array([4, 7, 1000, 1100])
    rows = summarize.histogram_rows(prompt, output)
    # (4, 4) and (5, 7) share the [4, 8) x [4, 8) cell; 1,024 falls in the last prompt bin [512, 1025)
    assert rows == ["4,8,4,8,2,4.5,5.5", "512,1025,512,1025,1,1024.0,1000.0", "512,1025,1025,2049,1,600.0,1100.0"]
