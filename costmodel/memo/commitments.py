"""Page 1's sentence on what the ranking compares when the scenario sets horizon_months or an option commits past
the horizon: the horizon total with the reserved commitments still owed after it (decision/horizon.py), not month
0's $/month, and why (decision/ranking.py `ranking_basis_reason`)."""

from __future__ import annotations

from costmodel.decision.results import Decision
from costmodel.memo.blocks import Block, Para, money, short


def ranking_basis_sentence(decision: Decision) -> str | None:
    """One sentence when options are ranked by the horizon total with commitments; None when by $/month."""
    if decision.ranking_basis != "usd_horizon_total_with_commitments" or decision.recommendation is None:
        return None
    chosen = decision.chosen()
    if chosen.usd_horizon_total_with_commitments is None:
        return None
    owed = chosen.usd_committed_after_horizon or 0.0
    tail = (f", {money(owed)} of it reserved capacity still owed after month {decision.horizon_months}" if owed > 0
            else ", nothing owed after it")
    return (f"Options are ranked by what each costs over the {decision.horizon_months}-month horizon with its "
            f"commitments, not by month 0's $/month: {short(chosen.name)} totals "
            f"{money(chosen.usd_horizon_total_with_commitments)}{tail}." + _why(decision))


def _why(decision: Decision) -> str:
    """Why the ranking is on that basis: the cause half of `ranking_basis_reason` ('Ranked by ...: <cause>')."""
    _, _, cause = decision.ranking_basis_reason.partition(": ")
    return f" The cause: {cause}" if cause else ""


def ranking_basis_blocks(decision: Decision) -> list[Block]:
    """The sentence as a paragraph for page 1 (empty when the ranking is by $/month)."""
    sentence = ranking_basis_sentence(decision)
    return [Para(sentence)] if sentence else []
