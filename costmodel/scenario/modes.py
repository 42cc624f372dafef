"""Serving modes a self-host option can name: speculative decoding / MTP and disaggregated prefill/decode.

`speculation:` turns on speculative decoding (`serving/speculative.py`): the method, the draft tokens per step
and, optionally, your own acceptance per draft position (else the bundled published row for the model,
catalog/speculative.yaml). `disaggregated:` splits the option's GPUs into x prefill and y decode instances
(`serving/disaggregated.py`); a replica of the option is then one whole xPyD deployment, so
`gpus_per_replica` must equal x * prefill_gpus + y * decode_gpus.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from costmodel.catalog.speculative import MAX_DRAFT_TOKENS
from costmodel.strict import StrictModel


class SpeculationSpec(StrictModel):
    """Speculative decoding on a self-host option."""

    method: Literal["mtp", "eagle", "draft-model"] = Field(description="MTP heads, an EAGLE head or a draft model")
    draft_tokens: int | None = Field(default=None, ge=1, le=MAX_DRAFT_TOKENS,
                                     description="draft tokens per step (default: as many as acceptance_rates, else 1)")
    acceptance_rates: tuple[float, ...] | None = Field(
        default=None, min_length=1, max_length=MAX_DRAFT_TOKENS,
        description="your conditional acceptance per draft position, each 0-1 (default: the bundled published row)")
    draft_model: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                    description="catalog id of the draft model (method draft-model only)")

    @model_validator(mode="after")
    def _consistent(self) -> SpeculationSpec:
        if self.acceptance_rates is not None:
            if any(not 0.0 <= a <= 1.0 for a in self.acceptance_rates):
                raise ValueError("speculation.acceptance_rates: each rate must be in [0, 1]")
            if self.draft_tokens is not None and self.draft_tokens != len(self.acceptance_rates):
                raise ValueError("speculation.draft_tokens must equal the number of acceptance_rates")
        if (self.method == "draft-model") != (self.draft_model is not None):
            raise ValueError("speculation.draft_model: name one with method draft-model, and only then")
        return self


class DisaggregationSpec(StrictModel):
    """Disaggregated prefill/decode pools on a self-host option (xPyD)."""

    prefill_gpus: int = Field(ge=1, le=64, description="GPUs per prefill instance (tensor parallel)")
    decode_gpus: int = Field(ge=1, le=64, description="GPUs per decode instance (tensor parallel)")
    prefill_instances: int = Field(default=1, ge=1, le=64, description="prefill instances (x of xPyD)")
    decode_instances: int = Field(default=1, ge=1, le=64, description="decode instances (y of xPyD)")
    kv_link: Literal["auto", "intra-node", "inter-node"] = Field(
        default="auto", description="the link the KV cache crosses (auto: in one node when one of each fits)")

    @property
    def gpus(self) -> int:
        """GPUs of one deployment."""
        return self.prefill_instances * self.prefill_gpus + self.decode_instances * self.decode_gpus
