"""The month the ranking changes over the horizon (decision/horizon.py's months), and its sentence."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from costmodel.decision.feasibility import add_months
from costmodel.decision.horizon import OptionHorizon
from costmodel.decision.recommend import allowed_statuses
from costmodel.decision.results import OptionResult

SIMPLICITY = {"api": 0, "self-host": 1, "hybrid": 2}  # ties go to the simpler option, as in rank_options


@dataclass(frozen=True, kw_only=True)
class RankingChange:
    """The first month whose cheapest usable, SLO-meeting option differs from month 0's."""

    month: int
    before: str  # month 0's cheapest
    after: str  # month `month`'s cheapest
    before_usd: float  # both in that month
    after_usd: float


def _cheapest(results: Sequence[OptionResult], horizons: Mapping[str, OptionHorizon], month: int, *,
              allowed: set[str]) -> str | None:
    pool = [r for r in results if horizons[r.name].months[month].slo_status in allowed]
    if not pool:
        return None
    best = min(pool, key=lambda r: (round(horizons[r.name].months[month].usd, 2), SIMPLICITY[r.kind]))
    return best.name


def ranking_change(results: Sequence[OptionResult], horizons: Mapping[str, OptionHorizon], *,
                   accept_unverified: bool = False) -> RankingChange | None:
    """Candidates: not excluded, not throttled, host counted, meeting or likely meeting the SLO (unverified only when accepted)
    in the month considered; None when month 0 has none or the cheapest never changes."""
    allowed = set(allowed_statuses(accept_unverified=accept_unverified))
    # A cost that leaves the host server out never becomes "the cheapest" (decision/ranking.py ranks it last).
    candidates = [r for r in results if r.excluded_reason is None and not r.throttled and r.slo_status in allowed
                  and r.name in horizons and not r.host_not_counted]
    if not candidates:
        return None
    first = _cheapest(candidates, horizons, 0, allowed=allowed)
    for month in range(1, len(horizons[candidates[0].name].months)):
        now = _cheapest(candidates, horizons, month, allowed=allowed)
        if first is not None and now is not None and now != first:
            return RankingChange(month=month, before=first, after=now,
                                 before_usd=horizons[first].months[month].usd,
                                 after_usd=horizons[now].months[month].usd)
    return None


def ranking_change_reason(change: RankingChange | None, *, as_of: dt.date, horizon_months: int,
                          growth_per_month: float) -> str:
    """The sentence for the decision's reasons and the compare text."""
    if change is None:
        return (f"The cheapest option does not change over the {horizon_months}-month horizon "
                f"(volume growth {growth_per_month:+.1%}/month).")
    when = add_months(as_of, months=change.month)
    return (f"The ranking changes in month {change.month} ({when:%Y-%m}): {change.after} becomes cheaper than "
            f"{change.before} (${change.after_usd:,.0f} against ${change.before_usd:,.0f} that month) as volume "
            f"grows {growth_per_month:+.1%}/month.")
