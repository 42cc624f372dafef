"""Derived shapes of a model: parameter counts per op group, KV elements per token, attention FLOPs.

Counts follow the Hugging Face module layout (SwiGLU MLPs have three d x I matrices; MLA follows
DeepSeek-V3's q_a/q_b/kv_a/kv_b/o projections). Biases are left out (< 0.1% of any model here).
Refs: kipply "Transformer Inference Arithmetic"; DeepSeek-V3 technical report (MLA shapes).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.catalog.schema import ModelSpec


@dataclass(frozen=True)
class ModelShape:
    """Numbers the roofline needs, derived once from a ModelSpec. Counts are parameters (not bytes)."""

    model_id: str
    layers: int
    dense_mlp_layers: int
    moe_layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    qkv_params_per_layer: float
    o_params_per_layer: float
    dense_mlp_params_per_layer: float
    expert_params: float  # one routed expert (3 x d x I_moe)
    experts: int
    experts_per_token: int
    shared_expert_params_per_layer: float
    router_params_per_layer: float
    embedding_params: float
    lm_head_params: float  # read every step even when tied to the embedding
    tied_embeddings: bool
    norm_params: float
    kv_elements_per_token_per_layer: float  # 2*g*d_h, or MLA: kv_lora_rank + qk_rope_head_dim
    kv_shardable: bool  # GQA KV splits across tensor-parallel ranks by head; an MLA latent does not
    attn_flops_per_pair_per_layer: float  # FLOPs per (query token, cached token) pair, QK^T and AV
    full_attention_layers: int
    sliding_attention_layers: int
    sliding_window_tokens: int  # 0 when there are no sliding-window layers

    @property
    def total_params(self) -> float:
        """All parameters stored (tied embeddings counted once)."""
        per_layer = self.qkv_params_per_layer + self.o_params_per_layer
        moe = self.experts * self.expert_params + self.shared_expert_params_per_layer + self.router_params_per_layer
        head = 0.0 if self.tied_embeddings else self.lm_head_params
        return (
            self.embedding_params
            + head
            + self.layers * per_layer
            + self.dense_mlp_layers * self.dense_mlp_params_per_layer
            + self.moe_layers * moe
            + self.norm_params
        )

    @property
    def active_params(self) -> float:
        """Parameters used per token (routed experts: only the top-k), embeddings included."""
        routed_unused = self.moe_layers * (self.experts - self.experts_per_token) * self.expert_params
        return self.total_params - routed_unused

    @property
    def active_params_excluding_embedding(self) -> float:
        """Active parameters without the input embedding table (OpenAI's gpt-oss convention)."""
        if self.tied_embeddings:
            return self.active_params  # the table is the lm_head, which every token multiplies through
        return self.active_params - self.embedding_params

    @property
    def weight_params_touched_per_step_dense(self) -> float:
        """Parameters read from HBM by one step when every expert is touched; no input embedding table."""
        return self.total_params - self.embedding_params + (self.lm_head_params if self.tied_embeddings else 0.0)


def _attention_params(spec: ModelSpec) -> tuple[float, float, float, float]:
    """(qkv params, o params, KV elements per token per layer, attention FLOPs per pair) for one layer."""
    d = spec.hidden_size
    h = spec.num_attention_heads
    if spec.is_mla:
        assert spec.kv_lora_rank and spec.qk_rope_head_dim and spec.qk_nope_head_dim and spec.v_head_dim
        qk_dim = spec.qk_nope_head_dim + spec.qk_rope_head_dim
        # q through a low-rank bottleneck when q_lora_rank is set (V3), else one d x h*qk_dim matrix.
        q = spec.q_lora_rank * (d + h * qk_dim) if spec.q_lora_rank else d * h * qk_dim
        kv_a = d * (spec.kv_lora_rank + spec.qk_rope_head_dim)
        kv_b = spec.kv_lora_rank * h * (spec.qk_nope_head_dim + spec.v_head_dim)
        o = h * spec.v_head_dim * d
        kv_elems = spec.kv_lora_rank + spec.qk_rope_head_dim
        # Absorbed MLA decode: scores over the (latent + rope) dim, values over the latent dim.
        flops_pair = 2.0 * h * (spec.kv_lora_rank + spec.qk_rope_head_dim) + 2.0 * h * spec.kv_lora_rank
        return float(q + kv_a + kv_b), float(o), float(kv_elems), flops_pair
    g = spec.kv_heads
    dh = spec.head_dim_resolved
    qkv = d * h * dh + 2 * d * g * dh
    o = h * dh * d
    # QK^T: 2*h*d_h FLOPs per pair; AV: another 2*h*d_h.
    return float(qkv), float(o), float(2 * g * dh), 4.0 * h * dh


def derive_shape(spec: ModelSpec) -> ModelShape:
    """Compute per-op parameter counts and attention constants from HF-shaped fields."""
    d = spec.hidden_size
    layers = spec.num_hidden_layers
    qkv, o, kv_elems, flops_pair = _attention_params(spec)
    moe_layers = 0
    if spec.is_moe:
        moe_layers = layers - (spec.first_k_dense_replace or 0)
    moe_width = spec.moe_intermediate_size or spec.intermediate_size
    expert = 3.0 * d * moe_width
    sliding = spec.layer_types.count("sliding_attention") if spec.layer_types else 0
    if spec.sliding_window and not spec.layer_types:
        sliding = layers  # Mistral v0.1 style: every layer uses the window
    return ModelShape(
        model_id=spec.id,
        layers=layers,
        dense_mlp_layers=layers - moe_layers,
        moe_layers=moe_layers,
        hidden=d,
        heads=spec.num_attention_heads,
        kv_heads=spec.kv_heads,
        head_dim=spec.head_dim_resolved,
        vocab=spec.vocab_size,
        qkv_params_per_layer=qkv,
        o_params_per_layer=o,
        dense_mlp_params_per_layer=3.0 * d * spec.intermediate_size,
        expert_params=expert if spec.is_moe else 0.0,
        experts=spec.experts,
        experts_per_token=spec.num_experts_per_tok or 0,
        shared_expert_params_per_layer=(spec.n_shared_experts or 0) * expert,
        router_params_per_layer=float(d * spec.experts),
        embedding_params=float(spec.vocab_size * d),
        lm_head_params=float(spec.vocab_size * d),
        tied_embeddings=spec.tie_word_embeddings,
        norm_params=float(2 * d * layers + d),
        kv_elements_per_token_per_layer=kv_elems,
        kv_shardable=not spec.is_mla,
        attn_flops_per_pair_per_layer=flops_pair,
        full_attention_layers=layers - sliding,
        sliding_attention_layers=sliding,
        sliding_window_tokens=(spec.sliding_window or 0) if sliding else 0,
    )
