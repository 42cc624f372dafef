"""fp4 weights and KV cache: half of fp8's bytes, W4A4 on fp4 tensor cores, refused where there are none.

Arithmetic: Llama-3.1-8B holds 8,030,261,248 weights (its HF "Model size" 8.03B; the count is written out
in tests/test_catalog_data.py). NVIDIA's fp8/NVFP4 checkpoints quantize only the linear layers inside the
blocks (dtypes.HEAD_KEPT_16_BIT): the embedding table and the untied lm_head, 4,096 x 128,256 = 525,336,576
weights each, stay 2 B. So the block weights (8,030,261,248 - 1,050,673,152 = 6,979,588,096) halve from fp8
(1 B) to fp4 (0.5 B): 8,030,261,248 + 1,050,673,152 = 9,080,934,400 B at fp8, 3,489,794,048 + 2,101,346,304 =
5,591,140,352 B at fp4.
Its KV is 2 * 32 layers * 8 KV heads * 128 dims = 65,536 elements per token: 65,536 B at fp8, 32,768 B at
fp4. The B200 datasheet's dense fp4 peak is 18 PFLOPS with sparsity / 2 = 9e15 FLOP/s.
"""

from __future__ import annotations

import pytest

from costmodel.catalog.loader import load_accelerator
from costmodel.cli import main
from costmodel.dtypes import BYTES_PER_ELEMENT, KV_DTYPES, WEIGHT_DTYPES, compute_dtype
from costmodel.errors import CostmodelError
from costmodel.estimate import estimate
from costmodel.serving.replica import build_replica

LLAMA_8B_PARAMS = 8_030_261_248
LLAMA_8B_OUTSIDE_BLOCKS = 2 * 4_096 * 128_256  # embedding + untied lm_head, kept 16-bit


def test_fp4_is_a_weight_and_kv_dtype_of_half_a_byte() -> None:
    assert "fp4" in WEIGHT_DTYPES and "fp4" in KV_DTYPES
    assert BYTES_PER_ELEMENT["fp4"] == BYTES_PER_ELEMENT["fp8"] / 2 == 0.5


def test_fp4_halves_weight_and_kv_bytes_against_fp8() -> None:
    fp8 = estimate("llama-3.1-8b", "b200", weight_dtype="fp8", kv_dtype="fp8")
    fp4 = estimate("llama-3.1-8b", "b200", weight_dtype="fp4", kv_dtype="fp4")
    blocks = LLAMA_8B_PARAMS - LLAMA_8B_OUTSIDE_BLOCKS
    assert fp8.memory.weights_bytes == blocks * 1.0 + LLAMA_8B_OUTSIDE_BLOCKS * 2.0 == 9_080_934_400
    assert fp4.memory.weights_bytes == blocks * 0.5 + LLAMA_8B_OUTSIDE_BLOCKS * 2.0 == 5_591_140_352
    # The quantized part halves exactly.
    assert fp8.memory.weights_bytes - fp4.memory.weights_bytes == blocks * 0.5
    assert (fp8.memory.kv_bytes_per_token, fp4.memory.kv_bytes_per_token) == (2 * 32 * 8 * 128 * 1, 2 * 32 * 8 * 128 * 0.5)


def test_fp4_matmuls_run_at_the_fp4_peak_on_blackwell() -> None:
    b200 = load_accelerator("b200")
    assert compute_dtype(weight_dtype="fp4", peak_flops_per_s=b200.peak_flops_per_s) == "fp4"
    assert b200.peak_for("fp4") == 18e15 / 2
    # A compute-bound prefill (batch 8 x 4096 tokens) runs faster at the doubled peak than at fp8.
    fp8 = estimate("llama-3.1-8b", "b200", weight_dtype="fp8", batch=8, prompt_tokens=4096)
    fp4 = estimate("llama-3.1-8b", "b200", weight_dtype="fp4", batch=8, prompt_tokens=4096)
    assert fp8.prefill.bound == "compute"
    assert fp4.prefill_seconds < fp8.prefill_seconds


@pytest.mark.parametrize("hardware_id", ["h100-sxm", "h200", "a100-80gb", "l4", "mi300x", "mi325x", "cpu"])
@pytest.mark.parametrize(("weight_dtype", "kv_dtype", "flag"), [("fp4", "bf16", "--weight-dtype"), ("bf16", "fp4", "--kv-dtype")])
def test_fp4_without_fp4_tensor_cores_names_the_hardware(hardware_id: str, weight_dtype: str, kv_dtype: str, flag: str) -> None:
    with pytest.raises(CostmodelError, match=rf"\('{hardware_id}'\): {flag} fp4 needs fp4 tensor cores") as err:
        estimate("llama-3.1-8b", hardware_id, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    assert "b200" in str(err.value) and "gb200" in str(err.value)  # where fp4 does exist
    with pytest.raises(CostmodelError, match=hardware_id):
        build_replica("llama-3.1-8b", hardware_id, weight_dtype=weight_dtype, kv_dtype=kv_dtype)


def test_peak_for_refuses_fp4_off_blackwell() -> None:
    with pytest.raises(CostmodelError, match="'h100-sxm'"):
        load_accelerator("h100-sxm").peak_for("fp4")


@pytest.mark.parametrize("command", [["estimate"], ["simulate", "--rate", "1", "--requests", "20"]])
def test_cli_exits_2_naming_the_hardware(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    argv = [command[0], "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--weight-dtype", "fp4", *command[1:]]
    assert main(argv) == 2
    assert "NVIDIA H100 SXM5 80GB ('h100-sxm'): --weight-dtype fp4 needs fp4 tensor cores" in capsys.readouterr().err


def test_cli_accepts_fp4_on_fp4_hardware(capsys: pytest.CaptureFixture[str]) -> None:
    for hardware_id in ("b200", "b300", "gb200"):
        argv = ["estimate", "--model", "llama-3.1-8b", "--hardware", hardware_id, "--weight-dtype", "fp4", "--kv-dtype", "fp4", "--json"]
        assert main(argv) == 0, hardware_id
        assert '"weight_dtype": "fp4"' in capsys.readouterr().out
