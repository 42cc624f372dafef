"""Risks and common mistakes with this scenario's numbers, assumptions and sources, and the formulas."""

from __future__ import annotations

from costmodel.decision.results import Decision, PriceSource
from costmodel.decision.sensitivity import FLIP_SEARCH_DECADES, Sensitivity
from costmodel.decision.warnings import STALE_PRICE_DAYS
from costmodel.measurements.calibration import Calibration
from costmodel.memo.blocks import Block, Bullets, Code, Para, Table, cut_names, money, pct, short, times
from costmodel.memo.curves import InteractivityCurve, KvPanel
from costmodel.scenario import Scenario


def _kv_risk(panel: KvPanel) -> str | None:
    if panel.peak_concurrency is None:
        return None
    mean_ctx, tail_ctx = panel.contexts_tokens[0], panel.contexts_tokens[-1]
    mean_max, tail_max = panel.max_batch[0], panel.max_batch[-1]
    text = (f"KV growth at peak concurrency ({short(panel.name)}): about {panel.peak_concurrency:.0f} sequences are in flight "
            f"per replica in the peak hour (Little's law); KV memory holds {mean_max} at the mean context "
            f"({mean_ctx:,} tokens)")
    if tail_ctx != mean_ctx:
        text += f" and {tail_max} at the p99 context ({tail_ctx:,} tokens)"
    if panel.peak_concurrency > mean_max:
        return text + ": it does not fit even at the mean context, so requests queue and the SLO verdict is optimistic."
    if panel.peak_concurrency > tail_max:
        return text + ": a peak with long requests will preempt or queue; keep headroom or cap the context."
    return text + ": fits, with headroom."


def _theater_risk(curve: InteractivityCurve) -> str | None:
    if not curve.concurrency or curve.operating_output_tokens_per_second_per_gpu is None:
        return None
    best = max(range(len(curve.concurrency)), key=lambda i: curve.output_tokens_per_second_per_gpu[i])
    peak_tps = curve.output_tokens_per_second_per_gpu[best]
    at_slo = curve.operating_output_tokens_per_second_per_gpu
    if peak_tps < 1.5 * at_slo:
        return None
    return (f"Benchmark theater ({short(curve.name)}): with {curve.concurrency[best]} concurrent users the simulator reaches "
            f"{peak_tps:,.0f} output tokens/s per GPU, but only {curve.tokens_per_second_per_user[best]:.0f} tokens/s "
            f"per user; at the SLO the option delivers {at_slo:,.0f} tokens/s per GPU. Quote throughput at the "
            "SLO, never the peak.")


def risk_items(decision: Decision, scenario: Scenario, sensitivity: Sensitivity, *,
               kv: tuple[KvPanel, ...], curves: tuple[InteractivityCurve, ...]) -> tuple[str, ...]:
    """The decision's warnings, then the memo's own checks with this scenario's numbers."""
    items = [cut_names(w, (o.name for o in decision.options)) for w in decision.warnings]
    items += [r for r in (_kv_risk(p) for p in kv) if r]
    items += [r for r in (_theater_risk(c) for c in curves) if r]
    for o in decision.usable_options:
        if o.kind == "self-host" and o.utilization is not None and o.break_even_utilization is not None \
                and o.utilization < o.break_even_utilization:
            items.append(f"Idle capacity ({short(o.name)}): sized for the peak hour it runs at {pct(o.utilization)} mean "
                         f"utilization but needs {pct(o.break_even_utilization)} to beat {o.break_even_against}.")
        if o.throttled:
            items.append(f"Rate limits ({short(o.name)}): the peak minute passes the provider's per-minute limits; ask "
                         "for a higher tier or spread the load before relying on it.")
    if any(o.kind != "api" for o in decision.usable_options):
        peak_to_mean = decision.peak_requests_per_second / decision.mean_requests_per_second
        items.append(f"Bursts inside the hour: replicas are sized for the busiest hour ({times(peak_to_mean)} the mean); bursts "
                     "inside an hour are not in an hourly profile, so check them with `costmodel simulate` at the "
                     "peak rate before sign-off.")
        if decision.calibration_source is None:
            items.append("Uncalibrated efficiencies: capacities use datasheet efficiency defaults; a probe on the "
                         "target GPU (`costmodel probe`, then `calibrate`) replaces them with measured ones.")
    flip = sensitivity.flip_above
    if flip is not None and flip.volume_scale < 2:
        items.append(f"Near the edge: {times(flip.volume_scale)} today's volume already flips the decision to "
                     f"{flip.new_choice or 'another option'}.")
    return tuple(items)


def _unique_sources(decision: Decision) -> list[PriceSource]:
    seen: dict[str, PriceSource] = {}
    # Nothing feasible: the prices of every option compared (the memo still says what it priced, and when).
    for option in decision.usable_options or decision.options:
        for source in option.price_sources:
            seen.setdefault(source.what, source)
    return list(seen.values())


def sources_table(decision: Decision) -> Table:
    """Every price the decision used: what, where from, when checked, how old."""
    rows = tuple((s.what, s.source, s.checked, f"{s.age_days} d" + (" (stale)" if s.age_days > STALE_PRICE_DAYS else ""))
                 for s in _unique_sources(decision))
    return Table(header=("Price", "Source", "Checked", "Age"), rows=rows, widths=(0.33, 0.45, 0.12, 0.10),
                 align=("l", "l", "l", "r"), font_size=7.5)


def measured_blocks(decision: Decision) -> list[Block]:
    """One paragraph per option that uses measurement files (calibration:), forced ones flagged."""
    blocks: list[Block] = []
    for option in decision.options:
        if not option.calibrations:
            continue
        forced = (" FORCED: written with --force past its held-out check, so these figures are not backed by the "
                  "backtest; recalibrate before relying on them." if option.calibration_forced else "")
        blocks.append(Para(f"Measured ({option.name}, latency {option.latency_source}): "
                           + "; ".join(option.calibrations) + "." + forced))
    return blocks


def provenance_blocks(decision: Decision, calibration: Calibration | None) -> list[Block]:
    """Where the efficiencies come from: datasheet defaults or a named probe with its held-out error, and
    the measurement files options use."""
    if calibration is None:
        text = (f"Efficiencies: {decision.efficiency_source}. These are published fractions of peak, not "
                "measurements of your stack; treat self-host capacities as +-30% until calibrated.")
        return [Para(text), *measured_blocks(decision)]
    text = (f"Efficiencies: calibrated from probe {calibration.source} on {calibration.device_name} "
            f"({calibration.hardware_id}), created {calibration.created.date().isoformat()}: eff_compute "
            f"{calibration.eff_compute:.2f}, eff_memory {calibration.eff_memory:.2f}, overhead "
            f"{calibration.overhead_seconds_per_step * 1e3:.2f} ms/step, fitted on {calibration.points_fit} points. "
            f"Held-out error on {calibration.points_holdout} points: median {calibration.holdout_median_abs_error:.1%}, "
            f"max {calibration.holdout_max_abs_error:.1%}. Options on other hardware use: {decision.efficiency_source}."
            + (" FORCED past the held-out error bound." if calibration.forced else ""))
    return [Para(text), *measured_blocks(decision)]


CAPACITY_METHODS = {
    "simulator": "the continuous-batching simulator (roofline step times, Poisson arrivals, queueing and "
                 "percentiles simulated)",
    "roofline": "the roofline alone (mean step times, no queueing)",
    "measured": "the deployment's own step-time model fitted to a live load sweep (calibrate-endpoint), simulated "
                "with continuous batching",
}


def capacity_method_text(decision: Decision) -> str:
    """How the self-hosted capacities were found, from the options' typed `capacity_method`."""
    methods = sorted({o.capacity_method for o in decision.usable_options if o.capacity_method})
    if not methods:
        return "no self-hosted capacity was needed"
    return "; ".join(f"{CAPACITY_METHODS.get(m, m)} for "
                     + ", ".join(short(o.name) for o in decision.usable_options if o.capacity_method == m)
                     for m in methods)


def assumption_items(sensitivity: Sensitivity, decision: Decision | None = None) -> Bullets:
    """The modelling assumptions a reviewer should know about (the capacity method the options used)."""
    method = capacity_method_text(decision) if decision is not None else CAPACITY_METHODS["simulator"]
    return Bullets((
        "A month is 730.5 hours (365.25 x 24 / 12); volumes are month 0 (growth is applied only in the risks).",
        "Self-hosted replicas are billed every hour whether busy or idle and are sized for the busiest hour of "
        "the daily profile; capacity per replica is the steady-state rate that meets the SLO limits under "
        f"continuous batching, found with {method}.",
        "A server without continuous batching (static batches) delivers far less than these capacities.",
        "API latency is what the scenario states (measured or published); where none is given the SLO verdict "
        "is assumed, not verified.",
        "Hybrid options keep k replicas for the base load and send each hour's overflow to the API; k minimizes "
        "$/month over the day's load-duration curve.",
        f"Sensitivity moves one input at a time by +-{sensitivity.fraction:.0%}; GPU price, API price and volume "
        "re-run the whole decision; efficiency scales each self-hosted capacity by the roofline's capacity ratio "
        "and token counts re-run the economics (first order). Flip "
        f"volumes are searched from 1/{10 ** FLIP_SEARCH_DECADES:.0f}x to {10 ** FLIP_SEARCH_DECADES:.0f}x today.",
    ), style="small")


FORMULAS: tuple[str, ...] = (
    "Symbols: P params (P_act active per token), L layers, g KV heads, d_h head dim, b_w / b_kv bytes per",
    "weight / KV element, B sequences in a batch, T new tokens per sequence, C cached context, N GPUs.",
    "",
    "KV bytes per token   = 2 L g d_h b_kv",
    "Weight bytes         = P b_w                     (per GPU: / N under tensor parallelism)",
    "FLOPs(step)          ~ 2 P_act B T + 4 L h d_h B T (C + T/2)",
    "Bytes(step)          ~ weights touched + B C kv_bytes_per_token + B T kv_bytes_per_token",
    "step seconds         = max(FLOPs / (peak_flops eff_compute), bytes / (hbm_bytes_per_s eff_memory))",
    "                       + overhead per step (+ tensor-parallel all-reduce)",
    "Memory               : weights/N + KV(B, C) + workspace + reserve <= HBM per GPU",
    "",
    "Capacity per replica (roofline, prompt P_t, output O, decode batch B):",
    "  X(B)   = 1 / (t_prefill + O t_decode(B) / B)             requests/s",
    "  TPOT   = t_decode(B) / (1 - X(B) t_prefill);  largest B that fits with TPOT, TTFT <= limits",
    "",
    "API $/request        = [(T_in - T_cached) p_in + T_cached p_cache + T_out p_out] / 1e6",
    "self-host $/month    = replicas x GPUs/replica x usd_per_gpu_hour x 730.5 + ops",
    "$/M tokens           = $/month / (tokens per month / 1e6)",
    "utilization          = mean requests/s / (replicas x capacity requests/s)",
    "break-even volume V* = volume nearest today's where cost(V), the fleet re-sized for V by its policy,",
    "                       crosses the reference API's V p_api / 1e6 (the crossing on the cost-vs-volume chart)",
    "break-even u*        = V* / C(V*), C = sum_h R_h x 30.4375 d x 3600 s x X_tok of the fleet sized for V*",
    "                       (X_tok: prompt + output tokens/s per replica at the SLO)",
    "replicas per hour    = max(min, ceil(d / (target x c)), ceil(d / c) + spare)   (headroom and N+spare)",
    "p90 band             = simulated p90 x (1 +- e_engine); published median x sourced p90/p50 range",
    "hybrid               = min over k of [k R + ops + overflow requests x API $/request]",
    "peak concurrency     = (peak requests/s per replica) x (TTFT + (O - 1) TPOT)      (Little's law)",
    "advantage            = best eligible alternative $/month - recommended $/month",
)


def formula_blocks() -> list[Block]:
    """Appendix: the formulas every number rests on (DESIGN.md's napkin math and economics)."""
    return [
        Para("Every figure in this memo comes from these formulas with the inputs listed above; the references are "
             "the Scaling Book (All About Transformer Inference), kipply's Transformer Inference Arithmetic and "
             "Databricks' LLM Inference Performance Engineering."),
        Code(FORMULAS),
        Para(f"Money is shown as whole dollars per month ({money(1234.4)}) and USD per million tokens with three "
             "decimals, the formats `costmodel compare` prints.", style="small"),
    ]
