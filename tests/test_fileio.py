"""costmodel.fileio atomic writes: all or nothing, and file modes as a plain write would leave them
(issue 10, section 2, item 8: every atomic write used to leave 0600, mkstemp's mode)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from costmodel.fileio import atomic_write_bytes, atomic_write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_new_file_gets_0644_under_umask_022(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "sub" / "new.csv"
    atomic_write_text(target, "a,b\n")
    assert target.read_text() == "a,b\n"
    assert _mode(target) == 0o644  # 0o666 & ~0o022
    assert [p.name for p in target.parent.iterdir()] == ["new.csv"]  # no temp file left


def test_new_file_respects_a_stricter_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        atomic_write_bytes(tmp_path / "private.json", b"{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "private.json") == 0o600  # 0o666 & ~0o077


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o664, 0o600, 0o755])
def test_existing_file_keeps_its_mode(tmp_path: Path, umask_022: None, mode: int) -> None:
    target = tmp_path / "sheet.csv"
    target.write_text("old\n")
    target.chmod(mode)
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert _mode(target) == mode


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sheet.csv"
    target.write_text("old\n")

    def boom(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sheet.csv"]
