"""The one base of every validated data model (catalog rows, price rows, scenario parts, measurement files).

Strict on purpose: an unknown field is a typo to report (extra="forbid"), and a loaded row never changes
(frozen=True), so a result computed from it stays true.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """pydantic BaseModel with extra="forbid" and frozen=True."""

    model_config = ConfigDict(extra="forbid", frozen=True)
