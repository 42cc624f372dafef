"""ShareGPT's spread of lengths for the offline ShareGPT rows (costmodel/validation/sharegpt.py)."""

from __future__ import annotations

import math

import numpy as np

from costmodel.validation import sharegpt


def test_quantiles_hold_the_cited_trace() -> None:
    table = sharegpt.quantiles()
    # JonnyKong/vidur sharegpt_v3_filtered.csv (commit 941a76c3): prompts 4-1,024, outputs 4-1,853 tokens
    assert (table.prompt_tokens[0], table.prompt_tokens[-1]) == (4.0, 1024.0)
    assert (table.output_tokens[0], table.output_tokens[-1]) == (4.0, 1853.0)
    assert table.percents[0] == 0.0 and table.percents[-1] == 100.0 and len(table.percents) == 110
    # Gaussian copula correlation 2 sin(pi * -0.4087 / 6) = -0.4247
    assert math.isclose(table.normal_correlation, 2 * math.sin(math.pi * -0.4087 / 6))


def test_lengths_respect_the_harness_filter_and_are_deterministic() -> None:
    prompt, output = sharegpt.sharegpt_lengths(requests=5_000)
    again = sharegpt.sharegpt_lengths(requests=5_000)
    assert prompt.size == output.size == 5_000
    assert np.array_equal(prompt, again[0]) and np.array_equal(output, again[1])
    assert prompt.min() >= 4 and prompt.max() <= 1_024 and output.min() >= 4
    assert (prompt + output).max() <= 2_048
    # the trace's means are 3,598,561 / 16,384 = 219.64 and 3,265,280 / 16,384 = 199.30; one draw of 5,000
    # lands within a few percent (its standard error is about 240 / sqrt(5,000) = 3.4 tokens)
    assert abs(prompt.mean() - 219.64) < 10 and abs(output.mean() - 199.30) < 10
    assert np.corrcoef(prompt, output)[0, 1] < -0.2  # anti-correlated, as in the trace (-0.28)
