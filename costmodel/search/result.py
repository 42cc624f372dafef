"""The search's result: `SearchResult` (counts, the top K, the fronts and why a front is short) and how the
simulated rows become it: which rows may be ranked, the top K over same-cost variants collapsed, the two Pareto
fronts with their variants listed, and the cheapest row per serving-mode family. `search.run` produces the rows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from costmodel.search.rows import Configuration, collapse, collapse_key, front_reason, pareto_front
from costmodel.search.scope import SearchScope


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """Counts, time, the cheapest SLO-feasible configurations and the Pareto front."""

    candidates_enumerated: int
    candidates_pruned: int
    candidates_simulated: int
    seconds: float
    best: tuple[Configuration, ...]  # cheapest SLO-feasible first, at most K
    frontier: tuple[Configuration, ...]  # $/M tok vs tokens/s per user, and vs TTFT p90 (union), cheapest first
    frontier_tokens_per_second_per_user: tuple[Configuration, ...] = ()  # $/M tok vs tokens/s per user
    frontier_ttft: tuple[Configuration, ...] = ()  # $/M tok vs TTFT p90
    cache_hits: int = 0  # replica configurations whose capacity came from the capacity cache
    scope: SearchScope | None = None  # the models searched and why (search/scope.py)
    frontier_tokens_per_second_per_user_reason: str | None = None  # why that front has <= 1 point (None: more)
    frontier_ttft_reason: str | None = None
    rows_meeting_slo: int = 0  # simulated rows (same-cost variants collapsed) meeting the SLO and ranked
    candidates_without_host: int = 0  # owned configurations left out unsimulated: their host has no figures
    # The cheapest row of each serving-mode family simulated (rows.mode_family), cheapest first; empty unless the
    # search ran modes (search.modes). A family absent was pruned: its cost bound could not enter the top K.
    best_by_mode: tuple[Configuration, ...] = ()
    # What `best` is ranked by (decision/commitment.py): "usd_horizon_total_with_commitments" (per month of the
    # horizon, the month-0 fleet held constant) when a ranked row's reserved term runs past the horizon, else
    # "usd_per_month" (the two are then equal); each row's figure is its `ranking_usd_per_month`.
    ranking_basis: str = "usd_per_month"
    horizon_months: int = 12
    # The cheapest-by-month-0 ranked row whose reserved term runs past the horizon (what month 0's $/month would
    # have ranked higher), for the memo's sentence; None when no ranked row commits past the horizon.
    cheapest_committing: Configuration | None = None

    def contract(self) -> dict[str, object]:
        """`search --json`: best is the cheapest row (null when none meets the SLO); top_k the K rows;
        `frontier` the union of the two fronts, `frontier_tokens_per_second_per_user` and `frontier_ttft` each."""
        return {"candidates_enumerated": self.candidates_enumerated, "candidates_pruned": self.candidates_pruned,
                "candidates_simulated": self.candidates_simulated, "seconds": self.seconds,
                "frontier": [c.contract() for c in self.frontier],
                "frontier_tokens_per_second_per_user": [c.contract() for c in self.frontier_tokens_per_second_per_user],
                "frontier_ttft": [c.contract() for c in self.frontier_ttft],
                "best": self.best[0].contract() if self.best else None,
                "top_k": [c.contract() for c in self.best],
                "frontier_tokens_per_second_per_user_reason": self.frontier_tokens_per_second_per_user_reason,
                "frontier_ttft_reason": self.frontier_ttft_reason, "rows_meeting_slo": self.rows_meeting_slo,
                "candidates_without_host": self.candidates_without_host,
                "best_by_mode": [c.contract() for c in self.best_by_mode],
                "ranking_basis": self.ranking_basis, "horizon_months": self.horizon_months,
                **(self.scope.contract() if self.scope is not None else {})}


def ranked_rows(rows: list[Configuration], *, accept_unverified: bool = False) -> list[Configuration]:
    """Rows that may be ranked: the decision's verdict meets the SLO (or is unverified, when the scenario
    accepts unverified latency, as `decision.rank.rank_options` does), a finite cost, host counted if owned."""
    return [r for r in rows if (r.meets_slo or (accept_unverified and r.slo_status == "unverified"))
            and r.host_counted and r.excluded_kind is None and math.isfinite(r.usd_per_month)]


def search_result(simulated: list[Configuration], *, top_k: int, enumerated: int, started: float, hits: int,
                  scope: SearchScope, without_host: int, accept_unverified: bool,
                  horizon_months: int = 12) -> SearchResult:
    """Top K over collapsed rows by their ranked cost (`Configuration.ranked_usd_per_month`), the two fronts (each
    row listing its same-cost variants) and their reasons."""
    ranked = ranked_rows(simulated, accept_unverified=accept_unverified)
    rows = collapse(ranked)
    variants = {collapse_key(r): r.variants for r in rows}

    def listed(front: list[Configuration]) -> tuple[Configuration, ...]:
        """Front rows with their same-cost variants, the row's own first (a front may pick another variant
        of a collapsed row: the lowest TTFT rather than the most tokens/s per user)."""
        return tuple(replace(r, variants=(r.variant(), *(v for v in variants[collapse_key(r)] if v != r.variant())))
                     for r in front)

    speed = listed(pareto_front(ranked, better_is_higher=True, metric="tokens_per_second_per_user"))
    ttft = listed(pareto_front(ranked, better_is_higher=False, metric="ttft_p90_seconds"))
    frontier = sorted(set(speed + ttft), key=lambda r: (r.usd_per_mtok, repr(r)))
    pruned = enumerated - len(simulated)
    committing = [r for r in rows if r.commitment_term_months]
    by_bounds = pruned - without_host  # the rest were left out for their host (`search.run`'s host filter)
    return SearchResult(
        candidates_enumerated=enumerated, candidates_pruned=pruned, candidates_simulated=len(simulated),
        seconds=time.perf_counter() - started, best=tuple(rows[:top_k]), frontier=tuple(frontier),
        frontier_tokens_per_second_per_user=speed, frontier_ttft=ttft, cache_hits=hits, scope=scope,
        frontier_tokens_per_second_per_user_reason=front_reason(list(speed), rows, metric="tokens_per_second_per_user",
                                                                pruned=by_bounds),
        frontier_ttft_reason=front_reason(list(ttft), rows, metric="ttft_p90_seconds", pruned=by_bounds),
        rows_meeting_slo=len(rows),
        candidates_without_host=without_host, best_by_mode=_best_by_mode(rows), horizon_months=horizon_months,
        ranking_basis="usd_horizon_total_with_commitments" if committing else "usd_per_month",
        cheapest_committing=min(committing, key=lambda r: r.usd_per_month) if committing else None)


def _best_by_mode(rows: list[Configuration]) -> tuple[Configuration, ...]:
    """The cheapest of the (collapsed, ranked, cheapest-first) rows per serving-mode family, when any row runs a
    mode (else empty: the plain search reports no families)."""
    if all(r.mode_choice is None for r in rows):
        return ()
    best: dict[str, Configuration] = {}
    for row in rows:
        best.setdefault(row.mode_family(), row)
    return tuple(best.values())

