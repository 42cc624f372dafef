"""Model and accelerator catalogs (YAML data + pydantic schemas)."""

from costmodel.catalog.engines import EngineProfile, load_engine
from costmodel.catalog.loader import accelerators, load_accelerator, load_model, models
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.schema import AcceleratorSpec, ModelSpec

__all__ = [
    "AcceleratorSpec",
    "EngineProfile",
    "ModelShape",
    "ModelSpec",
    "accelerators",
    "derive_shape",
    "load_accelerator",
    "load_engine",
    "load_model",
    "models",
]
