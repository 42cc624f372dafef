"""Atomic file writes (a temp file beside the target, fsync, then rename over it) and bounded reads of
the files a user hands us (scenarios, configs, calibrations): size-capped, UTF-8-checked, depth-capped."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from costmodel.errors import CostmodelError, UnwrittenOutputError

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


def atomic_create_bytes(path: str | Path, data: bytes) -> None:
    """Create `path` holding `data`; FileExistsError if it exists, even when another process creates it
    at the same moment (no check-then-write race). Readers see no file or the whole file.

    The data goes to a temp file beside the target, which is then hard-linked to the target name: link(2)
    fails with EEXIST if the name exists, atomically. Where the filesystem has no hard links, an exclusive
    open (O_CREAT | O_EXCL) is used instead: still exclusive, but a reader may see a partial file meanwhile.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_path = _create_temp_beside(target)  # mode 0o666 less the umask, as atomic_write_bytes
    tmp_name = str(tmp_path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
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
        fd, tmp_path = _create_temp_beside(target)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    tmp_path.unlink(missing_ok=True)
    return None


def check_output_path(path: str | Path, *, flag: str = "--out", example: str) -> None:
    """CostmodelError naming `flag` and the path when a write there would fail now (a directory, a missing or
    read-only folder, /proc): called before long work, so the work is not lost to a bad path."""
    problem = write_problem(path)
    if problem is not None:
        raise CostmodelError(f"{flag} {path}: cannot write there ({problem}); give a writable file path "
                             f"such as {example}")


def write_text_or_keep(path: str | Path, text: str, *, flag: str = "--out", what: str) -> None:
    """Write `text` atomically; on OSError (disk full, folder gone read-only) raise UnwrittenOutputError
    holding the text, so the caller can print it instead of losing it. The old file is never damaged."""
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise UnwrittenOutputError(
            f"{flag} {path}: could not write the {what} ({exc.strerror or exc}); it is printed on stdout instead",
            path=str(path), content=text) from None


def write_bytes_or_save_elsewhere(path: str | Path, data: bytes, *, flag: str = "--out", what: str) -> None:
    """Write `data` atomically; on OSError save it under the temp folder (else the home folder) and raise
    CostmodelError naming both paths (binary output, e.g. a PDF, is not printed)."""
    try:
        atomic_write_bytes(path, data)
        return
    except OSError as exc:
        problem = exc.strerror or str(exc)
    saved = save_elsewhere(data, name=Path(path).name)
    kept = f"saved it to {saved} instead" if saved else "could not save it anywhere else either; free some space"
    raise CostmodelError(f"{flag} {path}: could not write the {what} ({problem}); {kept}")


def save_elsewhere(data: bytes, *, name: str) -> Path | None:
    """Create a new file holding `data` in the temp folder, else the home folder; None when neither works."""
    import tempfile

    for folder in (Path(tempfile.gettempdir()), Path.home()):
        candidate = folder / f"costmodel-{secrets.token_hex(4)}-{name}"
        try:
            atomic_create_bytes(candidate, data)
        except OSError:
            continue
        return candidate
    return None


def load_json_model(path: str | Path, model: type[_M], *, what: str) -> _M:
    """Read a JSON file and validate it as `model`; errors name the file, the field and the problem."""
    from costmodel.catalog.loader import describe_validation_error  # the catalog imports this module

    file = Path(path)
    text = read_user_text(file, what=what)
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise CostmodelError(describe_validation_error(exc, where=f"{what} {file}")) from exc


# A scenario, HF config or calibration is a few kB; 8 MiB is far above any real one and stops
# `compare /dev/zero` (or a mistyped path to a model checkpoint) from reading forever.
MAX_USER_FILE_BYTES = 8 * 1024 * 1024


def read_user_text(path: str | Path, *, what: str, max_bytes: int = MAX_USER_FILE_BYTES) -> str:
    """The UTF-8 text of a file a user (or a file of theirs) named, or CostmodelError naming the file and
    the fix: missing, unreadable, not a regular file (a folder, a FIFO, a device such as /dev/zero, also
    behind a symlink), larger than `max_bytes`, not UTF-8. Every such path goes through here.

    The file is opened non-blocking and checked with fstat on the open descriptor, so a FIFO cannot block
    the open (no writer) and the file checked is the file read (no stat-then-open race)."""
    file = Path(path)
    data = read_user_bytes(file, what=what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CostmodelError(f"{what} {file} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def read_user_bytes(path: str | Path, *, what: str, max_bytes: int = MAX_USER_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, else CostmodelError (see `read_user_text`)."""
    file = Path(path)
    data = _read_regular_file(file, what=what, max_bytes=max_bytes)
    if len(data) > max_bytes:
        raise CostmodelError(f"{what} {file} is larger than {_mib(max_bytes)}; is it the right file?")
    return data


def _mib(size_bytes: int) -> str:
    return f"{size_bytes / (1024 * 1024):g} MiB"


def _read_regular_file(file: Path, *, what: str, max_bytes: int) -> bytes:
    """At most max_bytes + 1 bytes of a regular file (one more than allowed shows it is too large)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(file, flags)
    except FileNotFoundError:
        raise CostmodelError(f"{what} {file} not found (cannot read it); check the path") from None
    except IsADirectoryError:
        raise CostmodelError(f"{what} {file} is a directory; pass a file") from None
    except OSError as exc:
        raise CostmodelError(f"{what} {file}: cannot read ({exc.strerror or exc})") from None
    try:
        _check_regular(os.fstat(fd), file=file, what=what, max_bytes=max_bytes)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read(max_bytes + 1)  # a file still growing is caught by the caller's length check
        except OSError as exc:
            raise CostmodelError(f"{what} {file}: cannot read ({exc.strerror or exc})") from None


def _check_regular(info: os.stat_result, *, file: Path, what: str, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise CostmodelError(f"{what} {file} is a directory; pass a file")
    if not stat.S_ISREG(info.st_mode):
        raise CostmodelError(f"{what} {file} is not a regular file (it is {_kind(info.st_mode)}); "
                             "pass a file saved on disk")
    if info.st_size > max_bytes:
        raise CostmodelError(f"{what} {file} is {info.st_size:,} bytes, larger than {_mib(max_bytes)}; "
                             "is it the right file?")


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for check, name in kinds if check(mode)), "not a plain file")


def parse_json_or_yaml(text: str, *, what: str, as_json: bool) -> Any:
    """Parse JSON or YAML (libyaml's safe loader, which caps nesting depth); deep or broken input is a
    CostmodelError naming `what`, never a RecursionError."""
    import json

    import yaml

    try:
        if as_json:
            return json.loads(text)
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(text, Loader=loader)
    except RecursionError:
        raise CostmodelError(f"{what}: nested too deeply to be a real file; fix the structure") from None
    except json.JSONDecodeError as exc:
        raise CostmodelError(f"{what}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except yaml.YAMLError as exc:
        raise CostmodelError(f"{what}: not valid YAML ({exc})") from None
