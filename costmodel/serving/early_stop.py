"""Stopping a run whose SLO verdict is already certain to be a miss (the capacity search's failing runs).

A capacity search reads only the verdict of a run that misses its SLO, so such a run can stop as soon as
the miss is certain. At simulated time `now` every request's final latency is bounded below: TTFT and E2E
by what is known (first token, finish) or else by `now - arrival`, since every later token comes at `now` or
after; TPOT, for a request with its first token, by the same bound on its E2E (each floating-point step
here, a subtraction and a division by a positive count, is monotone, so the bound holds in floats too). A
rejected request counts as an infinite latency, as in `RequestTrace.at_percentile`. When at least
N - j requests of a limit's N values are certainly over the limit, where j = floor((N - 1) p / 100) - 1 is
one below numpy's linear-interpolation index (a margin for rounding in that index), the sorted value at
numpy's index is over the limit, and so is the interpolated percentile (numpy's `_lerp` lies between its
two neighbours): the verdict is a miss whatever the rest of the run does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from costmodel.scenario.slo import SloLimit
from costmodel.serving.engine_io import float_array
from costmodel.serving.engine_requests import RequestState

# Engine events before the first check, and the bounds of the gap between checks: a check costs a few array
# passes over the open requests, so the gap doubles while no limit is half way to a certain miss (a run that
# meets the SLO is checked a few times only) and halves once one is.
CHECK_EVERY_EVENTS = 64
MAX_CHECK_EVERY_EVENTS = 1024


T = TypeVar("T")


class SloMissed(Exception):
    """Raised from the engine loop once the run's SLO verdict is certain to be a miss."""


def unless_missed(run: Callable[[], T]) -> T | None:
    """`run()`, or None when it stopped on a certain SLO miss (`SloMissed`)."""
    try:
        return run()
    except SloMissed:
        return None


def misses_needed(*, values: int, percentile: float) -> int:
    """Values over the limit (of `values`) that make the percentile over it for sure (> values: never)."""
    if values == 0:
        return 1  # no values: the percentile is 0 and meets any limit
    return values - max(math.floor((values - 1) * percentile / 100.0) - 1, 0)


class MissCheck:
    """Raises `SloMissed` when called at a time where some limit is certainly missed (module docstring).

    Built for the requests the engine runs (arrival order): their arrival times as the trace counts them,
    their output tokens, and the output tokens of the rejected requests (infinite latencies). Requests whose
    metric is final (first token or finish known) up to the first one still open are tallied once (`_settled`):
    each check reads only the requests from there to the last arrival by `now`, as later ones have no latency."""

    def __init__(self, limits: Sequence[SloLimit], *, arrival_seconds: np.ndarray, output_tokens: np.ndarray,
                 rejected_output_tokens: np.ndarray) -> None:
        self._arrival = np.asarray(arrival_seconds, dtype=np.float64)
        self._outputs = np.asarray(output_tokens)
        # output - 1 as a float (numpy divides by an int64 array as by its float64 conversion), NaN where 1
        self._tpot_divisor = np.where(self._outputs > 1, self._outputs - 1, np.nan).astype(np.float64)
        self._limits: dict[str, list[tuple[SloLimit, int]]] = {}  # by metric: (limit, misses that decide it)
        for limit in limits:
            rejected = len(rejected_output_tokens) if limit.metric != "tpot" else int((rejected_output_tokens > 1).sum())
            values = (len(self._arrival) if limit.metric != "tpot" else int((self._outputs > 1).sum())) + rejected
            needed = misses_needed(values=values, percentile=limit.percentile) - rejected
            self._limits.setdefault(limit.metric, []).append((limit, needed))
        self._start = dict.fromkeys(self._limits, 0)  # by metric: the first request whose metric is still open
        self._settled = {limit.key: 0 for pairs in self._limits.values() for limit, _ in pairs}  # misses before it
        self._gap = CHECK_EVERY_EVENTS

    def lower_bounds(self, metric: str, *, now_seconds: float, start: int, first: np.ndarray,
                     finish: np.ndarray) -> np.ndarray:
        """Lower bounds of `metric` of requests start.. (first token and finish times given for them; the
        exact value where final; NaN where TPOT does not apply: one output token, or no first token yet)."""
        arrival = self._arrival[start:start + len(first)]
        if metric == "ttft":
            return np.nan_to_num(first, nan=now_seconds) - arrival
        e2e = np.nan_to_num(finish, nan=now_seconds) - arrival
        if metric == "e2e":
            return e2e
        # As RequestTrace.values, (e2e - ttft) / (output - 1); the divisor is NaN for one-token outputs.
        return (e2e - (first - arrival)) / self._tpot_divisor[start:start + len(first)]

    def __call__(self, now_seconds: float, requests: RequestState) -> int:
        """Raise `SloMissed` when a limit is certainly missed at `now_seconds` (the engine's lists so far); else
        the engine events until the next check."""
        near = False
        arrived = int(np.searchsorted(self._arrival, now_seconds, side="right"))
        for metric, pairs in self._limits.items():
            start = self._start[metric]
            first = float_array(requests.first_token_seconds[start:arrived])
            finish = float_array(requests.finish_seconds[start:arrived]) if metric != "ttft" else first
            low = self.lower_bounds(metric, now_seconds=now_seconds, start=start, first=first, finish=finish)
            open_at = np.flatnonzero(np.isnan(first if metric == "ttft" else finish))
            final = int(open_at[0]) if open_at.size else len(low)  # low[:final] are final values
            for limit, needed in pairs:
                over = low > limit.limit_seconds  # NaN (TPOT n/a) compares False
                settled = self._settled[limit.key] + int(np.count_nonzero(over[:final]))
                self._settled[limit.key] = settled
                misses = settled + int(np.count_nonzero(over[final:]))
                if needed <= 0 or misses >= needed:
                    raise SloMissed(f"{limit.key} certainly over {limit.limit_seconds:g} s")
                near = near or 2 * misses >= needed
            self._start[metric] = start + final
        self._gap = max(self._gap // 2, CHECK_EVERY_EVENTS) if near else min(2 * self._gap, MAX_CHECK_EVERY_EVENTS)
        return self._gap


class RateBound:
    """For a run read only for its completed requests/s (the capacity search's saturation run): passes an upper
    bound on that rate to `on_bound`, which may raise to stop the run. While requests are still open at `now`,
    the run lasts at least `now - start` (its last finish is at `now` or after), so the rate, completed over
    that duration, is at most `completed / (now - start)`, a bound that falls as the run goes on."""

    def __init__(self, on_bound: Callable[[float], None], *, completed: int, start_seconds: float) -> None:
        self._on_bound, self._completed, self._start = on_bound, completed, start_seconds

    def __call__(self, now_seconds: float, requests: RequestState) -> int:
        if now_seconds > self._start:
            self._on_bound(self._completed / (now_seconds - self._start))
        return MAX_CHECK_EVERY_EVENTS // 4
