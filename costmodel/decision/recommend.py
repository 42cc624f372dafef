"""Which ranked option is recommended, what it costs over the cheapest usable one, and what to verify first.

The ranking lists usable options (not excluded) by $/month and the excluded ones last (decision/rank.py).
The recommendation is the cheapest usable option whose `slo_status` is `meets` or `likely_meets`
(`unverified` too when the scenario sets `accept_unverified_latency`). When a cheaper usable option is
`unverified`, the decision names it with the saving and the exact probe that would settle it ("verify
first"); the premium of the recommendation over the cheapest usable option is always reported.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from costmodel.decision.evidence import USABLE_STATUSES
from costmodel.decision.results import CheaperUnverified, OptionResult
from costmodel.measurements.endpoint_result import DEFAULT_TIMEOUT_SECONDS, MAX_CONCURRENCY
from costmodel.scenario import ApiOption, Scenario, SelfHostOption
from costmodel.units import fmt_money, fmt_share

PROBE_REQUESTS = 200  # requests of the verifying probe: ~20 above the p90, enough to read it


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    """The chosen option (None: none is known to meet the SLO) and the figures around it."""

    chosen: OptionResult | None
    cheapest_usable: OptionResult | None
    cheaper_unverified: CheaperUnverified | None
    premium_usd_per_month: float | None
    premium_usd_with_commitments: float | None = None  # on the horizon basis (None when ranked by $/month)


def allowed_statuses(*, accept_unverified: bool) -> frozenset[str]:
    """The latency statuses a recommendation may have."""
    return USABLE_STATUSES | {"unverified"} if accept_unverified else USABLE_STATUSES


def _model_name(scenario: Scenario, name: str, api_models: dict[str, str]) -> str:
    option = scenario.option(name)
    if isinstance(option, ApiOption):
        return api_models.get(name, option.price_id.split("/", 1)[-1])
    return option.model if isinstance(option, SelfHostOption) else name


def probe_concurrency(*, peak_requests_per_second: float, ttft_seconds: float, tpot_seconds: float,
                      output_tokens: float) -> int:
    """Requests in flight to probe at: Little's law, the peak rate x one request's duration (TTFT + output x TPOT),
    the duration at most the probe's per-request timeout (it holds no request longer) and the count at most
    the probe's own concurrency limit."""
    duration_seconds = min(ttft_seconds + output_tokens * tpot_seconds, DEFAULT_TIMEOUT_SECONDS)
    return min(MAX_CONCURRENCY, max(1, math.ceil(peak_requests_per_second * duration_seconds)))


def probe_command(scenario: Scenario, option: OptionResult, *, api_models: dict[str, str]) -> str:
    """`costmodel probe-endpoint` at the peak hour's concurrency, mean lengths and p90 limits, for `option`
    (its base URL is the user's: the provider's OpenAI-compatible endpoint, or a trial deployment)."""
    workload, slo = scenario.workload, scenario.slo
    # One request's duration: the option's own p90 figures where it has them, else the SLO's limits.
    ttft = option.ttft_p90_seconds if option.ttft_p90_seconds is not None else slo.ttft_p90_seconds
    tpot = option.tpot_p90_seconds if option.tpot_p90_seconds is not None else slo.tpot_p90_seconds
    concurrency = probe_concurrency(peak_requests_per_second=workload.peak_requests_per_second(), ttft_seconds=ttft,
                                    tpot_seconds=tpot, output_tokens=workload.mean_output_tokens())
    parts = ["costmodel", "probe-endpoint", "--url", "$BASE_URL", "--model", _model_name(scenario, option.name, api_models),
             "--concurrency", str(concurrency), "--requests", str(max(PROBE_REQUESTS, 2 * concurrency)),
             "--prompt-tokens", str(max(1, round(workload.mean_prompt_tokens()))),
             "--max-tokens", str(max(1, round(workload.mean_output_tokens()))),
             "--slo-ttft-p90", f"{slo.ttft_p90_seconds:g}", "--slo-tpot-p90", f"{slo.tpot_p90_seconds:g}"]
    return " ".join(p if p == "$BASE_URL" else shlex.quote(p) for p in parts)


def recommend(ranked: tuple[OptionResult, ...], scenario: Scenario, *,
              api_models: dict[str, str] | None = None) -> Recommendation:
    """The recommendation of a ranked list (see the module docstring); `api_models`: API option -> the model
    name its provider serves (for the probe command)."""
    allowed = allowed_statuses(accept_unverified=scenario.accept_unverified_latency)
    usable = [r for r in ranked if r.excluded_reason is None and not r.throttled and math.isfinite(r.usd_per_month)]
    chosen = next((r for r in usable if r.slo_status in allowed), None)
    cheapest = usable[0] if usable else None
    cheaper = None
    # "Cheaper" on the ranking's basis (decision/ranking.py): with a commitment past the horizon, a reserved
    # option cheaper in month 0 can cost more over the horizon with its commitment.
    limit = chosen.ranking_usd if chosen is not None else math.inf
    candidate = next((r for r in usable if r.slo_status == "unverified" and r.ranking_usd < limit - 0.005), None)
    if candidate is not None and "unverified" not in allowed:
        saving = chosen.usd_per_month - candidate.usd_per_month if chosen is not None else math.nan
        cheaper = CheaperUnverified(
            option=candidate.name, usd_per_month=candidate.usd_per_month,
            saving_usd_per_month=saving,
            saving_fraction=saving / chosen.usd_per_month if chosen is not None and chosen.usd_per_month > 0 else math.nan,
            check=probe_command(scenario, candidate, api_models=api_models or {}),
            saving_usd_with_commitments=_ranked_gap(chosen, candidate))
    premium = (chosen.usd_per_month - cheapest.usd_per_month) if chosen is not None and cheapest is not None else None
    return Recommendation(chosen=chosen, cheapest_usable=cheapest, cheaper_unverified=cheaper,
                          premium_usd_per_month=max(premium, 0.0) if premium is not None else None,
                          premium_usd_with_commitments=_ranked_gap(chosen, cheapest))


def _ranked_gap(more: OptionResult | None, less: OptionResult | None) -> float | None:
    """more's horizon total with commitments minus less's, when both are ranked on it; else None."""
    if more is None or less is None or more.ranking_basis != "usd_horizon_total_with_commitments":
        return None
    return max(more.ranking_usd - less.ranking_usd, 0.0)


def verify_first_sentence(cheaper: CheaperUnverified) -> str:
    """'Verify first: X would save $N/month (K%) if its latency holds' (+ the check)."""
    if math.isnan(cheaper.saving_usd_per_month):
        return (f"Verify first: {cheaper.option} ({fmt_money(cheaper.usd_per_month)}/month) is the cheapest usable option, "
                f"but its latency is unverified; check it with `{cheaper.check}`.")
    if cheaper.saving_usd_with_commitments is not None:
        return (f"Verify first: {cheaper.option} would save {fmt_money(cheaper.saving_usd_with_commitments)} over "
                f"the horizon, commitments included ({fmt_money(cheaper.saving_usd_per_month)}/month in month 0), if "
                f"its latency holds; check it with `{cheaper.check}`.")
    return (f"Verify first: {cheaper.option} would save {fmt_money(cheaper.saving_usd_per_month)}/month "
            f"({fmt_share(cheaper.saving_fraction)}) if its latency holds; check it with `{cheaper.check}`.")
