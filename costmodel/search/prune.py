"""The wave rule of the search (search/run.py): which queued candidates may still enter the result.

A candidate is pruned when the bounds (true bounds, see `search.screen`) show it cannot meet the SLO, or when its
lower bound of the ranked cost (`Screened.ranked_lower`: $/month, with a reserved term past the horizon counted,
decision/commitment.py) is above the K-th cheapest SLO-feasible row simulated so far by that cost (same-cost variants are one row,
search/rows.py, so a tie within `TIE_USD` is simulated to list it), so it cannot enter the top K; with
`keep_front` it is then kept unless a simulated SLO-feasible row costs <= its lower bound and gives >= its
tokens/s per user upper bound (month 0's $/month, the fronts' basis, on both sides).

A candidate pruned leaves the queue for good. `WaveRule.settle` applies the rule to the whole queue at once: the
queue is sorted by the lower bound, so the candidates at or under the K-th cost (+ the tie) are one prefix, found
by bisection, and the rows' front is read by bisection too (`RowFront`), instead of testing every queued
candidate against every row (`pruned`, the one-candidate reference, tested equal). The result is the same list,
in the same order, as testing each candidate in turn (a lower bound is never NaN:
`cost_bound` rounds replicas up with math.ceil, which raises on NaN).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from costmodel.search.rows import Configuration, collapse_key
from costmodel.search.screen import Screened

TIE_USD = 0.005  # half a cent: a bound within it of the K-th cost may be one of its same-cost variants (rows.py)


def kth_cost(feasible: Sequence[Configuration], *, top_k: int) -> float:
    """The K-th cheapest ranked cost among the rows' distinct collapse keys (same-cost variants count once)."""
    costs = sorted({collapse_key(r): r.ranked_usd_per_month for r in feasible}.values())
    return costs[top_k - 1] if len(costs) >= top_k else math.inf


class RowFront:
    """The simulated SLO-feasible rows as cost -> best tokens/s per user at or under that cost, for the test
    'does a row cost <= L and give >= U' in O(log rows)."""

    def __init__(self, feasible: Sequence[Configuration]) -> None:
        rows = sorted(feasible, key=lambda r: r.usd_per_month)
        self._costs = [r.usd_per_month for r in rows]
        # fastest of rows[:i + 1], NaN while none has a speed: a NaN speed never answers '>=', so it is skipped
        self._fastest: list[float] = []
        fastest = math.nan
        for r in rows:
            speed = r.tokens_per_second_per_user
            if not math.isnan(speed) and (math.isnan(fastest) or speed > fastest):
                fastest = speed
            self._fastest.append(fastest)

    def dominates(self, *, usd_per_month_lower: float, tokens_per_second_per_user_upper: float) -> bool:
        """A row costs <= the lower bound and gives >= the upper bound (a NaN bound: no row does)."""
        if math.isnan(usd_per_month_lower):
            return False
        cheaper = bisect.bisect_right(self._costs, usd_per_month_lower)
        return cheaper > 0 and self._fastest[cheaper - 1] >= tokens_per_second_per_user_upper


def pruned(item: Screened, feasible: Sequence[Configuration], *, kth_usd_per_month: float, keep_front: bool) -> bool:
    """The wave rule for one candidate (module docstring); `settle` is the same rule over a sorted queue."""
    if not item.viable:
        return True
    if item.ranked_lower <= kth_usd_per_month + TIE_USD:  # a tie may be a same-cost variant of the K-th row
        return False
    if not keep_front:
        return True
    return any(r.usd_per_month <= item.usd_per_month_lower
               and r.tokens_per_second_per_user >= item.tokens_per_second_per_user_upper for r in feasible)


class WaveRule:
    """The wave rule at one wave: the K-th cost of the rows simulated so far and (keep_front) their front."""

    def __init__(self, feasible: Sequence[Configuration], *, top_k: int, keep_front: bool) -> None:
        self._limit = kth_cost(feasible, top_k=top_k) + TIE_USD
        self._front = RowFront(feasible) if keep_front else None

    @property
    def limit_usd_per_month(self) -> float:
        """The K-th cheapest SLO-feasible row's ranked $/month + the tie: a candidate bounded above it is pruned."""
        return self._limit

    def keeps(self, item: Screened) -> bool:
        """Not pruned: `pruned` is False for it (module docstring)."""
        if not item.viable:
            return False
        if item.ranked_lower <= self._limit:
            return True
        return self._front is not None and not self._front.dominates(
            usd_per_month_lower=item.usd_per_month_lower,
            tokens_per_second_per_user_upper=item.tokens_per_second_per_user_upper)

    def settle(self, queue: list[Screened]) -> list[Screened]:
        """The queue (sorted by `ranked_lower`, every item viable) without what the rule prunes, in order:
        the prefix at or under the K-th cost (+ the tie) is kept whole; past it only, with keep_front, the
        candidates no simulated row dominates."""
        cut = bisect.bisect_right(queue, self._limit, key=lambda s: s.ranked_lower)
        if cut == len(queue):
            return queue
        if self._front is None:
            return queue[:cut]
        return queue[:cut] + [s for s in queue[cut:] if self.keeps(s)]
