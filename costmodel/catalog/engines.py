"""Engine profiles: what a serving engine (vLLM, SGLang, TensorRT-LLM, ...) adds to the roofline.

One YAML file per engine in `catalog/engines/<id>.yaml`, validated by `EngineProfile`. A profile holds the
scheduler defaults (sequence cap, token budget, chunked prefill), the CPU costs the GPU roofline does not
see (per request and per step), the share of tensor-parallel all-reduce time the engine hides behind
compute, the largest batch it runs under CUDA graphs, how many tokens it streams per chunk (ITL) and the
rule it sizes its KV cache by (a share of all HBM, or of what the weights leave).

Every value field has an entry in `sources` saying where the number comes from: the engine's own code at
a named commit, its docs, a public measurement, the definition of the profile (`naive`), or - where no
public source exists - the `generic` default, said so. The `generic` profile reproduces the simulator's
behaviour before profiles existed: zero per-request overhead, no overlap, vLLM-style scheduling with
`serving.replica.MAX_NUM_SEQS` sequences and `memory.MAX_BATCHED_TOKENS` tokens per step.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from costmodel.catalog.loader import CATALOG_DIR, _read_yaml, _validate
from costmodel.errors import CostmodelError, unknown_id_error

ENGINES_DIR = CATALOG_DIR / "engines"

# engine-code: the engine's source at `version` (a commit); engine-docs: its documentation; measurement:
# a published measurement; definition: the value defines the profile (naive: no continuous batching);
# generic-default: no public source found, so the generic profile's value is kept (the note says so);
# fitted-public: no public source found, so the value is fitted on the tuning half of public reference rows
# by a script under scripts/ that the note names, with the rows (docs/validation.md's fitting policy).
SourceBasis = Literal["engine-code", "engine-docs", "measurement", "definition", "generic-default", "fitted-public"]
_NEEDS_URL: frozenset[str] = frozenset({"engine-code", "engine-docs", "measurement"})


class ValueSource(BaseModel):
    """Where one profile value comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    basis: SourceBasis
    url: str | None = Field(default=None, description="file or page the value is read from")
    version: str | None = Field(default=None, description="commit (40 hex) or release the value was read at")
    checked: dt.date = Field(description="date someone read the source")
    note: str = Field(min_length=1, description="what the source says, and how the value follows from it")

    @model_validator(mode="after")
    def _url_when_cited(self) -> ValueSource:
        if self.basis in _NEEDS_URL and not (self.url or "").startswith("https://"):
            raise ValueError(f"a '{self.basis}' source needs an https:// url")
        if self.basis == "engine-code" and not self.version:
            raise ValueError("an 'engine-code' source needs the commit it was read at in 'version'")
        if self.basis == "fitted-public" and "scripts/" not in self.note:
            raise ValueError("a 'fitted-public' source's note must name the fitting script (scripts/...) and its rows")
        return self


class EngineProfile(BaseModel):
    """One serving engine's defaults and overheads (SI units), each value with its source."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="lower-case id, e.g. vllm")
    name: str = Field(min_length=1)
    description: str = Field(min_length=1, description="what the profile stands for (engine, version, mode)")

    # Scheduler.
    continuous_batching: bool = Field(description="requests join and leave the running batch at every step")
    paged_kv: bool = Field(description="KV in fixed-size blocks allocated as sequences grow (PagedAttention)")
    chunked_prefill: bool = Field(description="long prompts are split across steps to fit the token budget")
    mixed_prefill_decode: bool = Field(
        description="prefill work (whole prompts or chunks) and decode tokens share one step"
    )
    kv_policy: Literal["preempt", "reserve"] = Field(
        description="preempt: admit on the prompt's KV, evict when full; reserve: admit on prompt + output"
    )
    max_num_seqs: int | None = Field(gt=0, description="running sequences at most; None = only KV memory limits it")
    max_num_batched_tokens: int | None = Field(
        gt=0, description="token budget per step (prefill + decode tokens); None = no budget (whole prompt per pass)"
    )

    # CPU costs the GPU roofline does not see.
    request_overhead_seconds: float = Field(
        ge=0, le=10, description="per request, added to TTFT: tokenization, HTTP/SSE, scheduling, s"
    )
    step_overhead_seconds: float | None = Field(
        ge=0, le=1, description="fixed CPU cost per engine step, s; None = the accelerator's overhead_seconds_per_step"
    )
    step_overhead_seconds_per_sequence: float = Field(
        ge=0, le=1e-2, description="extra CPU cost per running sequence per step (sampling, detokenize), s"
    )

    # Communication, CUDA graphs, streaming.
    tp_comm_overlap_fraction: float = Field(
        ge=0, le=1, description="share of tensor-parallel all-reduce time hidden behind compute or fused away"
    )
    cuda_graph_max_batch: int | None = Field(
        gt=0, description="largest decode batch captured in a CUDA graph; None = graphs not used or not modelled"
    )
    streaming_tokens_per_chunk: int = Field(
        ge=1, le=1024, description="tokens per streamed chunk after the first token (the ITL gap spans them)"
    )

    # Memory: how the engine sizes its KV cache (memory.kv_budget_bytes_per_gpu).
    kv_memory_rule: Literal["total_fraction", "free_fraction"] = Field(
        description="total_fraction: weights + activations + KV within kv_memory_fraction of HBM (vLLM "
        "gpu_memory_utilization); free_fraction: KV gets kv_memory_fraction of what weights and activations "
        "leave (TensorRT-LLM free_gpu_memory_fraction)"
    )
    kv_memory_fraction: float = Field(gt=0, le=1, description="the fraction kv_memory_rule applies")

    sources: dict[str, ValueSource] = Field(description="one entry per value field above")

    @model_validator(mode="after")
    def _check(self) -> EngineProfile:
        missing = sorted(set(VALUE_FIELDS) - set(self.sources))
        if missing:
            raise ValueError(f"sources has no entry for {missing}; cite where each value comes from")
        extra = sorted(set(self.sources) - set(VALUE_FIELDS))
        if extra:
            raise ValueError(f"sources names unknown field(s) {extra}; use one of {list(VALUE_FIELDS)}")
        if not self.continuous_batching and (self.chunked_prefill or self.mixed_prefill_decode):
            raise ValueError("without continuous_batching there are no chunked or mixed steps; set both to false")
        if self.chunked_prefill and self.max_num_batched_tokens is None:
            raise ValueError("chunked_prefill needs a max_num_batched_tokens budget to chunk prompts into")
        budget = self.max_num_batched_tokens
        if self.max_num_seqs is not None and budget is not None and self.max_num_seqs > budget:
            raise ValueError(
                f"max_num_seqs ({self.max_num_seqs}) exceeds max_num_batched_tokens ({budget}): "
                "every running sequence needs one token of the step budget"
            )
        return self

    @property
    def is_generic(self) -> bool:
        """True for the profile that keeps the simulator's pre-profile behaviour."""
        return self.id == GENERIC_ENGINE_ID

    def step_overhead_for(self, *, accelerator_overhead_seconds: float, running_sequences: int) -> float:
        """CPU seconds one engine step costs with `running_sequences` in the batch."""
        fixed = accelerator_overhead_seconds if self.step_overhead_seconds is None else self.step_overhead_seconds
        return fixed + self.step_overhead_seconds_per_sequence * running_sequences

    def visible_comm_seconds(self, *, allreduce_seconds: float) -> float:
        """Tensor-parallel all-reduce seconds left on the step after the engine's overlap."""
        return allreduce_seconds * (1.0 - self.tp_comm_overlap_fraction)


VALUE_FIELDS: tuple[str, ...] = tuple(
    name for name in EngineProfile.model_fields if name not in {"id", "name", "description", "sources"}
)
GENERIC_ENGINE_ID = "generic"


def parse_engine_file(path: Path) -> EngineProfile:
    """Validate one engine YAML file; its `id` must equal the file name stem."""
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise CostmodelError(f"{path}: expected a mapping of profile fields, got {type(data).__name__}")
    profile = _validate(EngineProfile, data, where=f"{path} (engine '{data.get('id', '?')}')")
    if profile.id != path.stem:
        raise CostmodelError(f"{path}: field 'id' is '{profile.id}' but the file is named '{path.stem}.yaml'")
    return profile


@cache
def engines() -> dict[str, EngineProfile]:
    """All bundled engine profiles by id (cached)."""
    return {engine_id: _engine(engine_id) for engine_id in engine_ids()}


@cache
def engine_ids() -> tuple[str, ...]:
    """Bundled engine ids, sorted (for CLI choices): their file names, since parse_engine_file holds each
    profile's id to its file's (listing them reads no profile)."""
    ids = tuple(sorted(path.stem for path in ENGINES_DIR.glob("*.yaml")))
    if GENERIC_ENGINE_ID not in ids:
        raise CostmodelError(f"{ENGINES_DIR}: the '{GENERIC_ENGINE_ID}' profile is missing; restore generic.yaml")
    return ids


@cache
def _engine(engine_id: str) -> EngineProfile:
    return parse_engine_file(ENGINES_DIR / f"{engine_id}.yaml")


def load_engine(engine_id: str) -> EngineProfile:
    """Exact-id lookup of a bundled engine profile (a miss suggests the closest id); reads that file only."""
    ids = engine_ids()
    if engine_id not in ids:
        raise unknown_id_error("engine", engine_id, ids)
    return _engine(engine_id)
