"""The workload of a scenario: volume, token distributions, caching, traffic shape, growth.

Volume is given either as requests per day or as tokens per month (prompt + output tokens); the
other follows from the mean tokens per request. A month is 365.25 / 12 = 30.4375 days everywhere.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from costmodel.scenario.distributions import TokenDistribution
from costmodel.scenario.limits import (
    MAX_GROWTH_PER_MONTH,
    MAX_HOURLY_WEIGHT,
    MAX_PEAK_TO_MEAN,
    MAX_REQUESTS_PER_DAY,
    MAX_TOKENS_PER_MONTH,
    MIN_GROWTH_PER_MONTH,
    MIN_HOURLY_WEIGHT_SUM,
    MIN_REQUESTS_PER_DAY,
    MIN_TOKENS_PER_MONTH,
)
from costmodel.strict import StrictModel
from costmodel.units import DAYS_PER_MONTH, SECONDS_PER_MONTH


class Workload(StrictModel):
    """What the service must handle: how much, how long, how bursty, how it grows."""

    requests_per_day: float | None = Field(
        default=None, gt=0, le=MAX_REQUESTS_PER_DAY,
        description="requests per day (give this or tokens_per_month)"
    )
    tokens_per_month: float | None = Field(
        default=None, gt=0, le=MAX_TOKENS_PER_MONTH,
        description="prompt + output tokens per month (give this or requests_per_day)"
    )
    prompt_tokens: TokenDistribution = Field(description="prompt tokens per request (cached ones included)")
    output_tokens: TokenDistribution = Field(description="generated tokens per request")
    cached_prompt_fraction: float = Field(
        default=0.0, ge=0, le=1, description="fraction of prompt tokens served from the provider's prompt cache"
    )
    cache_write_prompt_fraction: float = Field(
        default=0.0, ge=0, le=1,
        description="fraction of prompt tokens billed as cache writes (explicit caching, e.g. Anthropic); 0 if implicit",
    )
    hourly_traffic_weights: list[float] | None = Field(
        default=None, description="24 relative request rates, hour 0..23 (give this or peak_to_mean_ratio)"
    )
    peak_to_mean_ratio: float | None = Field(
        default=None, ge=1, le=MAX_PEAK_TO_MEAN,
        description="peak request rate / mean request rate (give this or hourly_traffic_weights); at most 24"
    )
    growth_per_month: float = Field(default=0.0, ge=MIN_GROWTH_PER_MONTH, le=MAX_GROWTH_PER_MONTH,
                                    description="fractional volume growth per month, 0.05 = 5%")
    batch_allowed: bool = Field(
        default=False, description="requests can wait for a batch API (offline work, results within 24 h)"
    )

    @field_validator("requests_per_day")
    @classmethod
    def _check_requests(cls, value: float | None) -> float | None:
        if value is not None and value < MIN_REQUESTS_PER_DAY:
            raise ValueError(f"must be at least {MIN_REQUESTS_PER_DAY:g} requests/day (got {value!r}); fix the value")
        return value

    @field_validator("tokens_per_month")
    @classmethod
    def _check_tokens(cls, value: float | None) -> float | None:
        if value is not None and value < MIN_TOKENS_PER_MONTH:
            raise ValueError(f"must be at least {MIN_TOKENS_PER_MONTH:g} token/month (got {value!r}); fix the value")
        return value

    @field_validator("hourly_traffic_weights")
    @classmethod
    def _check_weights(cls, weights: list[float] | None) -> list[float] | None:
        if weights is not None:
            if len(weights) != 24:
                raise ValueError(f"has {len(weights)} numbers; give 24, one per hour")
            if any(w < 0 or w > MAX_HOURLY_WEIGHT for w in weights) or sum(weights) < MIN_HOURLY_WEIGHT_SUM:
                raise ValueError(f"each weight must be in 0..{MAX_HOURLY_WEIGHT:g} with a positive sum "
                                 f"(>= {MIN_HOURLY_WEIGHT_SUM:g}); only their ratios matter")
        return weights

    @model_validator(mode="after")
    def _check(self) -> Workload:
        if (self.requests_per_day is None) == (self.tokens_per_month is None):
            raise ValueError("give exactly one of requests_per_day or tokens_per_month (prompt + output tokens)")
        if (self.hourly_traffic_weights is None) == (self.peak_to_mean_ratio is None):
            raise ValueError(
                "give exactly one of hourly_traffic_weights (24 numbers) or peak_to_mean_ratio (1.0 for flat traffic)"
            )
        if self.cached_prompt_fraction + self.cache_write_prompt_fraction > 1:
            raise ValueError("cached_prompt_fraction + cache_write_prompt_fraction cannot exceed 1 (of the prompt)")
        return self

    def mean_prompt_tokens(self) -> float:
        """Mean prompt tokens per request."""
        return self.prompt_tokens.expected_tokens()

    def mean_output_tokens(self) -> float:
        """Mean output tokens per request."""
        return self.output_tokens.expected_tokens()

    def mean_tokens_per_request(self) -> float:
        """Mean prompt + output tokens per request."""
        return self.mean_prompt_tokens() + self.mean_output_tokens()

    def growth_factor(self, *, months_ahead: float = 0.0) -> float:
        """(1 + growth_per_month) ** months_ahead."""
        return (1.0 + self.growth_per_month) ** months_ahead

    def requests_per_month(self, *, months_ahead: float = 0.0) -> float:
        """Requests in one month, `months_ahead` months from now."""
        if self.requests_per_day is not None:
            base = self.requests_per_day * DAYS_PER_MONTH
        else:
            assert self.tokens_per_month is not None  # validated: one of the two is set
            base = self.tokens_per_month / self.mean_tokens_per_request()
        return base * self.growth_factor(months_ahead=months_ahead)

    def tokens_per_month_total(self, *, months_ahead: float = 0.0) -> float:
        """Prompt + output tokens in one month."""
        return self.requests_per_month(months_ahead=months_ahead) * self.mean_tokens_per_request()

    def output_tokens_per_month(self, *, months_ahead: float = 0.0) -> float:
        """Output tokens in one month."""
        return self.requests_per_month(months_ahead=months_ahead) * self.mean_output_tokens()

    def mean_requests_per_second(self, *, months_ahead: float = 0.0) -> float:
        """Month-average request rate, requests/s."""
        return self.requests_per_month(months_ahead=months_ahead) / SECONDS_PER_MONTH

    def hourly_load_factors(self) -> tuple[float, ...] | None:
        """The 24 hourly weights scaled to mean 1 (rate in hour h = mean rate x factor), if given."""
        if self.hourly_traffic_weights is None:
            return None
        mean_weight = sum(self.hourly_traffic_weights) / 24.0
        return tuple(w / mean_weight for w in self.hourly_traffic_weights)

    def peak_to_mean(self) -> float:
        """Peak-hour rate over mean rate: from the hourly profile, or the ratio given."""
        factors = self.hourly_load_factors()
        if factors is not None:
            return max(factors)
        assert self.peak_to_mean_ratio is not None
        return self.peak_to_mean_ratio

    def peak_requests_per_second(self, *, months_ahead: float = 0.0) -> float:
        """Request rate in the busiest hour, requests/s (burstiness within the hour is the simulator's job)."""
        return self.mean_requests_per_second(months_ahead=months_ahead) * self.peak_to_mean()
