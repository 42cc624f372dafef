"""The search queue's tie-break (`Candidate.order_key`) sorts candidates exactly as their repr() did, over the
whole bundled space: the key replaced repr() for speed, so the searched top K must not move."""

from __future__ import annotations

import random
from pathlib import Path

from costmodel.catalog import models
from costmodel.pricing import load_gpu_prices
from costmodel.scenario import load_scenario
from costmodel.search import enumerate_candidates

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_order_key_sorts_as_repr_over_every_model_and_offering() -> None:
    scenario = load_scenario(EXAMPLES / "batch-summarizer.yaml")  # batch: spot offerings enumerated too
    space = list(enumerate_candidates(scenario, gpu_sheet=load_gpu_prices(), model_ids=tuple(sorted(models()))))
    assert len(space) > 1000
    random.Random(0).shuffle(space)
    assert sorted(space, key=lambda c: c.order_key) == sorted(space, key=repr)
