"""The CLI's collector policy (costmodel/cli/startup.py): imports with the cyclic GC off and frozen after,
only when the CLI owns the process; `main(argv)` (tests, an app) leaves the caller's collector alone."""

from __future__ import annotations

import gc

import pytest

from costmodel.cli import main, startup


def test_main_with_argv_leaves_the_collector_alone(capsys: pytest.CaptureFixture[str]) -> None:
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    assert main(["models", "list"]) == 0
    assert "llama-3.1-8b" in capsys.readouterr().out
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled() == enabled


def test_owning_the_process_imports_with_the_collector_off_then_freezes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_owns_process", True)
    assert gc.isenabled()
    try:
        with startup.long_lived_imports():
            assert not gc.isenabled()
            made = [[index] for index in range(1000)]  # tracked objects that exist when the block ends
        assert gc.isenabled()  # on again for the command
        assert gc.get_freeze_count() >= len(made)
    finally:
        gc.unfreeze()


def test_the_collector_is_restored_after_a_failing_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_owns_process", True)
    try:
        with pytest.raises(SystemExit), startup.long_lived_imports():
            raise SystemExit(2)  # argparse's exit on a bad flag happens inside the block
        assert gc.isenabled()
    finally:
        gc.unfreeze()
