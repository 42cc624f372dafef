"""The one base of every validated data model (catalog rows, price rows, scenario parts, measurement files).

Strict on purpose: an unknown field is a typo to report (extra="forbid"), a loaded row never changes
(frozen=True), so a result computed from it stays true, and no float field accepts NaN or +-inf
(allow_inf_nan=False): a non-finite price, rate or limit must never become an answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """pydantic BaseModel with extra="forbid", frozen=True and finite floats only."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)
