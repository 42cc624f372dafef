"""ReplicaConfig: one replica's model shape, hardware, tensor-parallel GPUs, dtypes, efficiency and engine.

The six values the roofline, memory plan and analytic capacity all take travel as one frozen object
(gpt-fast's single model config, applied to a serving replica) instead of six keyword arguments spelled
out in every signature. Callers check user input first (`costmodel.estimate.check_config` names the CLI
flag or scenario field); `__post_init__` only guards the invariants the formulas rely on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.errors import CostmodelError
from costmodel.ops import uniform_work
from costmodel.roofline import Efficiency, StepResult, step, step_arrays_on, step_seconds

# costmodel/catalog/engines: the engine-agnostic profile, today's behaviour before profiles existed (issue 17:
# "A generic profile keeps today's behaviour"). It has no per-request cost and the accelerator's 0.4 ms per
# step, so at moderate load it predicts lower TTFT/TPOT than the named engines, whose served CPU costs are
# fitted on public measurements (docs/validation.md); pick `engine:` per option for a served estimate.
DEFAULT_ENGINE = "generic"


@dataclass(frozen=True, kw_only=True)
class ReplicaConfig:
    """One replica: `gpus` x `hardware` serving `shape` at the given weight and KV dtypes."""

    shape: ModelShape
    hardware: AcceleratorSpec
    gpus: int
    weight_dtype: str
    kv_dtype: str
    efficiency: Efficiency
    engine: str = DEFAULT_ENGINE

    def __post_init__(self) -> None:
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise CostmodelError(f"gpus must be an integer >= 1 (got {self.gpus!r})")
        for field, dtype in (("weight_dtype", self.weight_dtype), ("kv_dtype", self.kv_dtype)):
            if dtype not in BYTES_PER_ELEMENT:
                raise CostmodelError(f"{field} '{dtype}' is not one of {', '.join(BYTES_PER_ELEMENT)}")
        eff = self.efficiency
        if not all(math.isfinite(v) for v in (eff.eff_compute, eff.eff_memory, eff.overhead_seconds_per_step)):
            raise CostmodelError(f"efficiency must be finite (got {eff}); check the calibration or the datasheet row")
        if not self.engine:
            raise CostmodelError("engine must name an engine profile (e.g. 'generic')")

    def step(self, *, batch: int, new_tokens: int, context_tokens: int) -> StepResult:
        """One engine step of this replica (`costmodel.roofline.step`): decode is new_tokens = 1."""
        return step(
            self.shape, self.hardware, batch=batch, new_tokens=new_tokens, context_tokens=context_tokens,
            weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype, gpus=self.gpus, efficiency=self.efficiency,
        )

    def step_seconds(self, *, batch: int, new_tokens: int, context_tokens: int) -> float:
        """`step(...).step_seconds` without the per-op breakdown (`costmodel.roofline.step_seconds`)."""
        return step_seconds(
            self.shape, self.hardware, batch=batch, new_tokens=new_tokens, context_tokens=context_tokens,
            weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype, gpus=self.gpus, efficiency=self.efficiency,
        )

    def decode_step_seconds(self, *, batches: np.ndarray, context_tokens: int) -> np.ndarray:
        """Decode step time (s) at each batch size of `batches` (shape (n,)), every sequence at the same context:
        `step_seconds(batch=b, new_tokens=1, ...)` for each b in one vectorized roofline pass."""
        work = uniform_work(self.shape, batch=np.asarray(batches, dtype=float), new_tokens=1.0,
                            context_tokens=float(context_tokens))
        raw = step_arrays_on(self.shape, self.hardware, work, weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype,
                             gpus=self.gpus, eff=self.efficiency)
        return np.broadcast_to(np.asarray(raw.step_seconds, dtype=float), np.shape(batches))
