"""Load and validate the bundled catalogs; exact-id lookups with a did-you-mean on a miss.

Model rows live one per file in `catalog/models/<id>.yaml`; accelerators in `catalog/accelerators.yaml`
under the key `accelerators`. A bad file raises CostmodelError naming the file, the row and the field.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.errors import CostmodelError, unknown_id_error

CATALOG_DIR = Path(__file__).resolve().parent
MODELS_DIR = CATALOG_DIR / "models"
ACCELERATORS_FILE = CATALOG_DIR / "accelerators.yaml"
_T = TypeVar("_T", bound=BaseModel)


def describe_validation_error(err: ValidationError, *, where: str) -> str:
    """One line per problem: '<where>: field <a.b>: <message>'."""
    lines = []
    for item in err.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(row)"
        lines.append(f"{where}: field '{field}': {item['msg']}")
    return "\n".join(lines)


def _read_yaml(path: Path) -> Any:
    try:
        # libyaml's C loader when present: the catalog loads on every CLI call.
        loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(path.read_text(encoding="utf-8"), Loader=loader_cls)
    except yaml.YAMLError as exc:
        raise CostmodelError(f"{path}: not valid YAML ({exc}); fix the syntax") from exc
    except OSError as exc:
        raise CostmodelError(f"{path}: cannot read ({exc.strerror})") from exc


def parse_model_file(path: Path) -> ModelSpec:
    """Validate one model YAML file; its `id` must equal the file name stem."""
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise CostmodelError(f"{path}: expected a mapping of config fields, got {type(data).__name__}")
    spec = _validate(ModelSpec, data, where=f"{path} (model '{data.get('id', '?')}')")
    if spec.id != path.stem:
        raise CostmodelError(f"{path}: field 'id' is '{spec.id}' but the file is named '{path.stem}.yaml'")
    return spec


def parse_accelerator_file(path: Path) -> dict[str, AcceleratorSpec]:
    """Validate the accelerator list; ids must be unique."""
    data = _read_yaml(path)
    rows = data.get("accelerators") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CostmodelError(f"{path}: expected a top-level key 'accelerators' holding a list of rows")
    result: dict[str, AcceleratorSpec] = {}
    for index, row in enumerate(rows):
        label = row.get("id", "?") if isinstance(row, dict) else "?"
        spec = _validate(AcceleratorSpec, row, where=f"{path} row {index + 1} ('{label}')")
        if spec.id in result:
            raise CostmodelError(f"{path} row {index + 1}: duplicate id '{spec.id}'")
        result[spec.id] = spec
    return result


def _validate(cls: type[_T], data: Any, *, where: str) -> _T:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise CostmodelError(describe_validation_error(exc, where=where)) from exc


def user_models_dir() -> Path:
    """Where `costmodel models import` saves models: $COSTMODEL_HOME/models (default ~/.costmodel)."""
    home = os.environ.get("COSTMODEL_HOME") or str(Path.home() / ".costmodel")
    return Path(home) / "models"


def bundled_models() -> dict[str, ModelSpec]:
    """Models shipped with the package, by id."""
    return _read_model_dir(MODELS_DIR)


@cache
def _read_model_dir(directory: Path) -> dict[str, ModelSpec]:
    specs = [parse_model_file(path) for path in sorted(directory.glob("*.yaml"))]
    return {spec.id: spec for spec in specs}


def models() -> dict[str, ModelSpec]:
    """Bundled models plus the user's imported ones (an import may not reuse a bundled id)."""
    table = dict(bundled_models())
    user_dir = user_models_dir()
    if user_dir.is_dir():
        for model_id, spec in _read_model_dir(user_dir).items():
            if model_id in table:
                raise CostmodelError(f"{user_dir / (model_id + '.yaml')}: id '{model_id}' shadows a bundled model; rename it")
            table[model_id] = spec
    return table


@cache
def accelerators() -> dict[str, AcceleratorSpec]:
    """All bundled accelerators by id (cached)."""
    return parse_accelerator_file(ACCELERATORS_FILE)


def load_model(model_id: str) -> ModelSpec:
    """Exact-id lookup of a bundled model."""
    table = models()
    if model_id not in table:
        raise unknown_id_error("model", model_id, table)
    return table[model_id]


def load_accelerator(hardware_id: str) -> AcceleratorSpec:
    """Exact-id lookup of a bundled accelerator."""
    table = accelerators()
    if hardware_id not in table:
        raise unknown_id_error("hardware", hardware_id, table)
    return table[hardware_id]
