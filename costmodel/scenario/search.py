"""The scenario's optional `search:` section: which self-host configurations `costmodel search` may consider."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from costmodel.scenario.limits import MAX_USD_PER_GPU_MONTH, MAX_USD_PER_MONTH
from costmodel.strict import StrictModel

# Configurations `costmodel memo` adds when the scenario has a `search:` section and no --search K is given.
SCENARIO_SEARCH_TOP_K = 3


class SearchSettings(StrictModel):
    """Limits of the deployment search (`costmodel search`, `compare --search K`)."""

    models: list[str] | Literal["all"] | None = Field(
        default=None, min_length=1,
        description="catalog model ids to search over, or 'all' (every catalog model except tiny-test, treated as "
        "substitutes of the scenario's models); default: the scenario's own models (its self-host options' and "
        "the open models its API options sell), or, with a quality floor, every catalog model past the floor",
    )
    hardware: list[str] | None = Field(
        default=None, min_length=1,
        description="catalog accelerator ids to search over; default: every accelerator with a GPU price offering",
    )
    engines: list[str] | None = Field(
        default=None, min_length=1,
        description="engine profile ids (catalog/engines) to search over; default: every bundled profile",
    )
    ops_usd_per_month: float | None = Field(
        default=None, ge=0, le=MAX_USD_PER_MONTH,
        description="fixed operations cost of every searched configuration, USD/month; default: the scenario's "
        "self-host options' ops_usd_per_month (that of an option serving the same model, else the lowest); 0 "
        "leaves ops out")
    ops_usd_per_gpu_month: float | None = Field(
        default=None, ge=0, le=MAX_USD_PER_GPU_MONTH,
        description="operations per GPU-month paid of every searched configuration, USD; default: taken from the "
        "scenario's self-host options like ops_usd_per_month")
    modes: list[Literal["disaggregated", "speculative", "expert-parallel"]] = Field(
        default_factory=list,
        description="serving modes to search beside aggregated tensor-parallel replicas, where they apply: "
        "disaggregated (xPyD prefill/decode pools), speculative (MTP with a published acceptance row), "
        "expert-parallel (DP attention + EP over 1-4 nodes, MoE models); default none (costmodel/search/mode_choice.py)")
    warmup_minutes: float = Field(
        default=60.0, ge=0, le=60,
        description="warm-up per started replica of an autoscaled or mixed searched configuration, minutes (default "
        "60, the largest allowed: warm-up is billed in whole hours, so any warm-up in (0, 60] costs the same)")
