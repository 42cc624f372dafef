"""The probe's torch decoder: shapes from the catalog, KV cache consistency, sliding window, MoE, slices."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from costmodel.catalog.loader import load_model
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import ModelSpec
from costmodel.errors import CostmodelError
from probes.model import ProbeModelConfig, build_model

CPU = torch.device("cpu")


def _tiny_spec(**update: object) -> ModelSpec:
    return load_model("tiny-test").model_copy(update=update)


def _prefill_vs_decode(cfg: ProbeModelConfig, *, prompt: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits of the last prompt token two ways: one prefill, or a prefill of prompt-1 then one decode."""
    model = build_model(cfg, dtype=torch.float32, device=CPU, seed=1)
    tokens = torch.randint(0, cfg.vocab, (2, prompt), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        model.setup_cache(batch=2, max_tokens=prompt)
        whole = model(tokens, 0)
        model.setup_cache(batch=2, max_tokens=prompt)
        model(tokens[:, :-1], 0)
        stepped = model(tokens[:, -1:], prompt - 1)
    return whole, stepped


def test_parameter_count_matches_the_catalog_shape() -> None:
    spec = load_model("tiny-test")
    model = build_model(ProbeModelConfig.from_spec(spec), dtype=torch.float32, device=CPU)
    # Our decoder has no biases and the same matrices as the HF layout, so counts match exactly.
    assert sum(p.numel() for p in model.parameters()) == derive_shape(spec).total_params


def test_tied_embeddings_share_one_tensor() -> None:
    cfg = ProbeModelConfig.from_spec(_tiny_spec(tie_word_embeddings=True), layers=1)
    model = build_model(cfg, dtype=torch.float32, device=CPU)
    assert model.output.weight is model.tok_embeddings


def test_decode_with_kv_cache_matches_full_prefill() -> None:
    whole, stepped = _prefill_vs_decode(ProbeModelConfig.from_spec(load_model("tiny-test")), prompt=9)
    assert whole.shape == (2, 1, 4096)
    torch.testing.assert_close(stepped, whole, rtol=1e-4, atol=1e-5)


def test_sliding_window_decode_matches_windowed_prefill() -> None:
    # Window 4 < prompt 9: the decode step must read only the last 4 keys, as the prefill mask allows.
    cfg = ProbeModelConfig.from_spec(_tiny_spec(sliding_window=4))
    assert all(cfg.sliding_layers)
    whole, stepped = _prefill_vs_decode(cfg, prompt=9)
    torch.testing.assert_close(stepped, whole, rtol=1e-4, atol=1e-5)
    no_window, _ = _prefill_vs_decode(ProbeModelConfig.from_spec(load_model("tiny-test")), prompt=9)
    assert not torch.allclose(no_window, whole, rtol=1e-4, atol=1e-5)


def test_moe_layers_route_top_k_and_match_between_prefill_and_decode() -> None:
    cfg = ProbeModelConfig.from_spec(_tiny_spec(num_local_experts=4, num_experts_per_tok=2))
    model = build_model(cfg, dtype=torch.float32, device=CPU)
    assert len(model.layers[0].mlp.experts) == 4
    whole, stepped = _prefill_vs_decode(cfg, prompt=6)
    torch.testing.assert_close(stepped, whole, rtol=1e-4, atol=1e-5)


def test_slice_keeps_the_first_layers_and_their_kinds() -> None:
    spec = load_model("gpt-oss-20b")
    cfg = ProbeModelConfig.from_spec(spec, layers=3)
    assert (cfg.layers, cfg.layers_total) == (3, 24)
    assert cfg.sliding_layers == (True, False, True)  # gpt-oss alternates sliding / full
    assert cfg.experts == 32 and cfg.experts_per_token == 4


def test_mla_models_and_bad_slices_are_user_errors() -> None:
    with pytest.raises(CostmodelError, match="MLA"):
        ProbeModelConfig.from_spec(load_model("deepseek-v3"))
    with pytest.raises(CostmodelError, match="--layers"):
        ProbeModelConfig.from_spec(load_model("tiny-test"), layers=5)
