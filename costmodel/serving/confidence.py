"""Confidence intervals of simulated percentiles: batch means over the run, in time order.

Why batch means and not a bootstrap: consecutive requests share queue states (a request arriving behind
a burst waits with its neighbours), so latencies are autocorrelated and resampling single requests as if
independent would give intervals that are too narrow. Cutting the run into `BATCHES` contiguous batches,
each long against that correlation, gives nearly independent batch percentiles (the method of batch
means, e.g. Law, "Simulation Modeling and Analysis", chapter on output data analysis). The interval is centred on the
whole run's percentile with half-width t(0.975, BATCHES - 1) x sd(batch percentiles) / sqrt(BATCHES).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BATCHES = 10
# Student t 0.975 quantile at 9 degrees of freedom: 2.262 (NIST/SEMATECH e-Handbook of Statistical Methods,
# table 1.3.6.7.2, https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm).
T_975_9_DOF = 2.262
MIN_PER_BATCH = 2  # fewer samples per batch give no interval (NaN bounds)


@dataclass(frozen=True)
class Interval:
    """A 95% confidence interval (s or requests/s; NaN bounds when too few samples)."""

    low: float
    high: float

    @classmethod
    def unknown(cls) -> Interval:
        return cls(math.nan, math.nan)


def weighted_percentiles(values: np.ndarray, weights: np.ndarray, percentiles: tuple[float, ...]) -> np.ndarray:
    """np.percentile (linear interpolation) of `values` with each value repeated `weights` (ints) times,
    without building the repeated array; one sort for all the percentiles."""
    order = np.argsort(values)
    return sorted_weighted_percentiles(values[order], weights[order], percentiles)


def sorted_weighted_percentiles(
    sorted_values: np.ndarray, weights: np.ndarray, percentiles: tuple[float, ...]
) -> np.ndarray:
    """`weighted_percentiles` of values already sorted ascending (weights in the same order)."""
    cumulative = np.cumsum(weights)
    total = int(cumulative[-1]) if cumulative.size else 0
    if total == 0:
        return np.full(len(percentiles), np.nan)
    position = np.asarray(percentiles, dtype=np.float64) / 100.0 * (total - 1)
    below = np.floor(position)
    above = np.minimum(below + 1, total - 1)
    low_value = sorted_values[np.searchsorted(cumulative, below, side="right")]
    high_value = sorted_values[np.searchsorted(cumulative, above, side="right")]
    fraction = position - below
    return np.where(fraction > 0, low_value + (high_value - low_value) * fraction, low_value)


def batch_means_interval(
    estimate: float, batch_estimates: np.ndarray, *, lower_bound: float = -math.inf
) -> Interval:
    """The interval around `estimate` from `BATCHES` batch estimates (infinite when a batch's is)."""
    if batch_estimates.size < BATCHES or not math.isfinite(estimate):
        return Interval.unknown() if not math.isinf(estimate) else Interval(estimate, estimate)
    if not np.all(np.isfinite(batch_estimates)):
        return Interval(max(float(np.nanmin(batch_estimates)), lower_bound), math.inf)
    half = T_975_9_DOF * float(np.std(batch_estimates, ddof=1)) / math.sqrt(BATCHES)
    return Interval(max(estimate - half, lower_bound), estimate + half)


def percentile_intervals(values: np.ndarray, percentiles: Sequence[float], *,
                         estimates: Sequence[float]) -> tuple[Interval, ...]:
    """`percentile_interval` for several percentiles at once: one np.percentile call per batch instead of one
    per batch and percentile (the same numbers; a simulation summary needs p50, p90 and p99 of each metric)."""
    if values.size < BATCHES * MIN_PER_BATCH:
        return tuple(Interval.unknown() for _ in percentiles)
    batches = batch_percentiles(values, percentiles)
    return tuple(batch_means_interval(float(estimate), batches[:, column], lower_bound=0.0)
                 for column, estimate in enumerate(estimates))


def batch_percentiles(values: np.ndarray, percentiles: Sequence[float]) -> np.ndarray:
    """(BATCHES, len(percentiles)): np.percentile of each np.array_split batch, batch in time order.

    array_split makes the first `size % BATCHES` batches one longer than the rest, so the batches stack into
    two rectangular arrays and np.percentile runs once per array along axis 1: the same numbers as one call
    per batch (the same algorithm on each row), two calls instead of ten (each call costs ~25 us of overhead,
    and a memo summarizes hundreds of simulated metrics)."""
    size = values.size
    short, long_count = divmod(size, BATCHES)
    split = long_count * (short + 1)
    parts = [values[:split].reshape(long_count, short + 1), values[split:].reshape(BATCHES - long_count, short)]
    rows = [np.percentile(part, list(percentiles), axis=1).T for part in parts if part.shape[0]]
    return np.concatenate(rows, axis=0)


def percentile_interval(values: np.ndarray, percentile: float, *, estimate: float | None = None) -> Interval:
    """95% interval of the `percentile` of `values` (in time order) by batch means."""
    if values.size < BATCHES * MIN_PER_BATCH:
        return Interval.unknown()
    if estimate is None:
        estimate = float(np.percentile(values, percentile))
    batches = np.array([np.percentile(batch, percentile) for batch in np.array_split(values, BATCHES)])
    return batch_means_interval(estimate, batches, lower_bound=0.0)
