"""Atomic file writes: write a temp file beside the target, fsync, then rename over it."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from costmodel.errors import CostmodelError

_M = TypeVar("_M", bound=BaseModel)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never half of one.

    File mode: a file that exists keeps its permission bits; a new file gets 0o666 less the process
    umask, as `open()` would create it (0o644 under the usual umask 022). `tempfile.mkstemp` would
    leave 0o600 on every file written this way."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    existing_mode = _existing_mode(target)
    fd, tmp_path = _create_temp_beside(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            if existing_mode is not None:
                os.fchmod(handle.fileno(), existing_mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _existing_mode(target: Path) -> int | None:
    """Permission bits of `target` (symlinks followed), or None when it does not exist."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return None


def _create_temp_beside(target: Path) -> tuple[int, Path]:
    """An exclusively created, empty temp file in target's folder, mode 0o666 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):  # tempfile's retry count for name collisions
        tmp_path = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp_path, flags, 0o666), tmp_path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


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
