"""The memo's Latency section: per option its p90 TTFT and TPOT against the SLO, where each figure comes from
(simulated, measured, published or none) and which part owns it, with the lever that moves it."""

from __future__ import annotations

from costmodel.decision.results import Decision, OptionResult
from costmodel.memo.blocks import Block, Heading, Para, Table, latency, short
from costmodel.memo.text import slo_limits
from costmodel.scenario import Scenario

_SOURCE = {"simulated": "simulated (this tool)", "measured": "measured (your probe)",
           "published": "published, not your traffic", "none": "none: unverified"}


def _figure(seconds: float | None, low: float | None = None, high: float | None = None) -> str:
    """'0.33 s (0.23-0.43)': the p90 with its band where it has one."""
    if seconds is None:
        return "-"
    if low is None or high is None or low == high:
        return latency(seconds)
    return f"{latency(seconds)} ({latency(low)}-{latency(high)})"


def _row(option: OptionResult) -> tuple[str, ...]:
    verdict = "excluded" if option.excluded_reason else option.slo_status.replace("_", " ")
    return (short(option.name), verdict,
            _figure(option.ttft_p90_seconds, option.ttft_p90_seconds_low, option.ttft_p90_seconds_high),
            _figure(option.tpot_p90_seconds, option.tpot_p90_seconds_low, option.tpot_p90_seconds_high),
            _SOURCE.get(option.latency_source, option.latency_source), option.latency_owner or "-")


def latency_blocks(decision: Decision, scenario: Scenario) -> list[Block]:
    """'Latency': the SLO's limits, then one row per option (figures at the capacity the fleet is sized to)."""
    rows = tuple(_row(o) for o in decision.options)
    highlight = next((i for i, o in enumerate(decision.options) if o.name == decision.recommendation), None)
    return [
        Heading("Latency"),
        Para(f"The SLO: {slo_limits(scenario)}. One standard of evidence: each p90 has a band. Self-hosted figures "
             "are the simulator's p90 at the capacity per replica the fleet is sized to, widened by the documented "
             "validation error of the engine (docs/validation.md); an API's come from your probe (measured), a public "
             "median widened by the provider's published p90/p50 spread (published, not your traffic) or nowhere. "
             "'likely meets': the band's high end is within every limit; 'unverified' (no figure or a band across a "
             "limit) is never counted as meeting the SLO.", style="small"),
        Table(header=("Option", "SLO", "TTFT p90 (band)", "TPOT p90 (band)", "Source",
                      "Owner of the latency, and the lever"),
              rows=rows, widths=(0.17, 0.09, 0.13, 0.12, 0.13, 0.36), align=("l", "l", "r", "r", "l", "l"),
              highlight_row=highlight),
    ]
