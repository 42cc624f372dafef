"""The memo's sensitivity table: the tornado's numbers, the advantage at each end of each input's range."""

from __future__ import annotations

from costmodel.decision.sensitivity import Advantage, Sensitivity
from costmodel.memo.blocks import Table, money, short


def _advantage_cell(advantage: Advantage) -> str:
    if advantage.recommendation_fails:
        return "flips (recommendation fails the SLO or is throttled)"
    if advantage.alternative is None:
        return "no alternative"
    flag = " - flips" if advantage.flips else ""
    return f"{money(advantage.usd_per_month)} vs {advantage.alternative}{flag}"


def _basis_words(sensitivity: Sensitivity) -> str:
    return ("cost over the horizon with commitments (the ranking's basis)"
            if sensitivity.ranking_basis == "usd_horizon_total_with_commitments" else "$/month")


def sensitivity_table(sensitivity: Sensitivity) -> Table:
    """The tornado's numbers: the advantage at each end of each input's range."""
    low = f"-{sensitivity.fraction:.0%}"
    high = f"+{sensitivity.fraction:.0%}"
    rows = tuple(
        (bar.label, _advantage_cell(bar.low), _advantage_cell(bar.high),
         "decide" if bar.method == "decide" else "1st order")
        for bar in sensitivity.bars
    )
    return Table(
        header=("Input scaled", f"Advantage at {low}", f"Advantage at {high}", "Method"), rows=rows,
        widths=(0.27, 0.31, 0.31, 0.11), align=("l", "l", "l", "l"), font_size=7.5,
        caption=(f"Advantage = best eligible alternative's {_basis_words(sensitivity)} minus "
                 f"{short(sensitivity.recommendation)}'s; today "
                 f"{_advantage_cell(sensitivity.base)}. A value \u2264 0 means the decision flips. Method: decide = "
                 "the whole decision re-run with the input scaled; 1st order = the economics re-run with each "
                 "self-hosted capacity scaled (by the roofline's capacity ratio for efficiency, by GPU time per "
                 "request for token counts) and API cost scaled by its prompt/output price split."),
    )
