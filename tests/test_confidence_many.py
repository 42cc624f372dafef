"""percentile_intervals (one np.percentile call per batch, for the simulator's summaries) gives exactly
the intervals of percentile_interval called once per percentile."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costmodel.serving.confidence import BATCHES, batch_percentiles, percentile_interval, percentile_intervals


@pytest.mark.parametrize("size", [5, 199, 200, 1001, 4096])
def test_same_intervals_as_one_call_per_percentile(size: int) -> None:
    values = np.random.default_rng(7).gamma(2.0, 0.05, size=size)
    percentiles = (50.0, 90.0, 99.0)
    estimates = tuple(float(v) for v in np.percentile(values, percentiles))
    together = percentile_intervals(values, percentiles, estimates=estimates)
    for interval, percentile, estimate in zip(together, percentiles, estimates, strict=True):
        alone = percentile_interval(values, percentile, estimate=estimate)
        for a, b in ((interval.low, alone.low), (interval.high, alone.high)):
            assert (math.isnan(a) and math.isnan(b)) or a == b


def test_infinite_values_keep_an_open_interval() -> None:
    values = np.concatenate([np.linspace(0.1, 1.0, 900), np.full(100, np.inf)])  # the last batch never finishes
    (p50, p99) = percentile_intervals(values, (50.0, 99.0), estimates=(float(np.percentile(values, 50)), math.inf))
    assert math.isfinite(p50.low)
    assert p99.high == math.inf
    assert p99 == percentile_interval(values, 99.0, estimate=math.inf)


@pytest.mark.parametrize("size", [20, 29, 30, 1001, 4097])
def test_batch_percentiles_equal_one_call_per_batch(size: int) -> None:
    # The stacked form (two rectangular arrays, one np.percentile per array along axis 1) must give the
    # very numbers of np.percentile on each np.array_split batch, infinities (and the NaN numpy makes of
    # inf - inf when interpolating next to one) included.
    values = np.random.default_rng(size).lognormal(0.0, 1.5, size=size)
    values[size // 3] = np.inf
    percentiles = (50.0, 90.0, 99.0)
    expected = np.array([np.percentile(batch, percentiles) for batch in np.array_split(values, BATCHES)])
    assert np.array_equal(batch_percentiles(values, percentiles), expected, equal_nan=True)
