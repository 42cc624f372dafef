"""engine_io.paused_gc: the collector is off inside and back as it was after, exceptions included."""

from __future__ import annotations

import gc

import pytest

from costmodel.serving.engine_io import paused_gc


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_gc_restores_the_collector_state(enabled: bool) -> None:
    def set_collector(on: bool) -> None:
        if on:
            gc.enable()
        else:
            gc.disable()

    was = gc.isenabled()
    try:
        set_collector(enabled)
        with paused_gc():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError), paused_gc():
            raise ValueError("inside the loop")
        assert gc.isenabled() is enabled
    finally:
        set_collector(was)
