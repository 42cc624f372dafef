"""The memo's Latency section: per option its p90 TTFT and TPOT against the SLO, where each figure comes from
(simulated, measured, published or none) and which part owns it, with the lever that moves it."""

from __future__ import annotations

from costmodel.decision.results import Decision, OptionResult
from costmodel.memo.blocks import Block, Heading, Para, Table, latency, short
from costmodel.memo.text import slo_limits
from costmodel.scenario import Scenario

_SOURCE = {"simulated": "simulated (this tool)", "measured": "measured (your probe)",
           "published": "published, not your traffic", "none": "none: unverified"}


def _figure(seconds: float | None) -> str:
    return "-" if seconds is None else latency(seconds)


def _row(option: OptionResult) -> tuple[str, ...]:
    verdict = "excluded" if option.excluded_reason else option.slo_status
    return (short(option.name), verdict, _figure(option.ttft_p90_seconds), _figure(option.tpot_p90_seconds),
            _SOURCE.get(option.latency_source, option.latency_source), option.latency_owner or "-")


def latency_blocks(decision: Decision, scenario: Scenario) -> list[Block]:
    """'Latency': the SLO's limits, then one row per option (figures at the capacity the fleet is sized to)."""
    rows = tuple(_row(o) for o in decision.options)
    highlight = next((i for i, o in enumerate(decision.options) if o.name == decision.recommendation), None)
    return [
        Heading("Latency"),
        Para(f"The SLO: {slo_limits(scenario)}. Self-hosted figures are the simulator's p90 at the capacity per "
             "replica the fleet is sized to; an API's come from your probe (measured), a public page (published, "
             "not your traffic) or nowhere (unverified, never counted as meeting the SLO).", style="small"),
        Table(header=("Option", "SLO", "TTFT p90", "TPOT p90", "Source", "Owner of the latency, and the lever"),
              rows=rows, widths=(0.2, 0.08, 0.08, 0.08, 0.14, 0.42), align=("l", "l", "r", "r", "l", "l"),
              highlight_row=highlight),
    ]
