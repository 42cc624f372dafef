"""Load and validate the bundled catalogs; exact-id lookups with a did-you-mean on a miss.

Model rows live one per file in `catalog/models/<id>.yaml`; accelerators in `catalog/accelerators.yaml`
under the key `accelerators`. A bad file raises CostmodelError naming the file, the row and the field,
except in the user's models folder: there a bad file is skipped with a CatalogWarning (one bad import must
not break every command) and its error is raised only when that model is asked for.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.fileio import read_user_bytes

CATALOG_DIR = Path(__file__).resolve().parent
MODELS_DIR = CATALOG_DIR / "models"
ACCELERATORS_FILE = CATALOG_DIR / "accelerators.yaml"
_T = TypeVar("_T", bound=BaseModel)


class CatalogWarning(UserWarning):
    """A file in the user's models folder was skipped; the message names the file and the problem."""


@dataclass(frozen=True)
class _ModelDir:
    specs: dict[str, ModelSpec]
    broken: dict[str, str]  # file stem -> why the file was skipped (names the file)


def describe_validation_error(err: ValidationError, *, where: str) -> str:
    """One line per problem: '<where>: field <a.b>: <message>'."""
    lines = []
    for item in err.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(row)"
        lines.append(f"{where}: field '{field}': {item['msg']}")
    return "\n".join(lines)


def _read_yaml(path: Path) -> Any:
    # The bounded reader: a FIFO, a /dev/zero symlink or a folder named *.yaml in the user's models folder is
    # refused by name instead of hanging the command or reading without end.
    data = read_user_bytes(path, what="catalog file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CostmodelError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    try:
        # libyaml's C loader when present: the catalog loads on every CLI call.
        loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader_cls)
    except yaml.YAMLError as exc:
        raise CostmodelError(f"{path}: not valid YAML ({exc}); fix the syntax") from exc
    except RecursionError as exc:
        raise CostmodelError(f"{path}: nested too deeply to read; a catalog row is a flat mapping") from exc


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
    """Models shipped with the package, by id (a bad bundled file is a bug: it raises)."""
    return {model_id: _bundled_model(model_id) for model_id in bundled_model_ids()}


@cache
def bundled_model_ids() -> tuple[str, ...]:
    """Ids of the bundled models, sorted: their file names (parse_model_file holds each id to its file's)."""
    return tuple(sorted(path.stem for path in MODELS_DIR.glob("*.yaml")))


@cache
def _bundled_model(model_id: str) -> ModelSpec:
    # One file per lookup: `estimate` reads the model it names, not the 25 others.
    return parse_model_file(MODELS_DIR / f"{model_id}.yaml")


@lru_cache(maxsize=8)  # one entry per (folder, contents) seen; old contents fall out
def _read_model_dir(directory: Path, stamp: tuple[tuple[str, int, int], ...]) -> _ModelDir:
    """The user's model files; each bad one is set aside with its error instead of failing the rest.

    Cached by `stamp` (name, mtime, size of each file), so an import or an edit is seen at the next call.
    """
    bundled = bundled_model_ids()
    specs: dict[str, ModelSpec] = {}
    broken: dict[str, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            spec = parse_model_file(path)
        except CostmodelError as exc:
            broken[path.stem] = str(exc)
            continue
        if spec.id in bundled:
            broken[path.stem] = f"{path}: id '{spec.id}' shadows a bundled model; rename the file and its id"
            continue
        specs[spec.id] = spec
    return _ModelDir(specs=specs, broken=broken)


def _user_models() -> _ModelDir:
    user_dir = user_models_dir()
    if not user_dir.is_dir():
        return _ModelDir(specs={}, broken={})
    stamp = []
    for path in sorted(user_dir.glob("*.yaml")):
        try:
            info = path.stat()
        except OSError:  # removed meanwhile, or a dangling link: parse_model_file reports it
            stamp.append((path.name, -1, -1))
            continue
        stamp.append((path.name, info.st_mtime_ns, info.st_size))
    return _read_model_dir(user_dir, tuple(stamp))


def skipped_model_files() -> dict[str, str]:
    """Files in the user's models folder that were skipped: file stem -> the problem (names the file)."""
    return dict(_user_models().broken)


def models() -> dict[str, ModelSpec]:
    """Bundled models plus the user's imported ones (an import may not reuse a bundled id).

    A user file that does not load is left out with a CatalogWarning naming it (the library never prints).
    """
    user = _user_models()
    _warn_skipped(user)
    return {**bundled_models(), **user.specs}


def model_ids() -> tuple[str, ...]:
    """The ids of `models()`, in its order, without parsing the bundled files (warns as `models` does): what
    checking a scenario's model names needs, where parsing all 25 bundled files cost ~10 ms per `compare`."""
    user = _user_models()
    _warn_skipped(user)
    return (*bundled_model_ids(), *user.specs)


def _warn_skipped(user: _ModelDir) -> None:
    for problem in user.broken.values():
        # One fixed location, so the default filter shows each message once per command.
        warnings.warn(f"skipped a model file: {problem}", CatalogWarning, stacklevel=1)


@cache
def accelerators() -> dict[str, AcceleratorSpec]:
    """All bundled accelerators by id (cached)."""
    return parse_accelerator_file(ACCELERATORS_FILE)


def load_model(model_id: str) -> ModelSpec:
    """Exact-id lookup of a bundled or imported model; asking for a skipped user file raises its error."""
    user = _user_models()
    if model_id in bundled_model_ids():  # a user file may not shadow a bundled id
        _warn_skipped(user)
        return _bundled_model(model_id)
    table = {**bundled_models(), **user.specs}
    if model_id not in table and model_id in user.broken:  # asked for: an error, not a warning
        raise CostmodelError(f"model '{model_id}' cannot be loaded: {user.broken[model_id]}")
    _warn_skipped(user)
    if model_id not in table:
        raise unknown_id_error("model", model_id, table)
    return table[model_id]


def load_accelerator(hardware_id: str) -> AcceleratorSpec:
    """Exact-id lookup of a bundled accelerator."""
    table = accelerators()
    if hardware_id not in table:
        raise unknown_id_error("hardware", hardware_id, table)
    return table[hardware_id]
