"""A search whose worker dies exits 2 with a message, not a traceback: a local pool process killed mid-search
(BrokenProcessPool; the OOM killer does this) and a Ray worker or node lost (ray's WorkerCrashedError,
NodeDiedError). Found at the search's boundary (costmodel/search/run.py), the same for every executor."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.scenario import parse_scenario
from costmodel.search import parallel as search_parallel
from costmodel.search import search

PARENT_PID = os.getpid()
SCENARIO: dict[str, Any] = {
    "name": "lost workers", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b"], "hardware": ["l4"], "engines": ["generic"]},
    "options": [{"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "offering": "owned/l4/owned"}],
}


def _die(job: object) -> object:
    """A pool worker killed mid-simulation (only in a child: the test process itself must live on)."""
    if os.getpid() == PARENT_PID:
        raise RuntimeError("the simulation ran in the test process; the search was meant to use the pool")
    os._exit(9)


def test_a_dead_pool_worker_exits_2_with_a_message(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(search_parallel, "simulate_capacity", _die)  # forked workers inherit the patch
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    code = main(["search", str(path), "--workers", "2", "--date", "2026-12-01"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "a search worker process died mid-search" in captured.err and "--workers" in captured.err
    assert "Traceback" not in captured.err


class WorkerCrashedError(Exception):
    """Stands in for ray.exceptions.WorkerCrashedError (ray is an optional extra)."""


WorkerCrashedError.__module__ = "ray.exceptions"


class _LostRay:
    """An executor whose every task is lost (the executor interface the search uses)."""

    parallelism = 2

    def map(self, fn: object, items: list[object]) -> list[object]:
        raise WorkerCrashedError("The worker died unexpectedly while executing this task.")

    def submit(self, fn: object, item: object) -> object:
        return item

    def collect(self, handle: object) -> object:
        raise WorkerCrashedError("The worker died unexpectedly while executing this task.")

    def discard(self, handle: object) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_lost_ray_worker_is_a_costmodel_error() -> None:
    with pytest.raises(CostmodelError, match=r"a Ray worker was lost mid-search \(WorkerCrashedError: The worker died"):
        search(parse_scenario(SCENARIO), top_k=1, executor=_LostRay())  # type: ignore[arg-type]


def test_a_lost_ray_worker_exits_2_from_the_cli(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("costmodel.cli.search.make_executor", lambda *a, **k: _LostRay())
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    code = main(["search", str(path), "--executor", "ray", "--date", "2026-12-01"])
    captured = capsys.readouterr()
    assert code == 2 and "a Ray worker was lost mid-search" in captured.err and "--executor local" in captured.err
