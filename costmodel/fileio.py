"""Atomic file writes: write a temp file beside the target, fsync, then rename over it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from costmodel.errors import CostmodelError

_M = TypeVar("_M", bound=BaseModel)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never half of one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Text version of `atomic_write_bytes` (UTF-8)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def load_json_model(path: str | Path, model: type[_M], *, what: str) -> _M:
    """Read a JSON file and validate it as `model`; errors name the file, the field and the problem."""
    from costmodel.catalog.loader import describe_validation_error  # the catalog imports this module

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CostmodelError(f"{what} {file}: cannot read ({exc.strerror})") from exc
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise CostmodelError(describe_validation_error(exc, where=f"{what} {file}")) from exc
