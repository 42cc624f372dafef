"""The CLI's start-up freezes its imports once per process and leaves the collector as it found it."""

from __future__ import annotations

import gc

from costmodel import cli


def test_imports_are_frozen_once_and_the_collector_restored() -> None:
    cli._imported_parser(None)  # the first call in this process freezes (or an earlier test's did)
    assert cli._FROZEN == [True] and gc.isenabled()
    frozen = gc.get_freeze_count()
    later = [[object()] for _ in range(1000)]  # objects made after the freeze
    parser = cli._imported_parser("compare")
    assert gc.get_freeze_count() <= frozen  # a second call freezes nothing more (frozen objects may be freed)
    assert gc.isenabled() and "compare" in parser.format_help()
    gc.disable()
    try:
        cli._imported_parser(None)
        assert not gc.isenabled()  # a caller's disabled collector stays disabled
    finally:
        gc.enable()
    assert len(later) == 1000
