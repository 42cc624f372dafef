"""costmodel: API vs self-hosted LLM serving — roofline napkin math, SLO simulation, prices, decision.

Public API (typed results, no dicts):

    from costmodel import load_model, load_accelerator, estimate, evaluate_grid

The names are imported on first use (PEP 562 `__getattr__`), so `import costmodel` alone, or the CLI's
start-up, loads none of the modules behind them.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from costmodel.lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ imports each name on first use
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

_HOMES = {
    "costmodel.catalog": ("AcceleratorSpec", "ModelSpec", "accelerators", "derive_shape", "load_accelerator",
                          "load_model", "models"),
    "costmodel.errors": ("CostmodelError",),
    "costmodel.estimate": ("Estimate", "estimate"),
    "costmodel.grid": ("GridResult", "evaluate_grid"),
    "costmodel.measurements.calibration": ("Calibration", "load_calibration"),
    "costmodel.memory": ("MemoryPlan", "plan_memory"),
    "costmodel.roofline": ("Efficiency", "StepResult", "step"),
}
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
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals(), exported=__all__)


class _Package(types.ModuleType):
    """The import system binds each submodule as an attribute of its package once it has run; `estimate`
    is also the name of a function here, and `costmodel.estimate` has always meant the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "estimate" and isinstance(value, types.ModuleType):
            value = value.estimate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
