"""ReplicaConfig: one object for model shape, hardware, GPUs, dtypes, efficiency and engine."""

from __future__ import annotations

import dataclasses
import math

import pytest

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.config import ReplicaConfig
from costmodel.errors import CostmodelError
from costmodel.memory import RESERVE_FRACTION, activation_bytes_per_gpu, plan_replica_memory
from costmodel.ops import uniform_work
from costmodel.roofline import Efficiency, step, step_from_work
from costmodel.serving.analytic import roofline_capacity
from costmodel.serving.steptime import StepTimer


def _config(**update: object) -> ReplicaConfig:
    hw = load_accelerator("h100-sxm")
    config = ReplicaConfig(shape=derive_shape(load_model("llama-3.1-8b")), hardware=hw, gpus=1, weight_dtype="bf16",
                           kv_dtype="bf16", efficiency=Efficiency.from_accelerator(hw))
    return dataclasses.replace(config, **update)  # type: ignore[arg-type]


def test_config_is_frozen_keyword_only_and_names_the_generic_engine():
    config = _config()
    assert config.engine == "generic"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.gpus = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        ReplicaConfig(config.shape, config.hardware, 1, "bf16", "bf16", config.efficiency)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("update", "fragment"),
    [
        ({"gpus": 0}, "gpus must be an integer >= 1"),
        ({"gpus": 1.5}, "gpus must be an integer >= 1"),
        ({"gpus": True}, "gpus must be an integer >= 1"),
        ({"weight_dtype": "fp12"}, "weight_dtype 'fp12' is not one of"),
        ({"kv_dtype": "int3"}, "kv_dtype 'int3' is not one of"),
        ({"engine": ""}, "engine must name an engine profile"),
    ],
)
def test_bad_config_names_the_field(update, fragment):
    with pytest.raises(CostmodelError, match=fragment):
        _config(**update)


def test_non_finite_efficiency_is_refused():
    hw = load_accelerator("h100-sxm")
    bad = dataclasses.replace(Efficiency.from_accelerator(hw), eff_memory=math.nan)
    with pytest.raises(CostmodelError, match="efficiency must be finite"):
        _config(efficiency=bad)


def test_config_step_is_the_roofline_step():
    config = _config(gpus=2, weight_dtype="fp8", kv_dtype="fp8")
    direct = step(config.shape, config.hardware, batch=16, new_tokens=1, context_tokens=2048, weight_dtype="fp8",
                  kv_dtype="fp8", gpus=2, efficiency=config.efficiency)
    assert config.step(batch=16, new_tokens=1, context_tokens=2048) == direct


def test_plan_replica_memory_reads_the_config():
    # Llama 3.1 8B at bf16 on one H100: 8.03e9 params x 2 B = 16.06e9 B of weights (the same golden figure
    # as tests/test_memory_estimate.py); each 1280-token sequence holds 1280 x 131072 B of KV (32 layers x
    # 8 KV heads x 128 head_dim x 2 (K, V) x 2 B per token = 131072 B).
    config = _config()
    plan = plan_replica_memory(config, context_tokens=1280)
    hbm = config.hardware.memory_bytes
    budget = hbm - 16.06e9 - float(activation_bytes_per_gpu(config.shape, gpus=1)) - RESERVE_FRACTION * hbm
    assert plan.kv_budget_bytes_per_gpu == pytest.approx(budget, rel=1e-3)
    assert plan.max_batch == math.floor(plan.kv_budget_bytes_per_gpu / (1280 * 131072))
    fp8 = plan_replica_memory(_config(kv_dtype="fp8"), context_tokens=1280)
    assert fp8.kv_bytes_per_sequence == pytest.approx(plan.kv_bytes_per_sequence / 2)


def test_roofline_capacity_takes_one_config():
    config = _config()
    capacity = roofline_capacity(config, prompt_tokens=1000, output_tokens=200, cached_prompt_fraction=0.0,
                                 ttft_limit_seconds=2.0, tpot_limit_seconds=0.05)
    assert capacity.feasible and capacity.fits and capacity.method == "roofline"
    # t_p is one prefill step of the 1000-token prompt: the config's own step.
    assert capacity.ttft_seconds == config.step(batch=1, new_tokens=1000, context_tokens=0).step_seconds
    # X(B) = 1 / (t_p + O t_d(B) / B) at the operating point (serving/analytic.py's docstring).
    t_d = config.step(batch=capacity.batch, new_tokens=1, context_tokens=1100).step_seconds
    assert capacity.requests_per_second == pytest.approx(1.0 / (capacity.ttft_seconds + 200 * t_d / capacity.batch))
    too_big = _config(shape=derive_shape(load_model("llama-3.1-405b")))
    refused = roofline_capacity(too_big, prompt_tokens=1000, output_tokens=200, cached_prompt_fraction=0.0,
                                ttft_limit_seconds=2.0, tpot_limit_seconds=0.05)
    assert not refused.feasible and not refused.fits


def test_step_timer_for_config_times_steps_like_the_roofline():
    # A prefill chunk of 512 new tokens after 256 cached ones, emitting a token: the timer's table value
    # equals the roofline step of that uniform work (the same check tests/test_serving_steptime.py makes
    # for mixed steps, here through the config constructor).
    config = _config(gpus=2, weight_dtype="fp8")
    timer = StepTimer.for_config(config, max_tokens=1024)
    fields = timer.chunk_fields(new_tokens=512, context_tokens=256, emits=True)
    work = uniform_work(config.shape, batch=1.0, new_tokens=512.0, context_tokens=256.0)
    expected = step_from_work(config.shape, config.hardware, work, weight_dtype="fp8", kv_dtype="bf16", gpus=2,
                              efficiency=config.efficiency).step_seconds
    assert timer.seconds(512, fields) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("model", "gpus", "dtype"), [("llama-3.1-8b", 1, "bf16"), ("llama-3.1-70b", 4, "fp8"),
                                                       ("mixtral-8x7b", 2, "bf16")])
def test_step_seconds_is_the_full_steps_time_to_the_bit(model: str, gpus: int, dtype: str) -> None:
    """The capacity search's fast path (no per-op breakdown) gives the same float as `step(...).step_seconds`,
    prefill and decode, with a calibrated efficiency that rereads weights."""
    for efficiency in (None, Efficiency(eff_compute=1e-6, eff_memory=0.3, overhead_seconds_per_step=0.01,
                                        compute_half_saturation_tokens=512.0, weight_reads_max_rows=4.0)):
        config = _config(shape=derive_shape(load_model(model)), gpus=gpus, weight_dtype=dtype,
                         **({"efficiency": efficiency} if efficiency else {}))
        for batch, new, context in ((1, 4_000, 0), (1, 1, 1), (3, 1, 2_500), (256, 1, 8_000), (7, 300, 60)):
            full = config.step(batch=batch, new_tokens=new, context_tokens=context).step_seconds
            assert config.step_seconds(batch=batch, new_tokens=new, context_tokens=context) == full
