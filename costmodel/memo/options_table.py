"""The memo's options table: every option ranked with its cost, SLO verdict, GPUs, utilization and
break-even (`options_table`, its rank column `rank_cells`, shared with the app's Compare page), and the
per-option notes under it (`option_notes`). Pure functions of the decision.
"""

from __future__ import annotations

import math

from costmodel.decision.instances import gpus_cell
from costmodel.decision.results import Decision, OptionResult, exclusion_label
from costmodel.memo.blocks import Bullets, Table, cut_names, latency, money, pct, per_mtok, short, tokens


def _slo_cell(result: OptionResult) -> str:
    if result.excluded_kind is not None and result.excluded_kind not in ("misses_slo", "throttled"):
        return f"excluded: {exclusion_label(result.excluded_kind)}" + (
            f", retires {result.retires_on.isoformat()}" if result.retires_on else "")
    if result.slo_status == "unverified":
        source = {"published": "published, not your traffic", "simulated": "simulated band across a limit"}.get(
            result.latency_source, "not measured")
        return "unverified" + (", throttled" if result.throttled else "") + f" ({source})"
    verdict = {"meets": "yes", "likely_meets": "likely"}.get(result.slo_status, "NO")
    if result.throttled:
        verdict += ", throttled"
    if result.kind == "self-host" and not result.capacity_requests_per_second and not result.meets_slo:
        # No load meets the SLO: its figures are each request alone on the replica, not an operating point.
        alone = (f"; alone {latency(result.ttft_p90_seconds)} / {latency(result.tpot_p90_seconds)}"
                 if result.ttft_p90_seconds is not None and result.tpot_p90_seconds is not None else "")
        return f"{verdict} (no load meets it{alone})"
    if result.ttft_p90_seconds is None or result.tpot_p90_seconds is None:
        if result.kind == "self-host":
            return f"{verdict} (no load meets it)" if not result.meets_slo else f"{verdict} (see notes)"
        return f"{verdict} (published, not your traffic)" if result.latency_source == "published" else (
            f"{verdict} (not measured)")
    return f"{verdict}: {latency(result.ttft_p90_seconds)} / {latency(result.tpot_p90_seconds)}"


def _break_even_cell(result: OptionResult) -> str:
    if result.kind != "self-host" or result.break_even_utilization is None:
        return "-"
    volume = result.break_even_tokens_per_month
    at = f"{tokens(volume)} tok/mo" if volume and math.isfinite(volume) else "never"
    return f"u* {pct(result.break_even_utilization)}, {at} vs {short(result.break_even_against or '')}"


def rank_cells(decision: Decision) -> tuple[str, ...]:
    """'1', '2', ... in ranked order; '-' for a 0-replica hybrid (its API's plan, already ranked as that API)."""
    cells, rank = [], 0
    for option in decision.options:
        if option.all_traffic_to_api and option.name != decision.recommendation:
            cells.append("-")
            continue
        rank += 1
        cells.append(str(rank))
    return tuple(cells)


def options_table(decision: Decision) -> Table:
    """Every option, ranked: cost, SLO verdict with p90 TTFT/TPOT, GPUs, utilization, break-even."""
    rows = tuple(
        (rank, o.name, "hybrid, 0 replicas (= its API)" if o.all_traffic_to_api else o.kind, money(o.usd_per_month),
         per_mtok(o.usd_per_mtok), _slo_cell(o), gpus_cell(gpus=o.gpus, gpus_billed=o.gpus_billed), pct(o.utilization), _break_even_cell(o))
        for rank, o in zip(rank_cells(decision), decision.options, strict=True)
    )
    highlight = next((i for i, o in enumerate(decision.options) if o.name == decision.recommendation), None)
    return Table(
        header=("#", "Option", "Kind", "$/month", "$/M tok", "SLO: p90 TTFT / TPOT", "GPUs", "Util.", "Break-even"),
        rows=rows, widths=(0.03, 0.21, 0.10, 0.09, 0.08, 0.16, 0.065, 0.06, 0.205),
        align=("r", "l", "l", "r", "r", "l", "r", "r", "l"), highlight_row=highlight,
        caption=("Ranked as the decision ranks them: usable options by "
                 + ("the horizon total with commitments (section 4's totals)"
                    if decision.ranking_basis == "usd_horizon_total_with_commitments" else "$/month")
                 + " (the recommendation is the cheapest "
                 "whose latency meets or likely meets the SLO), excluded options last; a hybrid with 0 base replicas "
                 "is its API's plan and gets no rank of its own (-). $/M tok is blended over prompt + output tokens. "
                 "Util. = mean demand / provisioned capacity at the SLO. u* = utilization of the fleet sized for the "
                 "break-even volume, where the option's cost line crosses its reference API's."),
    )


def option_notes(decision: Decision) -> Bullets:
    """Per option: why it meets or misses the SLO, which part owns its latency (with the lever), and the
    decision's notes."""
    items = []
    for o in decision.options:
        extra = "; ".join(o.notes)
        owner = f". Latency owner: {o.latency_owner}" if o.latency_owner else ""
        items.append(cut_names(f"{short(o.name)}: {o.slo_reason}{owner}" + (f". {extra}" if extra else ""),
                               (r.name for r in decision.options)))
    return Bullets(tuple(items), style="small")
