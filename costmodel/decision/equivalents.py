"""Options equivalent to one option: the same cost and verdict from a configuration that differs only in a
setting that leaves both unchanged (searched twins, e.g. the same DEP8 fleet at MTP2 next to MTP3).

Swapping an option for its equivalent changes neither the bill nor the SLO verdict, so a sensitivity "flip" to
it, a fallback to it or an alert at its bill says nothing: the sensitivity (decision/sensitivity.py) and the
memo's rollback and monitoring compare with the next option that is materially different, and name the tie.
"""

from __future__ import annotations

from collections.abc import Sequence

from costmodel.decision.results import OptionResult


def _same(one: OptionResult, other: OptionResult) -> bool:
    """Kind and cost first (most options differ there), then fleet (replicas, GPUs billed, scaling) and verdict."""
    return (one.kind == other.kind and round(one.usd_per_month, 2) == round(other.usd_per_month, 2)
            and round(one.ranking_usd, 2) == round(other.ranking_usd, 2)
            and (one.replicas, one.gpus_billed, one.scaling, one.slo_status, one.throttled)
            == (other.replicas, other.gpus_billed, other.scaling, other.slo_status, other.throttled))


def equivalents(options: Sequence[OptionResult], chosen: OptionResult) -> tuple[str, ...]:
    """The options (a decision's usable ones, in ranking order) other than `chosen` with its kind, cost ($/month
    and the ranking's cost, to the cent), fleet and SLO status."""
    return tuple(o.name for o in options if o.name != chosen.name and _same(o, chosen))
