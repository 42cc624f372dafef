"""Pydantic rows of the two price sheets: API token prices and GPU-hour prices.

Units are in the field names: `_usd_per_mtok` is US dollars per million tokens, `_usd_per_gpu_hour`
US dollars per GPU per hour, `_tokens` a count of tokens. Every row carries `source` and `checked`
(the date someone last compared the row with its source), like genai-prices' data files do, and may
carry `price_as_of`, the date of the price's own source (a provider page's date, a catalog commit):
price ages count from it, falling back to `checked` where it is unknown.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import Field, model_validator

from costmodel.scenario.limits import MAX_USD_PER_GPU_HOUR
from costmodel.strict import StrictModel
from costmodel.units import HOURS_PER_MONTH, HOURS_PER_YEAR

ROW_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)+$"
PriceDateBasis = Literal["page", "snapshot", "read"]

# The dearest rate in the bundled API sheet is $25 per million tokens (anthropic/claude-opus-4-5 output,
# pricing_data/api_prices.csv). A rate 400x that is a unit slip (per thousand tokens, cents) or a corrupt
# file, not a price: refused, which also keeps every cost it enters finite (1e308 x tokens is inf).
MAX_API_USD_PER_MTOK = 10_000.0


class ApiPriceRow(StrictModel):
    """One model as sold by one provider through its API, priced per million tokens."""

    id: str = Field(pattern=ROW_ID_PATTERN, description="'provider/model', lower-case, e.g. openai/gpt-4o")
    provider: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="provider id, the part of `id` before '/'")
    model: str = Field(min_length=1, description="model name the provider's API expects")
    open_model_id: str | None = Field(
        default=None, description="catalog model behind a hosted open model (e.g. llama-3.3-70b); empty if closed"
    )
    input_usd_per_mtok: float = Field(ge=0, description="USD per million uncached input tokens")
    cache_read_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million input tokens read from the prompt cache; empty: no discount"
    )
    cache_write_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million input tokens written to the cache; empty: billed as input"
    )
    output_usd_per_mtok: float = Field(ge=0, description="USD per million output tokens")
    batch_input_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million input tokens through the batch API; empty: no batch API"
    )
    batch_output_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million output tokens through the batch API"
    )
    long_context_threshold_tokens: int | None = Field(
        default=None, gt=0, description="prompts longer than this many tokens pay the long-context rates, all tokens"
    )
    long_context_input_usd_per_mtok: float | None = Field(default=None, ge=0)
    long_context_cache_read_usd_per_mtok: float | None = Field(default=None, ge=0)
    long_context_cache_write_usd_per_mtok: float | None = Field(default=None, ge=0)
    long_context_output_usd_per_mtok: float | None = Field(default=None, ge=0)
    requests_per_minute: int | None = Field(default=None, gt=0, description="published rate limit, requests/min")
    tokens_per_minute: int | None = Field(default=None, gt=0, description="published rate limit, tokens/min")
    rate_limit_tier: str | None = Field(
        default=None, min_length=1, description="account tier the limits are for, e.g. 'tier 1 (paid)'; empty: none"
    )
    rate_limit_source: str | None = Field(default=None, min_length=1, description="page the limits come from")
    max_input_tokens: int | None = Field(default=None, gt=0, description="context window for the prompt, tokens")
    max_output_tokens: int | None = Field(default=None, gt=0, description="longest completion, tokens")
    deprecation_date: dt.date | None = Field(default=None, description="date the provider retires the model")
    deprecation_source: str | None = Field(
        default=None, min_length=1, description="page that announces the retirement (or that the model is no longer sold)"
    )
    source: Literal["litellm", "genai-prices", "provider-page", "manual"] = Field(
        description="where the prices come from; 'provider-page': the provider's own pricing page, transcribed"
    )
    source_version: str = Field(min_length=1, description="package version or commit of the source data")
    source_key: str = Field(min_length=1, description="the row's key in the source (LiteLLM key, provider/model)")
    source_url: str | None = Field(default=None, description="the provider's pricing page, as the source cites it")
    crosscheck_source: str | None = Field(default=None, description="second source compared against, with version")
    crosscheck_input_usd_per_mtok: float | None = Field(default=None, ge=0)
    crosscheck_cache_read_usd_per_mtok: float | None = Field(default=None, ge=0)
    crosscheck_cache_write_usd_per_mtok: float | None = Field(default=None, ge=0)
    crosscheck_output_usd_per_mtok: float | None = Field(default=None, ge=0)
    crosscheck_long_context_threshold_tokens: int | None = Field(default=None, gt=0)
    disagreement: str | None = Field(
        default=None, description="fields where the two sources differ, e.g. 'input: 1.04 vs 0.88'; empty: agree"
    )
    price_as_of: dt.date | None = Field(
        default=None, description="date of the price's own source (page date, release); empty: unknown, use checked"
    )
    price_as_of_basis: PriceDateBasis | None = Field(
        default=None, description="what price_as_of is: 'page' (the page's own date), 'snapshot' (the day the "
        "LiteLLM / genai-prices package snapshot was read), 'read' (a page with no date of its own, the day it was read)")
    discount_source: str | None = Field(
        default=None, min_length=1, description="page that publishes the batch or cached-input discount applied to "
        "this row (batch_* or cache_read_* derived from it), with its date")
    checked: dt.date = Field(description="date the row was last compared with its source")
    notes: str | None = None

    @model_validator(mode="after")
    def _check_row(self) -> ApiPriceRow:
        if not self.id.startswith(self.provider + "/"):
            raise ValueError(f"id '{self.id}' must start with its provider '{self.provider}/'")
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name.endswith("_usd_per_mtok") and value is not None and value > MAX_API_USD_PER_MTOK:
                raise ValueError(f"{name} {value:g} is above {MAX_API_USD_PER_MTOK:,.0f} USD per million tokens, "
                                 "far above any API price sold; is it in USD per million tokens?")
        if (self.batch_input_usd_per_mtok is None) != (self.batch_output_usd_per_mtok is None):
            raise ValueError("give both batch_input_usd_per_mtok and batch_output_usd_per_mtok, or neither")
        tier = (self.long_context_input_usd_per_mtok, self.long_context_output_usd_per_mtok)
        if self.long_context_threshold_tokens is None and any(
            v is not None
            for v in (*tier, self.long_context_cache_read_usd_per_mtok, self.long_context_cache_write_usd_per_mtok)
        ):
            raise ValueError("long-context rates need long_context_threshold_tokens (prompt tokens where they start)")
        if self.deprecation_date is not None and self.deprecation_source is None:
            raise ValueError("deprecation_date needs deprecation_source (the page or package that gives the date)")
        if (self.price_as_of is None) != (self.price_as_of_basis is None):
            raise ValueError("give price_as_of with price_as_of_basis ('page', 'snapshot' or 'read'), or neither")
        if self.long_context_threshold_tokens is not None and any(v is None for v in tier):
            raise ValueError(
                "long_context_threshold_tokens needs long_context_input_usd_per_mtok and "
                "long_context_output_usd_per_mtok"
            )
        return self

    @property
    def price_date(self) -> dt.date:
        """The date price ages count from: `price_as_of`, else `checked`."""
        return self.price_as_of or self.checked

    def is_retired(self, *, today: dt.date | None = None) -> bool:
        """Whether the provider's announced retirement date has passed."""
        return self.deprecation_date is not None and self.deprecation_date <= (today or dt.date.today())

    @property
    def has_batch(self) -> bool:
        """Whether the provider sells this model through a batch (asynchronous, discounted) API."""
        return self.batch_input_usd_per_mtok is not None


GpuOffering = Literal["on-demand", "reserved", "spot", "owned"]
# A reserved row's `commitment` states a fixed term as its first words, "1 year, no upfront" or "3 years, 25%
# upfront" (the AWS/SemiAnalysis wording in the sheet); "capacity block, 1-182 days prepaid" has no fixed term.
TERM_PATTERN = re.compile(r"^(?P<count>\d+)\s*-?\s*(?P<unit>years?|months?)\b", re.IGNORECASE)
MAX_TERM_MONTHS = 120
ProviderKind = Literal["hyperscaler", "neocloud", "marketplace", "analyst-estimate", "owned"]



class GpuPriceRow(StrictModel):
    """One way to get one accelerator for an hour: rent it (on-demand, reserved, spot) or own it."""

    id: str = Field(pattern=ROW_ID_PATTERN, description="'provider/accelerator/offering', e.g. aws/h100-sxm/on-demand")
    accelerator_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="catalog accelerator id, e.g. h100-sxm")
    provider: str = Field(min_length=1)
    provider_kind: ProviderKind
    offering: GpuOffering
    commitment: str | None = Field(default=None, description="term of a reserved offering, e.g. '3 years, 25% upfront'")
    instance: str | None = Field(default=None, description="instance type or SKU the price is for")
    gpus_per_instance: int = Field(default=1, gt=0)
    region: str | None = None
    usd_per_gpu_hour: float | None = Field(default=None, gt=0, le=MAX_USD_PER_GPU_HOUR,
                                           description="rental price per GPU, USD/h")
    capex_usd_per_gpu: float | None = Field(default=None, gt=0, description="purchase price per GPU, USD")
    life_years: float | None = Field(default=None, gt=0, description="years the purchase is depreciated over")
    power_kw_per_gpu: float | None = Field(default=None, gt=0, description="electrical draw per GPU at load, kW")
    pue: float | None = Field(default=None, ge=1, description="facility power / IT power")
    usd_per_kwh: float | None = Field(default=None, gt=0, description="electricity price, USD/kWh")
    colocation_usd_per_gpu_month: float | None = Field(
        default=None, ge=0, description="rack space, cooling and network per GPU, USD/month"
    )
    source: str = Field(min_length=1, description="where the numbers come from (URL or repo path)")
    source_version: str | None = Field(default=None, description="commit or publication date of the source")
    price_as_of: dt.date | None = Field(
        default=None, description="date of the price's own source (page date, catalog commit); empty: use checked"
    )
    checked: dt.date = Field(description="date the row was last compared with its source")
    notes: str | None = None

    @model_validator(mode="after")
    def _check_offering(self) -> GpuPriceRow:
        parts = self.id.split("/")
        if len(parts) < 3 or parts[1] != self.accelerator_id:
            raise ValueError(
                f"id '{self.id}' must look like 'provider/{self.accelerator_id}/offering' "
                "(the middle part is accelerator_id)"
            )
        owned = (self.capex_usd_per_gpu, self.life_years, self.power_kw_per_gpu, self.pue, self.usd_per_kwh,
                 self.colocation_usd_per_gpu_month)
        if self.offering == "owned":
            if any(v is None for v in owned):
                raise ValueError(
                    "an owned row needs capex_usd_per_gpu, life_years, power_kw_per_gpu, pue, usd_per_kwh and "
                    "colocation_usd_per_gpu_month"
                )
            if self.usd_per_gpu_hour is not None:
                raise ValueError("an owned row derives its hourly cost; leave usd_per_gpu_hour empty")
        elif self.usd_per_gpu_hour is None:
            raise ValueError(f"a {self.offering} row needs usd_per_gpu_hour (rental price per GPU, USD/h)")
        term = _term_months(self.commitment)
        if term is not None and (self.offering != "reserved" or not 1 <= term <= MAX_TERM_MONTHS):
            raise ValueError(f"commitment '{self.commitment}' states a {term}-month term: only a reserved row has a "
                             f"term, of 1..{MAX_TERM_MONTHS} months")
        return self

    @property
    def term_months(self) -> int | None:
        """Months a reserved row commits to (from `commitment`: "1 year" = 12, "3 years" = 36); None: no term."""
        return _term_months(self.commitment)

    @property
    def price_date(self) -> dt.date:
        """The date price ages count from: `price_as_of`, else `checked`."""
        return self.price_as_of or self.checked

    def all_in_usd_per_gpu_hour(self) -> float:
        """Hourly cost of one GPU: the rental price, or for owned hardware
        capex / (life x 8766 h) + kW x PUE x USD/kWh (at full power, every hour) + colocation / 730.5 h."""
        if self.usd_per_gpu_hour is not None:
            return self.usd_per_gpu_hour
        assert self.capex_usd_per_gpu and self.life_years and self.power_kw_per_gpu and self.pue  # validated
        assert self.usd_per_kwh is not None and self.colocation_usd_per_gpu_month is not None
        capex_usd_per_hour = self.capex_usd_per_gpu / (self.life_years * HOURS_PER_YEAR)
        power_usd_per_hour = self.power_kw_per_gpu * self.pue * self.usd_per_kwh
        colocation_usd_per_hour = self.colocation_usd_per_gpu_month / HOURS_PER_MONTH
        return capex_usd_per_hour + power_usd_per_hour + colocation_usd_per_hour


def _term_months(commitment: str | None) -> int | None:
    """The fixed term leading a commitment ("3 years, 25% upfront" -> 36), else None."""
    match = TERM_PATTERN.match(commitment.strip()) if commitment else None
    if match is None:
        return None
    count = int(match.group("count"))
    return count * 12 if match.group("unit").lower().startswith("year") else count
