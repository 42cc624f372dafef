"""Price sheets (API tokens, GPU hours): schemas, loading, refresh, and the API cost arithmetic."""

from costmodel.pricing.api_cost import (
    ApiRequestCost,
    ApiWorkloadCost,
    RateLimitCheck,
    TokenRates,
    api_option_cost,
    api_request_cost,
    api_workload_cost,
    check_rate_limits,
    mean_request_usd,
    token_rates,
)
from costmodel.pricing.dispersion import (
    LatencyDispersionRow,
    LatencyDispersionSheet,
    dispersion_band,
    load_latency_dispersion,
)
from costmodel.pricing.latency import ApiLatencyRow, ApiLatencySheet, load_api_latency
from costmodel.pricing.schema import ApiPriceRow, GpuPriceRow
from costmodel.pricing.sheets import (
    PriceSheet,
    default_sheet_path,
    load_api_prices,
    load_gpu_prices,
    load_sheet,
)
from costmodel.units import HOURS_PER_MONTH, HOURS_PER_YEAR

__all__ = [
    "HOURS_PER_MONTH",
    "HOURS_PER_YEAR",
    "ApiLatencyRow",
    "ApiLatencySheet",
    "ApiPriceRow",
    "ApiRequestCost",
    "ApiWorkloadCost",
    "GpuPriceRow",
    "LatencyDispersionRow",
    "LatencyDispersionSheet",
    "PriceSheet",
    "RateLimitCheck",
    "TokenRates",
    "api_option_cost",
    "api_request_cost",
    "api_workload_cost",
    "check_rate_limits",
    "default_sheet_path",
    "dispersion_band",
    "load_api_latency",
    "load_api_prices",
    "load_gpu_prices",
    "load_latency_dispersion",
    "load_sheet",
    "mean_request_usd",
    "token_rates",
]
