"""The scenario's optional `search:` section: which self-host configurations `costmodel search` may consider."""

from __future__ import annotations

from pydantic import Field

from costmodel.scenario.limits import MAX_USD_PER_MONTH
from costmodel.strict import StrictModel


class SearchSettings(StrictModel):
    """Limits of the deployment search (`costmodel search`, `compare --search K`)."""

    models: list[str] | None = Field(
        default=None, min_length=1,
        description="catalog model ids to search over; default: every catalog model (except tiny-test)",
    )
    hardware: list[str] | None = Field(
        default=None, min_length=1,
        description="catalog accelerator ids to search over; default: every accelerator with a GPU price offering",
    )
    engines: list[str] | None = Field(
        default=None, min_length=1,
        description="engine profile ids (catalog/engines) to search over; default: every bundled profile",
    )
    ops_usd_per_month: float = Field(default=0.0, ge=0, le=MAX_USD_PER_MONTH,
                                     description="operations cost added to every searched configuration, USD/month")
    warmup_minutes: float = Field(
        default=60.0, ge=0, le=60,
        description="warm-up per started replica of an autoscaled searched configuration, minutes (default 60, the "
        "largest allowed: warm-up is billed in whole hours, so any warm-up in (0, 60] costs the same)")
