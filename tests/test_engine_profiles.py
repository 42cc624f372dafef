"""Engine profiles (catalog/engines/*.yaml): every value is sourced, `generic` is today's simulator, the
engine values match the code they cite, and bad files fail with a message naming the field.

Engine values below are the defaults read from each engine's source at the commit in its `sources` entry:
vLLM arg_utils.py @99d7eb5 (OpenAI server, >= 70 GiB GPU: max_num_seqs 1024, max_num_batched_tokens
8192), vllm/config/vllm.py @09f030e (CUDA graphs to min(1024 * 2, 512) = 512); SGLang memory_hook.py
@a82da8d (H100/H200, TP < 4: chunked_prefill_size 8192, decode max_bs 256), fields/schedule.py @144437f
(enable_mixed_chunk False, max_running_requests None); TensorRT-LLM serve.py @4c05a74
(GUARANTEED_NO_EVICT, enable_chunked_prefill False).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
import yaml

from costmodel.catalog.engines import (
    ENGINES_DIR,
    VALUE_FIELDS,
    EngineProfile,
    engine_ids,
    engines,
    load_engine,
    parse_engine_file,
)
from costmodel.errors import CostmodelError
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.serving import simulation
from costmodel.serving.replica import MAX_NUM_SEQS

EXPECTED_IDS = ("generic", "naive", "sglang", "trtllm", "vllm")


def _raw(engine_id: str) -> dict[str, Any]:
    data = yaml.safe_load((ENGINES_DIR / f"{engine_id}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_bundled_profiles_load_by_exact_id() -> None:
    assert engine_ids() == EXPECTED_IDS
    for engine_id in EXPECTED_IDS:
        assert load_engine(engine_id).id == engine_id


def test_unknown_engine_suggests_the_closest_id() -> None:
    with pytest.raises(CostmodelError, match="unknown engine 'vlm'; did you mean 'vllm'"):
        load_engine("vlm")


def test_every_value_has_a_source_and_cited_sources_have_urls() -> None:
    for profile in engines().values():
        assert set(profile.sources) == set(VALUE_FIELDS), profile.id
        for field, source in profile.sources.items():
            assert source.note.strip(), (profile.id, field)
            if source.basis in ("engine-code", "engine-docs", "measurement"):
                assert source.url is not None and source.url.startswith("https://"), (profile.id, field)
            if source.basis == "engine-code":
                assert source.version is not None and len(source.version) == 40, (profile.id, field)
                assert source.version in (source.url or ""), (profile.id, field)


def test_engine_profiles_cite_their_own_engine() -> None:
    # A value read from code must come from that engine's repository, not another engine's.
    repos = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang", "trtllm": "NVIDIA/TensorRT-LLM"}
    for engine_id, repo in repos.items():
        for field, source in load_engine(engine_id).sources.items():
            if source.basis == "engine-code":
                assert f"github.com/{repo}/blob/" in (source.url or ""), (engine_id, field)


def test_overheads_without_a_public_measurement_keep_the_generic_defaults() -> None:
    generic = load_engine("generic")
    for profile in engines().values():
        for field in ("request_overhead_seconds", "step_overhead_seconds", "step_overhead_seconds_per_sequence",
                      "tp_comm_overlap_fraction"):
            if profile.sources[field].basis == "generic-default":
                assert getattr(profile, field) == getattr(generic, field), (profile.id, field)


def test_generic_profile_is_todays_simulator() -> None:
    generic = load_engine("generic")
    sim_defaults = inspect.signature(simulation.simulate).parameters
    assert generic.max_num_seqs == MAX_NUM_SEQS == sim_defaults["max_num_seqs"].default == 256
    assert generic.max_num_batched_tokens == MAX_BATCHED_TOKENS == 8192
    assert generic.kv_policy == sim_defaults["kv_policy"].default == "preempt"
    assert (generic.continuous_batching, generic.paged_kv, generic.chunked_prefill, generic.mixed_prefill_decode) == (
        True, True, True, True,
    )  # fmt: skip
    assert generic.request_overhead_seconds == 0.0
    assert generic.tp_comm_overlap_fraction == 0.0
    assert generic.streaming_tokens_per_chunk == 1
    # Per-step overhead: the accelerator's own (H100 row: 4e-4 s), whatever the batch.
    assert generic.step_overhead_for(accelerator_overhead_seconds=4e-4, running_sequences=256) == 4e-4
    # No overlap: a 1.5 ms all-reduce stays 1.5 ms on the step.
    assert generic.visible_comm_seconds(allreduce_seconds=1.5e-3) == 1.5e-3


def test_overlap_and_per_sequence_overhead_arithmetic() -> None:
    base = load_engine("generic").model_dump()
    profile = EngineProfile.model_validate(
        base | {"id": "x", "tp_comm_overlap_fraction": 0.75, "step_overhead_seconds": 2e-4,
                "step_overhead_seconds_per_sequence": 1e-6}
    )  # fmt: skip
    # 2e-4 + 1e-6 * 100 = 3e-4 s; a 2 ms all-reduce with 75% hidden leaves 0.5 ms.
    assert profile.step_overhead_for(accelerator_overhead_seconds=4e-4, running_sequences=100) == pytest.approx(3e-4)
    assert profile.visible_comm_seconds(allreduce_seconds=2e-3) == pytest.approx(5e-4)


def test_engine_values_match_the_code_they_cite() -> None:
    vllm, sglang, trtllm = load_engine("vllm"), load_engine("sglang"), load_engine("trtllm")
    assert (vllm.max_num_seqs, vllm.max_num_batched_tokens) == (1024, 8192)
    assert vllm.cuda_graph_max_batch == min(1024 * 1 * 2, 512)
    assert vllm.chunked_prefill and vllm.mixed_prefill_decode and vllm.kv_policy == "preempt"
    assert sglang.max_num_seqs is None and sglang.max_num_batched_tokens == 8192
    assert sglang.chunked_prefill and not sglang.mixed_prefill_decode
    assert sglang.cuda_graph_max_batch == 256
    assert trtllm.kv_policy == "reserve" and not trtllm.chunked_prefill and trtllm.mixed_prefill_decode
    assert all(p.streaming_tokens_per_chunk == 1 for p in (vllm, sglang, trtllm))


def test_naive_profile_has_no_continuous_batching_and_no_paged_kv() -> None:
    naive = load_engine("naive")
    assert not naive.continuous_batching and not naive.paged_kv
    assert not naive.chunked_prefill and not naive.mixed_prefill_decode
    assert naive.max_num_seqs == 1 and naive.max_num_batched_tokens is None
    assert naive.kv_policy == "reserve" and naive.cuda_graph_max_batch is None


def _write(tmp_path: Path, data: dict[str, Any], name: str = "x") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_value_without_a_source_is_refused(tmp_path: Path) -> None:
    data = _raw("vllm") | {"id": "x"}
    del data["sources"]["cuda_graph_max_batch"]
    with pytest.raises(CostmodelError, match=r"sources has no entry for \['cuda_graph_max_batch'\]"):
        parse_engine_file(_write(tmp_path, data))


def test_engine_code_source_needs_a_commit(tmp_path: Path) -> None:
    data = _raw("vllm") | {"id": "x"}
    del data["sources"]["max_num_seqs"]["version"]
    with pytest.raises(CostmodelError, match="sources.max_num_seqs.*needs the commit"):
        parse_engine_file(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tp_comm_overlap_fraction", 1.5, "tp_comm_overlap_fraction"),
        ("request_overhead_seconds", -0.01, "request_overhead_seconds"),
        ("request_overhead_seconds", float("nan"), "request_overhead_seconds"),
        ("step_overhead_seconds", float("inf"), "step_overhead_seconds"),
        ("max_num_seqs", 0, "max_num_seqs"),
        ("streaming_tokens_per_chunk", 0, "streaming_tokens_per_chunk"),
        ("kv_policy", "evict", "kv_policy"),
        ("max_num_seqs", 9000, "exceeds max_num_batched_tokens"),
    ],
)
def test_bad_values_name_the_field(tmp_path: Path, field: str, value: object, message: str) -> None:
    data = _raw("vllm") | {"id": "x", field: value}
    with pytest.raises(CostmodelError, match=message):
        parse_engine_file(_write(tmp_path, data))


def test_inconsistent_scheduler_flags_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CostmodelError, match="without continuous_batching"):
        parse_engine_file(_write(tmp_path, _raw("vllm") | {"id": "x", "continuous_batching": False}))
    with pytest.raises(CostmodelError, match="chunked_prefill needs a max_num_batched_tokens"):
        parse_engine_file(_write(tmp_path, _raw("vllm") | {"id": "x", "max_num_batched_tokens": None}))


def test_file_name_must_match_id_and_unknown_fields_fail(tmp_path: Path) -> None:
    with pytest.raises(CostmodelError, match="field 'id' is 'vllm' but the file is named 'other.yaml'"):
        parse_engine_file(_write(tmp_path, _raw("vllm"), name="other"))
    with pytest.raises(CostmodelError, match="gpu_util"):
        parse_engine_file(_write(tmp_path, _raw("vllm") | {"id": "x", "gpu_util": 0.9}))


def test_missing_generic_profile_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, _raw("vllm"), name="vllm")
    monkeypatch.setattr(importlib.import_module("costmodel.catalog.engines"), "ENGINES_DIR", tmp_path)
    engines.cache_clear()
    engine_ids.cache_clear()  # the ids are the folder's file names, listed once
    try:
        with pytest.raises(CostmodelError, match="'generic' profile is missing"):
            engines()
    finally:
        engines.cache_clear()
        engine_ids.cache_clear()
