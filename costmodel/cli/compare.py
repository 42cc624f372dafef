"""`costmodel compare SCENARIO...`: ranked options, recommendation, reasons and warnings."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from costmodel.cli import progress
from costmodel.cli.calibration_args import add_calibration_flag, apply_calibration_args
from costmodel.cli.output import bounded_int, emit, parse_date
from costmodel.cli.progress import add_quiet_flag
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.instances import gpus_cell
from costmodel.decision.rank import decide
from costmodel.decision.reasons import quality_statement
from costmodel.decision.recommend import verify_first_sentence
from costmodel.decision.results import Decision, OptionResult
from costmodel.scenario import Scenario, load_scenario
from costmodel.scenario.search import SCENARIO_SEARCH_TOP_K
from costmodel.units import counted, fmt_latency, fmt_money, fmt_ms_column, fmt_pct


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `compare`."""
    parser = subparsers.add_parser("compare", help="compare the options of scenario file(s): cost, SLO, break-even")
    parser.add_argument("scenarios", nargs="+", type=Path, help="scenario YAML/JSON file(s)")
    add_calibration_flag(parser)
    parser.add_argument("--date", type=parse_date, default=None,
                        help="evaluation date YYYY-MM-DD (retirements, price ages); default: the scenario's "
                             "as_of, else today")
    parser.add_argument("--horizon-months", type=bounded_int(1, 120), default=None,
                        help="months to evaluate over, 1..120 (default: the scenario's horizon_months, 12)")
    parser.add_argument("--search", type=bounded_int(1, 20), default=None, metavar="K",
                        help="add the K cheapest configurations `costmodel search` finds as self-host options")
    parser.add_argument("--json", action="store_true", help="one JSON object (several files: {'scenarios': [...]})")
    add_quiet_flag(parser)
    parser.set_defaults(handler=run_compare)


# The SLO column: "yes" measured within the limits, "likely" a published or simulated band within them, "?"
# unverified (no evidence or a band across a limit: never recommended unless accepted), "NO" misses.
SLO_MARK = {"meets": "yes", "likely_meets": "likely", "misses": "NO", "unverified": "?"}


def render_table(decision: Decision) -> str:
    """Human-readable comparison."""
    as_of = f" (as of {decision.as_of.isoformat()})" if decision.as_of else ""
    gpus = {o.name: gpus_cell(gpus=o.gpus, gpus_billed=o.gpus_billed) for o in decision.options}
    gpu_width = max(5, *(len(cell) for cell in gpus.values()))
    lines = [f"{decision.scenario_name}{as_of}: {decision.requests_per_month:,.0f} requests/month, "
             f"{decision.tokens_per_month / 1e9:,.2f}B tokens/month, peak {decision.peak_requests_per_second:.1f} req/s",
             "",
             *_verify_first_lines(decision),
             f"  {'option':32s} {'kind':9s} {'$/month':>11s} {'$/M tok':>8s} {'SLO':6s} {'TTFT90':>7s} {'TPOT90':>7s} "
             f"{'GPUs':>{gpu_width}s} {'util':>5s} {'break-even':>10s} {'fleet':>9s}"]
    for o in decision.options:
        mtok = "n/a" if not math.isfinite(o.usd_per_mtok) else f"{o.usd_per_mtok:.3f}"
        lines.append(
            f"  {o.name[:32]:32s} {o.kind:9s} {fmt_money(o.usd_per_month):>11s} {mtok:>8s} "
            f"{SLO_MARK[o.slo_status]:6s} {fmt_ms_column(o.ttft_p90_seconds):>7s} "
            f"{fmt_ms_column(o.tpot_p90_seconds):>7s} {gpus[o.name]:>{gpu_width}s} {fmt_pct(o.utilization):>5s} "
            f"{fmt_pct(o.break_even_utilization):>10s} {_fleet_cell(o):>9s}"
        )
    excluded = [o for o in decision.options if o.excluded_reason is not None]
    if excluded:
        lines += ["", "Excluded (shown, never recommended):"]
        lines += [f"  - {o.name} [{o.excluded_kind}]: {o.excluded_reason}" for o in excluded]
    partial = [o for o in decision.options if o.host_not_counted and o.excluded_reason is None]
    if partial:
        lines += ["", "Costs that leave the host server out (ranked after every complete cost, never recommended first):"]
        lines += [f"  - {o.name}: {note}" for o in partial for note in o.notes if note.startswith("host server not counted")]
    lines += _evidence_lines(decision)
    policies = [f"  - {o.name}: {o.fleet_reason}{_scaling_text(o)}" for o in decision.options if o.fleet_reason]
    if policies:
        lines += ["", "Fleet policy (fleet column: replica floor / target peak utilization):"] + policies
    lines += _horizon_lines(decision)
    none = ("none (no usable option is known to meet the SLO)" if decision.cheapest_usable
            else "none (no option is feasible)")
    lines += ["", f"Recommendation: {decision.recommendation or none}"]
    lines += [f"  - {reason}" for reason in decision.reasons]
    lines += [f"  - {quality_statement(decision)}"]
    if decision.warnings:
        lines += ["Warnings:"] + [f"  - {warning}" for warning in decision.warnings]
    lines += ["Sources:"]
    seen = set()
    for o in decision.options:
        for ps in o.price_sources:
            if ps.what not in seen:
                seen.add(ps.what)
                dated = f"price as of {ps.price_as_of}, " if ps.price_as_of else ""
                lines.append(f"  - {ps.what}: {ps.source} ({dated}checked {ps.checked}, {counted(ps.age_days, 'day')} old)")
    lines.append(f"  - efficiencies: {decision.efficiency_source}")
    lines += calibration_lines(decision)
    return "\n".join(lines)


def _verify_first_lines(decision: Decision) -> list[str]:
    """The 'Verify first' line that leads the text when a cheaper usable option's latency is unverified."""
    if decision.cheaper_unverified is None:
        return []
    return [verify_first_sentence(decision.cheaper_unverified), ""]


def _band(point: float | None, low: float | None, high: float | None) -> str:
    if point is None:
        return "-"
    if low is None or high is None or low == high:
        return fmt_latency(point)
    return f"{fmt_latency(point)} ({fmt_latency(low)}-{fmt_latency(high)})"


def _evidence_lines(decision: Decision) -> list[str]:
    """'Latency evidence': each usable option's source, p90 bands and what they rest on."""
    usable = decision.usable_options
    if not usable:
        return []
    lines = ["", "Latency evidence (p90, band; likely = the band's high end within every limit):"]
    for o in usable:
        ttft = _band(o.ttft_p90_seconds, o.ttft_p90_seconds_low, o.ttft_p90_seconds_high)
        tpot = _band(o.tpot_p90_seconds, o.tpot_p90_seconds_low, o.tpot_p90_seconds_high)
        basis = f"; {o.latency_basis}" if o.latency_basis else ""
        lines.append(f"  - {o.name}: {o.slo_status}, {o.latency_source}; TTFT {ttft}, TPOT {tpot}{basis}")
    if decision.recommendation_premium_usd_per_month:
        lines.append(f"  Premium of {decision.recommendation} over the cheapest usable option "
                     f"({decision.cheapest_usable}): {fmt_money(decision.recommendation_premium_usd_per_month)}/month")
    return lines


def _horizon_lines(decision: Decision) -> list[str]:
    """'Cost over the horizon': month 0, month 12 (or the last month) and the total per option, and the
    sentence on the ranking."""
    priced = [o for o in decision.options if o.usd_by_month]
    if not priced:
        return []
    later = min(12, decision.horizon_months - 1)
    lines = ["", f"Cost over the horizon ({decision.horizon_months} months, growth applied month by month):"]
    for o in priced:
        assert o.usd_by_month is not None
        tail = f", month {later} {fmt_money(o.usd_by_month[later])}" if later > 0 else ""
        owed = (f", {fmt_money(o.usd_committed_after_horizon)} still committed after it "
                f"({fmt_money(o.usd_horizon_total_with_commitments or 0.0)} with it)"
                if o.usd_committed_after_horizon else "")
        lines.append(f"  - {o.name}: month 0 {fmt_money(o.usd_by_month[0])}{tail}, "
                     f"total {fmt_money(o.usd_horizon_total)}{owed}")
    if decision.ranking_basis_reason:
        lines.append(f"  {decision.ranking_basis_reason}")
    if decision.ranking_change_reason:
        lines.append(f"  {decision.ranking_change_reason}")
    return lines


def calibration_lines(decision: Decision) -> list[str]:
    """'Measured calibrations:' with one line per file an option uses; forced files are flagged."""
    used = [o for o in decision.options if o.calibrations]
    if not used:
        return []
    lines = ["Measured calibrations (latency_source measured):"]
    for o in used:
        flag = " [FORCED: written past its held-out check; not backed by the backtest]" if o.calibration_forced else ""
        lines += [f"  - {o.name}: {text}{flag}" for text in o.calibrations]
    return lines


def _fleet_cell(option: OptionResult) -> str:
    """'>=2 @80%' for a self-host or hybrid option (its replica floor and target peak utilization)."""
    if option.min_replicas is None or option.target_peak_utilization is None:
        return ""
    return f">={option.min_replicas} @{option.target_peak_utilization:.0%}"


def _scaling_text(option: OptionResult) -> str:
    """'; autoscale: 0-5 replicas by hour' or '; mixed: 2 base + burst, 2-4 replicas by hour' (empty when fixed)."""
    hours = option.replicas_by_hour
    if option.scaling not in ("autoscale", "mixed") or not hours:
        return ""
    base = f"{option.base_replicas} base + on-demand burst, " if option.scaling == "mixed" else ""
    return f"; {option.scaling}: {base}{min(hours)}-{max(hours)} replicas by hour"


def run_compare(args: argparse.Namespace) -> int:
    cache = CapacityCache()  # scenarios given together share capacities of identical options
    scenarios = [load_scenario(path) for path in args.scenarios]
    applied = [apply_calibration_args(s, args.calibration) for s in scenarios]
    scenarios = [s for s, _ in applied]
    calibration = applied[0][1] if applied else None
    if args.horizon_months is not None:
        scenarios = [s.model_copy(update={"horizon_months": args.horizon_months}) for s in scenarios]
    with progress.bar(args, total=len(scenarios) * (2 if args.search is not None else 1), desc="compare") as shown:
        if args.search is not None:
            from costmodel.search import search, with_searched_options  # only with --search

            searched = []
            for s in scenarios:
                shown.note(f"searching for {s.name}")
                result = search(s, top_k=args.search, calibration=calibration, today=args.date, cache=cache,
                                progress=lambda _, text: shown.note(text))  # decide reuses the searched capacities
                searched.append(with_searched_options(s, result, top_k=args.search))
                shown.step(f"searched {s.name}")
            scenarios = searched
        decisions = []
        for scenario in scenarios:
            shown.note(f"deciding {scenario.name}")
            decisions.append(decide(scenario, calibration=calibration, today=args.date, capacity_cache=cache))
            shown.step(f"decided {scenario.name}")
    texts = [render_table(d) + _search_section_note(s, searched=args.search is not None)
             for d, s in zip(decisions, scenarios, strict=True)]
    if len(decisions) == 1:
        emit(decisions[0].contract(), as_json=args.json, text=texts[0])
    else:
        emit({"scenarios": [d.contract() for d in decisions]}, as_json=args.json, text="\n\n".join(texts))
    return 0


def _search_section_note(scenario: Scenario, *, searched: bool) -> str:
    """The memo searches a scenario with a `search:` section (SCENARIO_SEARCH_TOP_K); compare only with
    --search: say so, so the two are never read as disagreeing."""
    if searched or scenario.search is None:
        return ""
    k = SCENARIO_SEARCH_TOP_K
    return (f"\nNote: this scenario has a `search:` section, so `costmodel memo` also adds the {k} cheapest "
            f"configurations a search finds; `costmodel compare --search {k}` shows that table. This one ranks the "
            "listed options only.")
