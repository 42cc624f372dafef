"""docs/search.md states the executors' defaults and flags as the code has them."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.search.executors import RAY_CONNECT_TIMEOUT_SECONDS, RAY_INIT_TIMEOUT_SECONDS, TASKS_PER_WORKER
from costmodel.search.parallel import LOOKAHEAD_PER_WORKER

DOC = (Path(__file__).resolve().parents[1] / "docs" / "search.md").read_text(encoding="utf-8")


def test_the_numbers_in_the_doc_are_the_code_defaults() -> None:
    assert f"(default {RAY_INIT_TIMEOUT_SECONDS:g};" in DOC
    assert f"each within\n  {RAY_CONNECT_TIMEOUT_SECONDS:g} s" in DOC
    assert f"{TASKS_PER_WORKER} tasks per worker for the screen" in DOC
    assert f"up to {LOOKAHEAD_PER_WORKER} simulations per worker in\n   flight" in DOC
    assert f"(up to {LOOKAHEAD_PER_WORKER} per worker in flight)" in DOC


def test_the_flags_in_the_doc_exist(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    help_text = capsys.readouterr().out
    for flag in ("--executor", "--address", "--workers", "--ray-init-timeout", "--json"):
        assert flag in DOC and flag in help_text
