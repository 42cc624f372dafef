"""Price sheets (API tokens, GPU hours): schemas, loading, refresh, and the API cost arithmetic."""

from costmodel.pricing.schema import ApiPriceRow, GpuPriceRow
from costmodel.pricing.sheets import (
    PriceSheet,
    default_sheet_path,
    load_api_prices,
    load_gpu_prices,
    load_sheet,
)

__all__ = [
    "ApiPriceRow",
    "GpuPriceRow",
    "PriceSheet",
    "default_sheet_path",
    "load_api_prices",
    "load_gpu_prices",
    "load_sheet",
]
