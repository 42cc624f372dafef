"""Catalog data files: every row validates, ids match, and spot values match their published sources.

The parameter cross-check below is an independent back-of-envelope count written out here (weights of the
projections, MLPs, routers and embeddings; norms and biases left out, <0.1%). It is not the library's
counter: its job is to catch a mistyped shape in a YAML file by comparing it with the published count.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml

from costmodel.catalog.schema import AcceleratorSpec, ModelSpec

CATALOG_DIR = Path(__file__).resolve().parent.parent / "costmodel" / "catalog"
MODEL_FILES = sorted((CATALOG_DIR / "models").glob("*.yaml"))
ACCELERATORS_FILE = CATALOG_DIR / "accelerators.yaml"
CHECKED = dt.date(2026, 11, 29)
CHECKED_DATES = {CHECKED, dt.date(2026, 12, 1)}  # the 2024-25 rows, and the current families added later

REQUIRED_MODEL_IDS = {
    "llama-2-7b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
    "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b",
    "tiny-test", "qwen2.5-0.5b", "llama-3.2-1b",
    "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-r1", "deepseek-v3.1", "gemma-3-27b",
    "mistral-small-24b", "llama-4-scout", "llama-4-maverick",
}  # fmt: skip
REQUIRED_ACCELERATOR_IDS = {
    "h100-sxm", "h100-pcie", "h200", "b200", "a100-80gb", "a100-40gb", "l40s", "l4", "mi300x", "rtx-4090",
    "b300", "gb200", "mi325x", "h200-nvl", "mi355x", "rtx-pro-6000",
}  # fmt: skip
# Rows added for issue 17 were read on 2026-12-01; the rest on CHECKED.
ACCELERATORS_CHECKED_LATER = {"b300", "gb200", "mi325x", "h200-nvl", "mi355x", "rtx-pro-6000"}
# Accelerators whose datasheet lists fp4 tensor or matrix cores (Blackwell; AMD CDNA 4's MXFP4); every other
# row must leave fp4 out.
FP4_ACCELERATOR_IDS = {"b200", "b300", "gb200", "rtx-pro-6000", "mi355x"}
# Models whose publisher counts the whole multimodal checkpoint (vision encoder and projector included): a
# text-only shape must come out below the published total, by less than 1.5% of it. Llama 4 Scout: Meta's
# "109B total" against 107.77B of text weights (written out in test_llama_4_counts_written_out).
PUBLISHED_TOTAL_INCLUDES_VISION = {"llama-4-scout"}


def _raw_models() -> dict[str, dict[str, Any]]:
    return {path.stem: yaml.safe_load(path.read_text(encoding="utf-8")) for path in MODEL_FILES}


def _models() -> dict[str, ModelSpec]:
    return {stem: ModelSpec.model_validate(raw) for stem, raw in _raw_models().items()}


def _raw_accelerators() -> list[dict[str, Any]]:
    rows = yaml.safe_load(ACCELERATORS_FILE.read_text(encoding="utf-8"))["accelerators"]
    assert isinstance(rows, list)
    return rows


def _accelerators() -> dict[str, AcceleratorSpec]:
    return {row["id"]: AcceleratorSpec.model_validate(row) for row in _raw_accelerators()}


def _assert_no_numeric_strings(row: dict[str, Any], where: str) -> None:
    """YAML 1.1 (PyYAML) reads `6.74e9` as a STRING (a float needs a dot and a signed exponent: 6.74e+9).
    pydantic would coerce it, but anything reading the raw file would not, so the files must hold real numbers."""
    for key, value in row.items():
        if isinstance(value, dict):
            _assert_no_numeric_strings(value, f"{where}.{key}")
        elif isinstance(value, str):
            try:
                float(value)
            except ValueError:
                continue
            pytest.fail(f"{where}.{key} = {value!r} is a string; write it as a YAML float like 6.74e+9")


# ---------------------------------------------------------------- models


def test_model_files_validate_and_ids_match_file_stems() -> None:
    assert MODEL_FILES, "no model YAML files found"
    for stem, raw in _raw_models().items():
        spec = ModelSpec.model_validate(raw)
        assert spec.id == stem
        assert spec.checked in CHECKED_DATES, stem
        _assert_no_numeric_strings(raw, stem)


def test_required_model_ids_exist() -> None:
    assert set(_models()) >= REQUIRED_MODEL_IDS


def test_model_sources_are_config_urls() -> None:
    for spec in _models().values():
        if spec.id == "tiny-test":
            assert spec.source == "synthetic test model (this repo)"
            assert spec.hf_repo is None
            continue
        assert spec.hf_repo is not None
        assert spec.source == f"https://huggingface.co/{spec.hf_repo}/blob/main/config.json"
        assert spec.published_total_params is not None


def _kv_bytes_per_token(spec: ModelSpec, *, bytes_per_element: int) -> int:
    """DESIGN.md: 2 * L * g * d_h * b_kv; MLA: L * (kv_lora_rank + rope_dim) * b_kv."""
    if spec.is_mla:
        assert spec.kv_lora_rank is not None and spec.qk_rope_head_dim is not None
        return spec.num_hidden_layers * (spec.kv_lora_rank + spec.qk_rope_head_dim) * bytes_per_element
    return 2 * spec.num_hidden_layers * spec.kv_heads * spec.head_dim_resolved * bytes_per_element


@pytest.mark.parametrize(
    ("model_id", "expected_bytes"),
    [
        # Llama-3.1-8B config.json: 32 layers, 8 KV heads, head_dim 4096/32 = 128; bf16 = 2 B:
        # 2 * 32 * 8 * 128 * 2 = 131072 B = 128 KiB per token.
        ("llama-3.1-8b", 2 * 32 * 8 * 128 * 2),
        # Llama-2-7B is MHA (32 KV heads): 2 * 32 * 32 * 128 * 2 = 524288 B = 0.5 MiB per token
        # (the figure in kipply's "Transformer Inference Arithmetic" for a 7B MHA model).
        ("llama-2-7b", 2 * 32 * 32 * 128 * 2),
        # Llama-3.1-70B: 80 layers, 8 KV heads, 128 dims: 2 * 80 * 8 * 128 * 2 = 327680 B = 320 KiB.
        ("llama-3.1-70b", 2 * 80 * 8 * 128 * 2),
        # Qwen2.5-7B: 28 layers, 4 KV heads, 3584/28 = 128 dims: 2 * 28 * 4 * 128 * 2 = 57344 B.
        ("qwen2.5-7b", 2 * 28 * 4 * 128 * 2),
        # DeepSeek-V3 MLA (DeepSeek-V2 paper, Table 1: (d_c + d_h^R) * l elements per token):
        # 61 * (512 + 64) * 2 = 70272 B.
        ("deepseek-v3", 61 * (512 + 64) * 2),
        # gpt-oss-120b: 36 layers, 8 KV heads, head_dim 64: 2 * 36 * 8 * 64 * 2 = 73728 B (full-attention
        # layers keep all of it; sliding layers keep at most 128 tokens).
        ("gpt-oss-120b", 2 * 36 * 8 * 64 * 2),
        # tiny-test: 2 * 4 * 4 * (256/8 = 32) * 2 = 2048 B.
        ("tiny-test", 2 * 4 * 4 * 32 * 2),
        # Qwen3-30B-A3B config.json: 48 layers, 4 KV heads, head_dim 128: 2 * 48 * 4 * 128 * 2 = 98304 B.
        ("qwen3-30b-a3b", 2 * 48 * 4 * 128 * 2),
        # Qwen3-235B-A22B: 94 layers, 4 KV heads of 128: 2 * 94 * 4 * 128 * 2 = 192512 B.
        ("qwen3-235b-a22b", 2 * 94 * 4 * 128 * 2),
        # Gemma 3 27B: 62 layers, 16 KV heads of 128: 2 * 62 * 16 * 128 * 2 = 507904 B (full-attention
        # layers keep all of it; the 52 sliding layers keep at most 1024 tokens).
        ("gemma-3-27b", 2 * 62 * 16 * 128 * 2),
        # DeepSeek-R1 has V3's MLA: 61 * (512 + 64) * 2 = 70272 B.
        ("deepseek-r1", 61 * (512 + 64) * 2),
        # Llama 4 Scout and Maverick: 48 layers, 8 KV heads of 128: 2 * 48 * 8 * 128 * 2 = 196608 B (the 36
        # chunked layers keep at most 8,192 tokens of it).
        ("llama-4-scout", 2 * 48 * 8 * 128 * 2),
        ("llama-4-maverick", 2 * 48 * 8 * 128 * 2),
    ],
)
def test_kv_bytes_per_token_spot_checks(model_id: str, expected_bytes: int) -> None:
    assert _kv_bytes_per_token(_models()[model_id], bytes_per_element=2) == expected_bytes


def test_config_shape_spot_checks() -> None:
    models = _models()
    # meta-llama/Llama-3.1-8B config.json.
    m = models["llama-3.1-8b"]
    assert (m.hidden_size, m.num_hidden_layers, m.kv_heads, m.head_dim_resolved) == (4096, 32, 8, 128)
    assert (m.intermediate_size, m.vocab_size) == (14336, 128256)
    # deepseek-ai/DeepSeek-V3 config.json.
    d = models["deepseek-v3"]
    assert (d.n_routed_experts, d.n_shared_experts, d.num_experts_per_tok) == (256, 1, 8)
    assert (d.moe_intermediate_size, d.first_k_dense_replace) == (2048, 3)
    assert (d.kv_lora_rank, d.q_lora_rank, d.qk_rope_head_dim, d.qk_nope_head_dim, d.v_head_dim) == (
        512, 1536, 64, 128, 128,
    )  # fmt: skip
    assert d.is_moe and d.is_mla
    # mistralai/Mixtral-8x7B-v0.1 config.json.
    x = models["mixtral-8x7b"]
    assert (x.num_local_experts, x.num_experts_per_tok, x.sliding_window) == (8, 2, None)
    # mistralai/Mistral-7B-v0.1 config.json: sliding_window 4096 on every layer.
    assert models["mistral-7b"].sliding_window == 4096
    # Tied embeddings in the small models' configs.
    assert models["llama-3.2-1b"].tie_word_embeddings and models["qwen2.5-0.5b"].tie_word_embeddings


@pytest.mark.parametrize(
    ("model_id", "layers", "experts"), [("gpt-oss-20b", 24, 32), ("gpt-oss-120b", 36, 128)]
)
def test_gpt_oss_alternates_sliding_and_full_attention(model_id: str, layers: int, experts: int) -> None:
    spec = _models()[model_id]
    assert spec.sliding_window == 128
    assert spec.num_local_experts == experts and spec.num_experts_per_tok == 4
    assert spec.layer_types is not None and len(spec.layer_types) == layers
    # config.json: layer_types starts with sliding_attention and alternates.
    assert spec.layer_types[0::2] == ["sliding_attention"] * (layers // 2)
    assert spec.layer_types[1::2] == ["full_attention"] * (layers // 2)
    assert spec.published_counts_exclude_embedding


def _approx_params(spec: ModelSpec) -> tuple[float, float]:
    """(total, active per token) weights: projections + MLPs + routers + embeddings; norms/biases left out."""
    d, layers, h = spec.hidden_size, spec.num_hidden_layers, spec.num_attention_heads
    if spec.is_mla:
        assert spec.kv_lora_rank and spec.qk_rope_head_dim and spec.qk_nope_head_dim and spec.v_head_dim
        qk_dim = spec.qk_nope_head_dim + spec.qk_rope_head_dim
        q_proj = d * spec.q_lora_rank + spec.q_lora_rank * h * qk_dim if spec.q_lora_rank else d * h * qk_dim
        kv_down = d * (spec.kv_lora_rank + spec.qk_rope_head_dim)
        kv_up = spec.kv_lora_rank * h * (spec.qk_nope_head_dim + spec.v_head_dim)
        attn = q_proj + kv_down + kv_up + h * spec.v_head_dim * d
    else:
        dh, g = spec.head_dim_resolved, spec.kv_heads
        attn = 2 * d * h * dh + 2 * d * g * dh  # q and o; k and v
    dense_mlp = 3 * d * spec.intermediate_size  # SwiGLU: gate, up, down
    embeddings = spec.vocab_size * d * (1 if spec.tie_word_embeddings else 2)
    if not spec.is_moe:
        total = layers * (attn + dense_mlp) + embeddings
        return total, total
    assert spec.num_experts_per_tok is not None
    expert_mlp = 3 * d * (spec.moe_intermediate_size or spec.intermediate_size)
    shared = (spec.n_shared_experts or 0) * expert_mlp
    router = d * spec.experts
    dense_layers = spec.first_k_dense_replace or 0
    moe_layers = layers - dense_layers
    fixed = layers * attn + dense_layers * dense_mlp + moe_layers * (shared + router) + embeddings
    total = fixed + moe_layers * spec.experts * expert_mlp
    active = fixed + moe_layers * spec.num_experts_per_tok * expert_mlp
    return total, active


def test_shapes_reproduce_published_parameter_counts() -> None:
    # Published totals are rounded to 3-4 significant figures ("8.03B", "0.49B"); norms and biases are
    # < 0.1%. Tolerance: 0.2%, or half a unit in the last digit of a figure like "0.49B" (0.005e9), so a
    # mistyped width (e.g. Qwen2.5-72B intermediate 29568 -> 29696, +0.35%) fails.
    # Active counts (MoE) are rounder ("37B", "12.9B"): 2%.
    checked = 0
    for spec in _models().values():
        if spec.published_total_params is None:
            continue
        total, active = _approx_params(spec)
        if spec.id in PUBLISHED_TOTAL_INCLUDES_VISION:
            assert 0 < spec.published_total_params - total < 0.015 * spec.published_total_params, spec.id
        else:
            assert total == pytest.approx(spec.published_total_params, rel=0.002, abs=0.005e9), spec.id
        if spec.published_active_params is not None:
            if spec.published_counts_exclude_embedding:
                active -= spec.vocab_size * spec.hidden_size  # e.g. gpt-oss: input embedding not counted
            assert active == pytest.approx(spec.published_active_params, rel=0.02), spec.id
        checked += 1
    assert checked == len(REQUIRED_MODEL_IDS) - 1  # every model but tiny-test carries a published count


def test_llama_3_1_8b_count_written_out() -> None:
    # 32 layers * (q,o: 2*4096*4096 + k,v: 2*4096*1024 + MLP: 3*4096*14336) + 2 * 128256*4096 (untied)
    # = 32 * 218,103,808 + 1,050,673,152 = 8,029,995,008; adding the RMSNorm weights (2 per layer + final:
    # 65 * 4096 = 266,240) gives 8,030,261,248 ~ 8.03e9 (HF "Model size" 8.03B).
    expected = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 128256 * 4096
    assert expected == 8_029_995_008
    assert _approx_params(_models()["llama-3.1-8b"])[0] == expected


# ---------------------------------------------------------------- accelerators


def test_accelerator_rows_validate_with_unique_ids() -> None:
    rows = _raw_accelerators()
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate accelerator id"
    for row in rows:
        spec = AcceleratorSpec.model_validate(row)
        assert spec.checked == (dt.date(2026, 12, 1) if spec.id in ACCELERATORS_CHECKED_LATER else CHECKED), spec.id
        # The `cpu` row is a nominal placeholder that a probe calibration replaces (docs/probes.md).
        assert spec.source.startswith("https://") or spec.source.startswith("nominal placeholder"), spec.id
        _assert_no_numeric_strings(row, spec.id)


def test_required_accelerator_ids_exist() -> None:
    assert set(_accelerators()) >= REQUIRED_ACCELERATOR_IDS


def test_accelerator_datasheet_spot_checks() -> None:
    acc = _accelerators()
    h100 = acc["h100-sxm"]
    # H100 SXM5 dense bf16 = 132 SMs * 1830 MHz boost * 4096 FLOP/clk/SM (Hopper whitepaper) = 989.4 TFLOPS.
    assert h100.peak_flops_per_s["bf16"] == pytest.approx(132 * 1830e6 * 4096, rel=1e-3)
    assert h100.peak_flops_per_s["fp8"] == pytest.approx(2 * h100.peak_flops_per_s["bf16"], rel=1e-3)
    assert h100.hbm_bytes_per_s == 3.35e12
    assert h100.interconnect_bytes_per_s == 900e9 / 2  # NVLink 4, 900 GB/s bidirectional
    assert h100.memory_bytes == 80 * 2**30  # 80 GiB: nvidia-smi shows 81,559 MiB > 80e9 B
    # A100 dense bf16 = 108 SMs * 1410 MHz * 2048 FLOP/clk/SM = 311.9 TFLOPS (datasheet 312); no fp8.
    a100 = acc["a100-80gb"]
    assert a100.peak_flops_per_s["bf16"] == pytest.approx(108 * 1410e6 * 2048, rel=1e-3)
    assert "fp8" not in a100.peak_flops_per_s
    assert a100.interconnect_bytes_per_s == 600e9 / 2  # NVLink 3
    # MI300X dense bf16 = 304 CUs * 2100 MHz * 2048 FLOP/clk/CU = 1307.4 TFLOPS; IF 7 links * 64 GB/s.
    mi300x = acc["mi300x"]
    assert mi300x.peak_flops_per_s["bf16"] == pytest.approx(304 * 2100e6 * 2048, rel=1e-3)
    assert mi300x.interconnect_bytes_per_s == 7 * 64e9
    # B200 (HGX, per GPU): 4.5 PFLOPS bf16 with sparsity -> 2.25 dense; fp4 18 -> 9 dense.
    b200 = acc["b200"]
    assert b200.peak_flops_per_s["bf16"] == 2.25e15
    assert b200.peak_flops_per_s["fp4"] == 9e15
    assert b200.interconnect_bytes_per_s == 1.8e12 / 2  # NVLink 5
    # H200: same compute as H100 SXM, 141 GiB at 4.8 TB/s.
    assert acc["h200"].peak_flops_per_s == h100.peak_flops_per_s
    assert acc["h200"].memory_bytes == 141 * 2**30
    # L4: 58 SMs * 2040 MHz * 1024 FLOP/clk/SM (Ada) = 121.2 TFLOPS dense bf16; 72 W.
    assert acc["l4"].peak_flops_per_s["bf16"] == pytest.approx(58 * 2040e6 * 1024, rel=2e-3)
    assert acc["l4"].tdp_watts == 72
    # PCIe Gen4 x16 one way ~32 GB/s; Gen5 ~64 GB/s.
    assert acc["l40s"].interconnect_bytes_per_s == 32e9
    assert acc["h100-pcie"].interconnect_bytes_per_s == 64e9


def test_efficiency_defaults_are_sane_and_explained() -> None:
    for spec in _accelerators().values():
        # Defaults, not calibrated values: MBU 55-75% (Databricks, gpt-fast), MFU 0.3-0.75.
        assert 0.55 <= spec.eff_memory <= 0.75, spec.id
        assert 0.3 <= spec.eff_compute <= 0.75, spec.id
        assert 0 < spec.overhead_seconds_per_step < 2e-3, spec.id
        assert 5e-6 <= spec.link_latency_seconds <= 100e-6, spec.id
        for word in ("eff_memory", "eff_compute", "link_latency"):
            assert word in spec.efficiency_reason, f"{spec.id}: efficiency_reason should explain {word}"
        # Dense peaks only: no dtype may exceed 4x bf16 (fp4 on B200 and GB200 is exactly 4x), except
        # Blackwell Ultra's fp4 (B300: 14 / 2.25 = 6.2x), which NVIDIA raised without raising bf16.
        bf16 = spec.peak_flops_per_s["bf16"]
        assert all(v <= 4 * bf16 for d, v in spec.peak_flops_per_s.items() if d != "fp4"), spec.id
        assert spec.peak_flops_per_s.get("fp4", 0.0) <= 8 * bf16, spec.id


def test_fp4_peaks_only_on_blackwell_rows() -> None:
    with_fp4 = {hw_id for hw_id, spec in _accelerators().items() if "fp4" in spec.peak_flops_per_s}
    assert with_fp4 == FP4_ACCELERATOR_IDS


def test_new_accelerator_rows_match_their_sources() -> None:
    acc = _accelerators()
    # GB200 NVL72 per GPU (NVIDIA table, with sparsity): fp4 20, fp8 10, bf16 5 PFLOPS -> halved; 186 GB at
    # 8 TB/s; NVLink 5 1.8 TB/s. Rack totals agree: 1,440 PFLOPS fp4 / 72 GPUs = 20 per GPU (sparse).
    gb200 = acc["gb200"]
    assert gb200.peak_flops_per_s["fp4"] == 20e15 / 2 == 1440e15 / 72 / 2
    assert (gb200.peak_flops_per_s["fp8"], gb200.peak_flops_per_s["bf16"]) == (10e15 / 2, 5e15 / 2)
    assert (gb200.memory_bytes, gb200.hbm_bytes_per_s) == (186 * 2**30, 8e12)
    assert gb200.interconnect_bytes_per_s == 1.8e12 / 2 and gb200.tdp_watts == 1200
    # B300 (Verda's per-GPU dense table): fp4 14, fp8 4.5, bf16 2.25 PFLOPS; 270 GB at 7.7 TB/s; 1.1 kW.
    b300 = acc["b300"]
    assert (b300.peak_flops_per_s["fp4"], b300.peak_flops_per_s["fp8"], b300.peak_flops_per_s["bf16"]) == (
        14e15, 4.5e15, 2.25e15,
    )  # fmt: skip
    assert (b300.memory_bytes, b300.hbm_bytes_per_s, b300.tdp_watts) == (270 * 2**30, 7.7e12, 1100)
    # MI325X: the MI300X's CDNA 3 compute (304 CUs * 2100 MHz * 2048 FLOP/clk/CU = 1307.4 TFLOPS bf16) with
    # 256 GB of HBM3E at 6 TB/s.
    mi325x = acc["mi325x"]
    assert mi325x.peak_flops_per_s["bf16"] == pytest.approx(304 * 2100e6 * 2048, rel=1e-3)
    assert mi325x.peak_flops_per_s == {k: v for k, v in acc["mi300x"].peak_flops_per_s.items() if k != "int8"}
    assert (mi325x.memory_bytes, mi325x.hbm_bytes_per_s) == (256 * 2**30, 6e12)


# ---------------------------------------------------------------- current open-weights families


def test_current_family_shapes_match_their_configs() -> None:
    models = _models()
    # Qwen/Qwen3-32B config.json: 5120 wide, 64 layers, 64 query / 8 KV heads of 128, SwiGLU 25600, untied.
    q = models["qwen3-32b"]
    assert (q.hidden_size, q.num_hidden_layers, q.num_attention_heads, q.kv_heads, q.head_dim_resolved) == (
        5120, 64, 64, 8, 128,
    )  # fmt: skip
    assert (q.intermediate_size, q.vocab_size, q.tie_word_embeddings, q.is_moe) == (25600, 151936, False, False)
    # Qwen/Qwen3-30B-A3B and -235B-A22B: 128 experts ("num_experts"), 8 per token, no shared expert.
    for model_id, width, layers in (("qwen3-30b-a3b", 768, 48), ("qwen3-235b-a22b", 1536, 94)):
        m = models[model_id]
        assert (m.experts, m.num_experts_per_tok, m.moe_intermediate_size, m.num_hidden_layers) == (
            128, 8, width, layers,
        ), model_id  # fmt: skip
        assert not m.n_shared_experts and not m.first_k_dense_replace, model_id
    # DeepSeek-R1 (V3-Base post-trained) and V3.1 (V3 base, longer-context training): V3's shapes and counts.
    shape_fields = set(ModelSpec.model_fields) - {"id", "name", "hf_repo", "source", "checked"}
    v3 = {f: getattr(models["deepseek-v3"], f) for f in shape_fields}
    for model_id in ("deepseek-r1", "deepseek-v3.1"):
        assert {f: getattr(models[model_id], f) for f in shape_fields} == v3, model_id
    # Mistral Small 3 params.json: dim 5120, 40 layers, 32/8 heads of 128, hidden 32768, vocab 131072.
    s = models["mistral-small-24b"]
    assert (s.hidden_size, s.num_hidden_layers, s.num_attention_heads, s.kv_heads, s.head_dim_resolved) == (
        5120, 40, 32, 8, 128,
    )  # fmt: skip
    assert (s.intermediate_size, s.vocab_size, s.sliding_window) == (32768, 131072, None)


def test_gemma_3_interleaves_five_local_layers_per_global_layer() -> None:
    g = _models()["gemma-3-27b"]
    assert (g.hidden_size, g.num_hidden_layers, g.kv_heads, g.head_dim_resolved, g.sliding_window) == (
        5376, 62, 16, 128, 1024,
    )  # fmt: skip
    assert g.tie_word_embeddings and g.vocab_size == 262208  # embed_tokens: 262208 x 5376
    assert g.layer_types is not None
    # sliding_window_pattern 6: layer i is global when (i + 1) % 6 == 0 -> layers 5, 11, ..., 59: 10 global
    # and 62 - 10 = 52 local, the first layer local (Gemma 3 report).
    globals_at = [i for i, kind in enumerate(g.layer_types) if kind == "full_attention"]
    assert globals_at == list(range(5, 62, 6)) and len(globals_at) == 10
    assert g.layer_types[0] == "sliding_attention"


def test_mistral_small_3_count_equals_its_checkpoint_index() -> None:
    # model.safetensors.index.json total_size = 47,144,806,400 bytes of bf16 (2 B per parameter)
    # = 23,572,403,200 parameters. Written out: 40 layers * (q,o: 2*5120*4096 + k,v: 2*5120*1024 +
    # MLP: 3*5120*32768) + untied embeddings 2*131072*5120 = 22,229,811,200 + 1,342,177,280
    # = 23,571,988,480, plus RMSNorm weights (2 per layer + final: 81 * 5120 = 414,720) = 23,572,403,200.
    weights = 40 * (2 * 5120 * 4096 + 2 * 5120 * 1024 + 3 * 5120 * 32768) + 2 * 131072 * 5120
    assert weights == 23_571_988_480
    assert weights + 81 * 5120 == 47_144_806_400 // 2
    assert _approx_params(_models()["mistral-small-24b"])[0] == weights


# ---------------------------------------------------------------- issue 17 part 3: buyer's datasheet rows


def test_h200_nvl_matches_nvidias_nvl_column() -> None:
    # https://www.nvidia.com/en-us/data-center/h200/ (read 2026-12-01), H200 NVL column, "With sparsity":
    # BF16/FP16 1,671, FP8 3,341, INT8 3,341 TFLOPS -> halved; FP32 60 TFLOPS; 141 GB at 4.8 TB/s; up to 600 W;
    # NVLink bridge 900 GB/s per GPU (one way: 450 GB/s).
    nvl = _accelerators()["h200-nvl"]
    assert nvl.peak_flops_per_s == {"fp32": 60e12, "bf16": 1671e12 / 2, "fp16": 1671e12 / 2, "fp8": 3341e12 / 2,
                                    "int8": 3341e12 / 2}
    assert (nvl.memory_bytes, nvl.hbm_bytes_per_s, nvl.tdp_watts) == (141 * 2**30, 4.8e12, 600)
    assert (nvl.interconnect_bytes_per_s, nvl.gpus_per_node) == (900e9 / 2, 4)
    # Same GH100 at 600 W: the NVL's sparse bf16 peak is 1,671 / 1,979 = 84% of the SXM's.
    assert nvl.peak_flops_per_s["bf16"] / _accelerators()["h200"].peak_flops_per_s["bf16"] == pytest.approx(
        1671 / 1979, rel=1e-3)


def test_mi355x_matches_amds_datasheet() -> None:
    # AMD Instinct MI355X GPU datasheet (LE-92703-00, read 2026-12-01), the dense "peak" column: FP16/BF16
    # 2.5166 PFLOPS, OCP-FP8 5.0332, INT8 5.0332 POPS, MXFP4 10.0663, FP32 157.3 TFLOPS; 288 GB HBM3E at
    # 8 TB/s; 1400 W; 7 Infinity Fabric links of 153.6 GB/s (bidirectional).
    mi355x = _accelerators()["mi355x"]
    assert mi355x.peak_flops_per_s == {"fp32": 157.3e12, "bf16": 2516.6e12, "fp16": 2516.6e12, "fp8": 5033.2e12,
                                       "int8": 5033.2e12, "fp4": 10066.3e12}
    # bf16 = 256 CUs (ROCm GPU specifications) * 2,400 MHz peak engine clock * 4,096 FLOP/clk/CU (CDNA 4
    # whitepaper: FP16/BF16 dense matrix rate per CU per clock) = 2,516.6 TFLOPS.
    assert mi355x.peak_flops_per_s["bf16"] == pytest.approx(256 * 2400e6 * 4096, rel=1e-5)
    assert (mi355x.memory_bytes, mi355x.hbm_bytes_per_s, mi355x.tdp_watts) == (288 * 2**30, 8e12, 1400)
    assert mi355x.interconnect_bytes_per_s == pytest.approx(7 * 153.6e9 / 2)


def test_rtx_pro_6000_server_edition_matches_nvidias_page_halved() -> None:
    # https://www.nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition/ (read 2026-12-01):
    # FP4 4 PFLOPS, FP8 2 PFLOPS, FP16|BF16 1 PFLOP (read as with sparsity: the Workstation datasheet's
    # "4000 AI TOPS" is "Effective FP4 TOPS with sparsity"), so halved; 96 GB GDDR7 at 1,597 GB/s (not the
    # Workstation Edition's 1,792); up to 600 W; PCIe Gen5 x16 (128 GB/s bidirectional).
    rtx = _accelerators()["rtx-pro-6000"]
    assert rtx.peak_flops_per_s == {"bf16": 1e15 / 2, "fp16": 1e15 / 2, "fp8": 2e15 / 2, "fp4": 4e15 / 2}
    assert (rtx.memory_bytes, rtx.hbm_bytes_per_s, rtx.tdp_watts) == (96 * 2**30, 1597e9, 600)
    assert rtx.interconnect_bytes_per_s == 128e9 / 2


def test_llama_4_shapes_match_their_configs() -> None:
    models = _models()
    # text_config of meta-llama/Llama-4-{Scout-17B-16E,Maverick-17B-128E}-Instruct: 5120 wide, 48 layers,
    # 40 query / 8 KV heads of 128, experts of width 8192 (intermediate_size), 1 routed + 1 shared per token,
    # dense MLP width 16384 (intermediate_size_mlp), vocab 202048, untied.
    for model_id, experts, context, dense_layers in (
        ("llama-4-scout", 16, 10485760, 0), ("llama-4-maverick", 128, 1048576, 24),
    ):  # fmt: skip
        m = models[model_id]
        assert (m.hidden_size, m.num_hidden_layers, m.num_attention_heads, m.kv_heads, m.head_dim_resolved) == (
            5120, 48, 40, 8, 128,
        ), model_id  # fmt: skip
        assert (m.experts, m.num_experts_per_tok, m.n_shared_experts, m.moe_intermediate_size) == (
            experts, 1, 1, 8192,
        ), model_id  # fmt: skip
        assert (m.intermediate_size, m.vocab_size, m.tie_word_embeddings) == (16384, 202048, False), model_id
        assert (m.max_position_embeddings, m.first_k_dense_replace or 0) == (context, dense_layers), model_id
        # no_rope_layer_interval 4: layer i is NoPE with full attention when (i + 1) % 4 == 0 (12 of 48); the
        # other 36 are chunked (attention_chunk_size 8192), written as an 8,192-token window.
        assert m.layer_types is not None and m.sliding_window == 8192
        assert [i for i, kind in enumerate(m.layer_types) if kind == "full_attention"] == list(range(3, 48, 4))


def test_llama_4_counts_written_out() -> None:
    # Per layer: attention q,o 2*5120*5120 + k,v 2*5120*1024 = 62,914,560; one expert 3*5120*8192 = 125,829,120;
    # router 5120*E; embeddings in and out 2*202048*5120 = 2,068,971,520.
    attn, expert, embed = 62_914_560, 125_829_120, 2_068_971_520
    # Scout: 48 MoE layers of 16 routed + 1 shared experts = 107,769,364,480 (Meta: 109B total, which counts
    # the vision encoder and projector too); active: 1 routed + 1 shared = 17,172,398,080 (Meta: 17B).
    scout_total = 48 * (attn + 17 * expert + 5120 * 16) + embed
    scout_active = 48 * (attn + 2 * expert + 5120 * 16) + embed
    assert (scout_total, scout_active) == (107_769_364_480, 17_172_398_080)
    assert _approx_params(_models()["llama-4-scout"]) == (scout_total, scout_active)
    # Maverick: 24 dense layers (SwiGLU 3*5120*16384 = 251,658,240) + 24 MoE layers of 128 routed + 1 shared
    # = 400,711,352,320 (Meta: ~400B); active 17,184,194,560 (Meta: 17B).
    maverick_total = 48 * attn + 24 * 251_658_240 + 24 * (129 * expert + 5120 * 128) + embed
    maverick_active = 48 * attn + 24 * 251_658_240 + 24 * (2 * expert + 5120 * 128) + embed
    assert (maverick_total, maverick_active) == (400_711_352_320, 17_184_194_560)
    assert _approx_params(_models()["llama-4-maverick"]) == (maverick_total, maverick_active)


def test_cli_lists_the_new_rows(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from costmodel.cli import main

    assert main(["hardware", "list", "--json"]) == 0
    hardware = {row["id"] for row in json.loads(capsys.readouterr().out)["hardware"]}
    assert {"h200-nvl", "mi355x", "rtx-pro-6000"} <= hardware
    assert main(["models", "list", "--json"]) == 0
    models = {row["id"] for row in json.loads(capsys.readouterr().out)["models"]}
    assert {"llama-4-scout", "llama-4-maverick"} <= models


def test_catalog_doc_lists_every_row_with_its_figures() -> None:
    # docs/catalog.md is the buyer's summary of the YAML: every accelerator appears with its memory and dense
    # bf16 peak as the YAML has them, and every model id appears.
    doc = (CATALOG_DIR.parent.parent / "docs" / "catalog.md").read_text(encoding="utf-8")
    lines = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| `")}
    for hw_id, spec in _accelerators().items():
        line = lines.get(f"`{hw_id}`")
        assert line is not None, f"docs/catalog.md has no row for {hw_id}"
        assert f"| {spec.memory_bytes / 2**30:g} GiB |" in line, hw_id
        assert f"| {spec.peak_flops_per_s['bf16'] / 1e12:,.1f} |" in line, hw_id
    assert set(_models()) <= set(key.strip("`") for key in lines)


def test_new_rows_run_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from costmodel.cli import main

    # Llama 4 Maverick in fp8 on 4 MI355X: the 400,711,352,320 weights written out above plus the RMSNorm
    # weights (2 per layer + final: 97 * 5120 = 496,640) at 1 B, except the embedding table and the untied
    # lm_head (202,048 x 5,120 each), which fp8 checkpoints keep at 2 B (dtypes.HEAD_KEPT_16_BIT): one more
    # byte for each of those 2 * 1,034,485,760 weights.
    argv = ["estimate", "--model", "llama-4-maverick", "--hardware", "mi355x", "--gpus", "4", "--weight-dtype", "fp8",
            "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights_bytes"] == 400_711_352_320 + 97 * 5120 + 2 * 202_048 * 5_120 and out["fits"] is True
    assert out["kv_bytes_per_token"] == 2 * 48 * 8 * 128 * 2
    # fp4 weights and KV run on the two new fp4 rows (MXFP4 on CDNA 4, NVFP4 on Blackwell)...
    for hw_id in ("mi355x", "rtx-pro-6000"):
        argv = ["estimate", "--model", "llama-4-scout", "--hardware", hw_id, "--gpus", "2", "--weight-dtype", "fp4",
                "--kv-dtype", "fp4", "--json"]
        assert main(argv) == 0, hw_id
        assert json.loads(capsys.readouterr().out)["weight_dtype"] == "fp4"
    # ...and exit 2 on the H200 NVL, which has none.
    argv = ["estimate", "--model", "llama-4-scout", "--hardware", "h200-nvl", "--gpus", "2", "--weight-dtype", "fp4"]
    assert main(argv) == 2
    assert "('h200-nvl'): --weight-dtype fp4 needs fp4 tensor cores" in capsys.readouterr().err
