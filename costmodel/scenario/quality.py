"""The scenario's quality floor: which options count as substitutes for one another.

A floor is either `{at_least_as_good_as: <model id or API price id>}` (on `benchmark`, default the
quality sheet's default) or `{min_score: N, benchmark: B}`. `substitutes:` lists groups of option names
that are interchangeable; an option in no group is its own group. The decision (decision/quality.py)
resolves both against the quality sheet; this module only checks their shape.
"""

from __future__ import annotations

import math

from pydantic import Field, model_validator

from costmodel.strict import StrictModel


class QualityFloor(StrictModel):
    """Options scoring below this floor are shown but never recommended or used as a reference."""

    at_least_as_good_as: str | None = Field(
        default=None, min_length=1,
        description="catalog model id or API price id: options must score at least this subject's score")
    min_score: float | None = Field(default=None, description="options must score at least this on `benchmark`")
    benchmark: str | None = Field(
        default=None, min_length=1,
        description="quality benchmark id (costmodel/catalog/quality.csv), e.g. lmarena-text; default lmarena-text")

    @model_validator(mode="after")
    def _one_floor(self) -> QualityFloor:
        if (self.at_least_as_good_as is None) == (self.min_score is None):
            raise ValueError("quality: give exactly one of at_least_as_good_as (a model or API price id) or "
                             "min_score (with benchmark)")
        if self.min_score is not None:
            if not math.isfinite(self.min_score):
                raise ValueError("quality.min_score must be a finite number")
            if self.benchmark is None:
                raise ValueError("quality.min_score needs quality.benchmark (e.g. lmarena-text)")
        return self


def check_substitute_groups(groups: list[list[str]], *, option_names: list[str]) -> None:
    """Raise ValueError when a group names an unknown option or an option appears in two groups."""
    seen: dict[str, int] = {}
    for index, group in enumerate(groups):
        for name in group:
            if name not in option_names:
                raise ValueError(f"substitutes[{index}]: '{name}' is not an option of this scenario "
                                 f"(have: {', '.join(option_names)})")
            if name in seen and seen[name] != index:
                raise ValueError(f"substitutes: '{name}' is in groups {seen[name]} and {index}; contradictory "
                                 "groups: an option belongs to one group")
            seen[name] = index
