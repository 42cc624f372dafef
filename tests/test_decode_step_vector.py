"""`ReplicaConfig.decode_step_seconds` (one vectorized roofline pass over many batch sizes, which the analytic
capacity search reads) equals `step_seconds` called once per batch, bit for bit, on dense and MoE models,
GPU counts and dtypes; and the analytic capacity it feeds is the one the batch-by-batch scan gives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from costmodel.catalog import accelerators, load_model
from costmodel.catalog.params import derive_shape
from costmodel.config import ReplicaConfig
from costmodel.roofline import Efficiency
from costmodel.serving import analytic

BATCHES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 18, 22, 27, 33, 500, 4000])


def _config(model: str, hardware: str, gpus: int, weight_dtype: str) -> ReplicaConfig:
    hw = accelerators()[hardware]
    return ReplicaConfig(shape=derive_shape(load_model(model)), hardware=hw, gpus=gpus, weight_dtype=weight_dtype,
                         kv_dtype="bf16", efficiency=Efficiency.from_accelerator(hw))


@pytest.mark.parametrize("model,hardware,gpus,weight_dtype", list(itertools.product(
    ["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b"], ["h100-sxm", "l40s"], [1, 8],
    ["bf16", "fp8"])))
def test_vector_equals_one_call_per_batch(model: str, hardware: str, gpus: int, weight_dtype: str) -> None:
    config = _config(model, hardware, gpus, weight_dtype)
    for context in (100, 3000, 40000):
        vector = config.decode_step_seconds(batches=BATCHES, context_tokens=context)
        assert vector.shape == BATCHES.shape
        assert vector.tolist() == [config.step_seconds(batch=int(b), new_tokens=1, context_tokens=context)
                                   for b in BATCHES]


def test_the_ladder_is_the_scan_of_batches() -> None:
    """1..8 one by one, then x1.25 rounded down: 8 -> 10 -> 12 -> 15 -> 18 -> 22 -> 27 -> 33, up to the ceiling."""
    assert analytic._batch_ladder(max_batch=33) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 18, 22, 27, 33]
    assert analytic._batch_ladder(max_batch=0) == []
    assert analytic._batch_ladder(max_batch=3) == [1, 2, 3]
