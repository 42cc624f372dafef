"""What a workload costs through a provider's API, and whether the provider's rate limits hold.

Per request (USD), with T_in prompt tokens of which T_cached are read from the prompt cache and
T_write are written to it, and T_out output tokens:

    [(T_in - T_cached - T_write) p_in + T_cached p_cache_read + T_write p_cache_write + T_out p_out] / 1e6

Cache writes replace the input rate for the tokens written (Anthropic bills cache_creation tokens at
1.25x input *instead of* 1x; genai-prices decompose.py subtracts cache reads and writes from input the
same way). A rate the sheet leaves empty falls back to p_in (no cache discount / no write surcharge).
Long-context tier: when T_in > threshold, the tier rates apply to the whole request. Batch API:
every input-side rate is scaled by batch_input/input and the output rate by batch_output/output
(providers halve cache reads and writes along with input in batch mode). Whether the batch API is used at
all is pricing/batch_window.py `choose_batch`: only where the provider's completion window fits the SLO.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.errors import CostmodelError
from costmodel.pricing.batch_window import BatchChoice, choose_batch
from costmodel.pricing.schema import ApiPriceRow
from costmodel.pricing.sheets import PriceSheet
from costmodel.scenario.options import ApiOption
from costmodel.scenario.slo import Slo
from costmodel.scenario.workload import Workload
from costmodel.units import SECONDS_PER_MINUTE, TOKENS_PER_MTOK


@dataclass(frozen=True)
class TokenRates:
    """USD per million tokens for one request's regime (base or long-context, batch or not)."""

    input_usd_per_mtok: float
    cache_read_usd_per_mtok: float
    cache_write_usd_per_mtok: float
    output_usd_per_mtok: float


def token_rates(price: ApiPriceRow, *, long_context: bool, batch: bool) -> TokenRates:
    """The four rates that apply to a request, with the fallbacks and multipliers described above."""
    if batch and not price.has_batch:
        raise CostmodelError(f"'{price.id}' has no batch API price; use batch=False (or use_batch_api: false)")
    if long_context and price.long_context_threshold_tokens is not None:
        assert price.long_context_input_usd_per_mtok is not None  # validated with the threshold
        assert price.long_context_output_usd_per_mtok is not None
        p_in = price.long_context_input_usd_per_mtok
        p_read = price.long_context_cache_read_usd_per_mtok
        p_write = price.long_context_cache_write_usd_per_mtok
        p_out = price.long_context_output_usd_per_mtok
    else:
        p_in, p_out = price.input_usd_per_mtok, price.output_usd_per_mtok
        p_read, p_write = price.cache_read_usd_per_mtok, price.cache_write_usd_per_mtok
    in_scale, out_scale = 1.0, 1.0
    if batch:
        assert price.batch_input_usd_per_mtok is not None and price.batch_output_usd_per_mtok is not None
        in_scale = price.batch_input_usd_per_mtok / price.input_usd_per_mtok if price.input_usd_per_mtok else 1.0
        out_scale = price.batch_output_usd_per_mtok / price.output_usd_per_mtok if price.output_usd_per_mtok else 1.0
    return TokenRates(
        input_usd_per_mtok=p_in * in_scale,
        cache_read_usd_per_mtok=(p_read if p_read is not None else p_in) * in_scale,
        cache_write_usd_per_mtok=(p_write if p_write is not None else p_in) * in_scale,
        output_usd_per_mtok=p_out * out_scale,
    )


@dataclass(frozen=True)
class ApiRequestCost:
    """Cost of one request, split by token kind (USD)."""

    price_id: str
    input_usd: float
    cache_read_usd: float
    cache_write_usd: float
    output_usd: float
    long_context: bool
    batch: bool

    @property
    def total_usd(self) -> float:
        """All four parts."""
        return self.input_usd + self.cache_read_usd + self.cache_write_usd + self.output_usd


def api_request_cost(
    price: ApiPriceRow,
    *,
    prompt_tokens: float,
    output_tokens: float,
    cached_prompt_tokens: float = 0.0,
    cache_write_tokens: float = 0.0,
    batch: bool = False,
) -> ApiRequestCost:
    """Cost of one request with these token counts (cached and written tokens are part of the prompt)."""
    if min(prompt_tokens, output_tokens, cached_prompt_tokens, cache_write_tokens) < 0:
        raise CostmodelError("token counts must be >= 0")
    if cached_prompt_tokens + cache_write_tokens > prompt_tokens:
        raise CostmodelError("cached_prompt_tokens + cache_write_tokens cannot exceed prompt_tokens (they are part of it)")
    threshold = price.long_context_threshold_tokens
    long_context = threshold is not None and prompt_tokens > threshold
    rates = token_rates(price, long_context=long_context, batch=batch)
    uncached_tokens = prompt_tokens - cached_prompt_tokens - cache_write_tokens
    return ApiRequestCost(
        price_id=price.id,
        input_usd=uncached_tokens * rates.input_usd_per_mtok / TOKENS_PER_MTOK,
        cache_read_usd=cached_prompt_tokens * rates.cache_read_usd_per_mtok / TOKENS_PER_MTOK,
        cache_write_usd=cache_write_tokens * rates.cache_write_usd_per_mtok / TOKENS_PER_MTOK,
        output_usd=output_tokens * rates.output_usd_per_mtok / TOKENS_PER_MTOK,
        long_context=long_context,
        batch=batch,
    )


@dataclass(frozen=True)
class RateLimitCheck:
    """Peak-minute demand against the provider's per-minute limits."""

    peak_requests_per_minute: float
    peak_tokens_per_minute: float
    requests_per_minute_limit: int | None
    tokens_per_minute_limit: int | None
    throttled: bool
    reason: str
    batch: bool = False  # routed through the batch API: per-minute limits do not apply


@dataclass(frozen=True)
class ApiWorkloadCost:
    """A workload through one API price row: monthly cost, blended $/M tokens, rate-limit verdict."""

    price_id: str
    batch: bool
    requests_per_month: float
    tokens_per_month: float
    output_tokens_per_month: float
    usd_per_request: float
    usd_per_month: float
    usd_per_mtok: float
    usd_per_output_mtok: float
    long_context_request_fraction: float
    rate_limit: RateLimitCheck
    batch_choice: BatchChoice = BatchChoice(batch=False)  # the window that decided `batch`, or why not


def _input_rate_per_prompt_token(rates: TokenRates, workload: Workload) -> float:
    cached, written = workload.cached_prompt_fraction, workload.cache_write_prompt_fraction
    return ((1.0 - cached - written) * rates.input_usd_per_mtok + cached * rates.cache_read_usd_per_mtok
            + written * rates.cache_write_usd_per_mtok)


def mean_request_usd(price: ApiPriceRow, workload: Workload, *, batch: bool) -> tuple[float, float]:
    """(mean USD per request, fraction of requests in the long-context tier), exact for the
    workload's distributions: E[cost] = r_base E[T_in; T_in <= t] + r_long E[T_in; T_in > t]
    + E[T_out] (p_out_base P(T_in <= t) + p_out_long P(T_in > t)), prompt and output lengths independent."""
    base = token_rates(price, long_context=False, batch=batch)
    long = token_rates(price, long_context=True, batch=batch)
    threshold = price.long_context_threshold_tokens
    prompt = workload.prompt_tokens
    mean_in = prompt.expected_tokens()
    mean_in_long = prompt.partial_expected_tokens_above(threshold) if threshold is not None else 0.0
    p_long = prompt.probability_above(threshold) if threshold is not None else 0.0
    input_usd = (_input_rate_per_prompt_token(base, workload) * (mean_in - mean_in_long)
                 + _input_rate_per_prompt_token(long, workload) * mean_in_long)
    output_usd = workload.mean_output_tokens() * (
        base.output_usd_per_mtok * (1.0 - p_long) + long.output_usd_per_mtok * p_long
    )
    return (input_usd + output_usd) / TOKENS_PER_MTOK, p_long


def check_rate_limits(
    workload: Workload,
    *,
    requests_per_minute_limit: int | None,
    tokens_per_minute_limit: int | None,
    batch: bool,
    months_ahead: float = 0.0,
) -> RateLimitCheck:
    """Compare the busiest hour's per-minute demand (prompt + output tokens) with the limits."""
    peak_rpm = workload.peak_requests_per_second(months_ahead=months_ahead) * SECONDS_PER_MINUTE
    peak_tpm = peak_rpm * workload.mean_tokens_per_request()
    problems = []
    if batch:
        reason = "batch API: per-minute limits do not apply (batch queues have their own quotas)"
    elif requests_per_minute_limit is None and tokens_per_minute_limit is None:
        reason = "no published per-minute limit; check your account's tier"
    else:
        if requests_per_minute_limit is not None and peak_rpm > requests_per_minute_limit:
            problems.append(f"peak {peak_rpm:,.0f} requests/min exceeds the {requests_per_minute_limit:,} limit")
        if tokens_per_minute_limit is not None and peak_tpm > tokens_per_minute_limit:
            problems.append(f"peak {peak_tpm:,.0f} tokens/min exceeds the {tokens_per_minute_limit:,} limit")
        reason = "; ".join(problems) + " (would be throttled)" if problems else "within the per-minute limits"
    return RateLimitCheck(
        peak_requests_per_minute=peak_rpm,
        peak_tokens_per_minute=peak_tpm,
        requests_per_minute_limit=requests_per_minute_limit,
        tokens_per_minute_limit=tokens_per_minute_limit,
        throttled=bool(problems),
        reason=reason,
        batch=batch,
    )


def api_workload_cost(
    price: ApiPriceRow,
    workload: Workload,
    *,
    use_batch_api: bool = True,
    requests_per_minute_limit: int | None = None,
    tokens_per_minute_limit: int | None = None,
    months_ahead: float = 0.0,
    slo: Slo | None = None,
) -> ApiWorkloadCost:
    """Monthly cost of `workload` through `price`; the batch API is used when the workload allows
    it, the row has batch prices, `use_batch_api` is set and the provider's completion window fits every
    TTFT/E2E limit of `slo` (None: no limit; pricing/batch_window.py). Limits default to the sheet's."""
    choice = choose_batch(provider=price.id.split("/")[0], has_batch_price=price.has_batch,
                          batch_allowed=workload.batch_allowed, use_batch_api=use_batch_api, slo=slo)
    batch = choice.batch
    usd_per_request, p_long = mean_request_usd(price, workload, batch=batch)
    requests = workload.requests_per_month(months_ahead=months_ahead)
    tokens = workload.tokens_per_month_total(months_ahead=months_ahead)
    output_tokens = workload.output_tokens_per_month(months_ahead=months_ahead)
    usd_per_month = usd_per_request * requests
    limits = check_rate_limits(
        workload,
        requests_per_minute_limit=requests_per_minute_limit or price.requests_per_minute,
        tokens_per_minute_limit=tokens_per_minute_limit or price.tokens_per_minute,
        batch=batch,
        months_ahead=months_ahead,
    )
    return ApiWorkloadCost(
        price_id=price.id,
        batch=batch,
        requests_per_month=requests,
        tokens_per_month=tokens,
        output_tokens_per_month=output_tokens,
        usd_per_request=usd_per_request,
        usd_per_month=usd_per_month,
        usd_per_mtok=usd_per_month / tokens * TOKENS_PER_MTOK,
        usd_per_output_mtok=usd_per_month / output_tokens * TOKENS_PER_MTOK,
        long_context_request_fraction=p_long,
        rate_limit=limits,
        batch_choice=choice,
    )


def api_option_cost(
    option: ApiOption, workload: Workload, sheet: PriceSheet[ApiPriceRow], *, slo: Slo | None,
    months_ahead: float = 0.0,
) -> ApiWorkloadCost:
    """`api_workload_cost` for a scenario's API option (its price row, batch choice and limit overrides),
    judged against the scenario's `slo` for the batch window."""
    return api_workload_cost(
        sheet.get(option.price_id),
        workload,
        use_batch_api=option.use_batch_api,
        requests_per_minute_limit=option.requests_per_minute_limit,
        tokens_per_minute_limit=option.tokens_per_minute_limit,
        months_ahead=months_ahead,
        slo=slo,
    )
