"""costmodel: API vs self-hosted LLM serving — roofline napkin math, SLO simulation, prices, decision.

Public API (typed results, no dicts):

    from costmodel import load_model, load_accelerator, estimate, evaluate_grid
"""

from costmodel.catalog import (
    AcceleratorSpec,
    ModelSpec,
    accelerators,
    derive_shape,
    load_accelerator,
    load_model,
    models,
)
from costmodel.errors import CostmodelError
from costmodel.estimate import Estimate, estimate
from costmodel.grid import GridResult, evaluate_grid
from costmodel.measurements.calibration import Calibration, load_calibration
from costmodel.memory import MemoryPlan, plan_memory
from costmodel.roofline import Efficiency, StepResult, step

__all__ = [
    "AcceleratorSpec",
    "Calibration",
    "CostmodelError",
    "Efficiency",
    "Estimate",
    "GridResult",
    "MemoryPlan",
    "ModelSpec",
    "StepResult",
    "accelerators",
    "derive_shape",
    "estimate",
    "evaluate_grid",
    "load_accelerator",
    "load_calibration",
    "load_model",
    "models",
    "plan_memory",
    "step",
]
