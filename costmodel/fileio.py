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


CREATED_FILE_MODE = 0o644  # a new file is readable by all, as editors and `cp` leave one (issue 10)


def atomic_create_bytes(path: str | Path, data: bytes) -> None:
    """Create `path` holding `data`; FileExistsError if it exists, even when another process creates it
    at the same moment (no check-then-write race). Readers see no file or the whole file.

    The data goes to a temp file beside the target, which is then hard-linked to the target name: link(2)
    fails with EEXIST if the name exists, atomically. Where the filesystem has no hard links, an exclusive
    open (O_CREAT | O_EXCL) is used instead: still exclusive, but a reader may see a partial file meanwhile.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, CREATED_FILE_MODE)  # mkstemp makes 0600
        try:
            os.link(tmp_name, target)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (EPERM, ENOTSUP on FAT, some network filesystems)
            with open(target, "xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def atomic_create_text(path: str | Path, text: str) -> None:
    """Text version of `atomic_create_bytes` (UTF-8)."""
    atomic_create_bytes(path, text.encode("utf-8"))


def write_problem(path: str | Path) -> str | None:
    """Why an atomic write to `path` would fail now (None if it would not), found by creating and removing
    a temp file beside it, so a long run can be refused before it starts rather than lost at the end.
    Missing parent folders are created, as the atomic write would create them."""
    target = Path(path)
    if target.is_dir():
        return "it is a directory"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    Path(tmp_name).unlink(missing_ok=True)
    return None


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
