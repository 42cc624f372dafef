"""Published acceptance rates of speculative decoding / multi-token prediction, per model family.

`catalog/speculative.yaml` holds one row per (model family, method, draft tokens), each with its source and
the date it was read. `acceptance_rates[i]` is the chance draft token i + 1 is accepted given the ones before
it were (conditional). A row that quotes a mean acceptance length instead carries it in
`acceptance_length`, and its rates must reproduce it (1 + a1 + a1 a2 + ... within 0.01), so the file
cannot drift from its source.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Literal

from pydantic import Field, model_validator

from costmodel.catalog.loader import CATALOG_DIR, _read_yaml, _validate
from costmodel.errors import CostmodelError
from costmodel.strict import StrictModel

SPECULATIVE_FILE = CATALOG_DIR / "speculative.yaml"
SpeculationMethod = Literal["mtp", "eagle", "draft-model"]
MAX_DRAFT_TOKENS = 16


def expected_tokens_per_step(acceptance_rates: tuple[float, ...] | list[float]) -> float:
    """Tokens one verify step emits on average: 1 (the target's own token) + sum over draft positions i of
    the chance the first i drafts are all accepted, prod_{j <= i} a_j (Leviathan et al. 2023, "Fast Inference
    from Transformers via Speculative Decoding", eq. 1, with a rate per position instead of one alpha)."""
    expected, alive = 1.0, 1.0
    for rate in acceptance_rates:
        alive *= rate
        expected += alive
    return expected


class SpeculationRow(StrictModel):
    """One published acceptance profile."""

    id: str = Field(min_length=1)
    models: tuple[str, ...] = Field(min_length=1, description="catalog model ids the row applies to")
    method: SpeculationMethod
    acceptance_rates: tuple[float, ...] = Field(min_length=1, max_length=MAX_DRAFT_TOKENS,
                                                description="conditional acceptance per draft position, 0-1")
    acceptance_length: float | None = Field(default=None, description="the source's mean tokens per verify step")
    draft_model: str | None = Field(default=None, description="catalog id of the draft model (draft-model only)")
    source: str = Field(min_length=20)
    checked: dt.date

    @model_validator(mode="after")
    def _consistent(self) -> SpeculationRow:
        if any(not 0.0 <= a <= 1.0 for a in self.acceptance_rates):
            raise ValueError("acceptance_rates must each be in [0, 1]")
        if self.acceptance_length is not None:
            implied = expected_tokens_per_step(self.acceptance_rates)
            if abs(implied - self.acceptance_length) > 0.01:
                raise ValueError(f"acceptance_rates give {implied:.3f} tokens per step, not the source's "
                                 f"acceptance_length {self.acceptance_length}; re-solve the rates")
        if (self.method == "draft-model") != (self.draft_model is not None):
            raise ValueError("a draft-model row names its draft_model; other methods name none")
        return self


class _SpeculationFile(StrictModel):
    rows: tuple[SpeculationRow, ...]


@cache
def speculation_rows() -> tuple[SpeculationRow, ...]:
    """Every bundled row, validated."""
    data = _validate(_SpeculationFile, _read_yaml(SPECULATIVE_FILE), where=str(SPECULATIVE_FILE))
    return data.rows


def published_speculation(*, model_id: str, method: SpeculationMethod, draft_tokens: int) -> SpeculationRow:
    """The bundled row for this model, method and number of draft tokens; a miss names what exists."""
    rows = [r for r in speculation_rows() if model_id in r.models and r.method == method]
    for row in rows:
        if len(row.acceptance_rates) == draft_tokens:
            return row
    have = ", ".join(f"{r.method} with {len(r.acceptance_rates)} draft tokens" for r in speculation_rows()
                     if model_id in r.models) or "none"
    raise CostmodelError(
        f"--spec-draft-tokens: no published acceptance rates for {model_id} with {method} and {draft_tokens} draft "
        f"tokens (bundled for this model: {have}); pass your own with --spec-acceptance A1,A2,..."
    )
