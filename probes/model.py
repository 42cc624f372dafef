"""A Llama-style decoder built from a catalog model's shapes, with random weights, for timing only.

RMSNorm, RoPE, GQA attention through `scaled_dot_product_attention` over a static preallocated KV
cache, SwiGLU MLPs, and top-k routed experts where the catalog model has them. Flat like gpt-fast's
model.py (pytorch-labs/gpt-fast). Weight values do not change the timing, so they are random.

Shapes: B batch, T new tokens, C tokens already cached, H query heads, G KV heads, D head dim,
d hidden, I MLP width, V vocab, E experts, K experts per token.
Only the last position of each sequence goes through the lm_head (engines skip the rest in prefill),
as costmodel.roofline assumes. Sliding-window layers attend to the last `sliding_window` tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from costmodel.catalog.schema import ModelSpec
from costmodel.errors import CostmodelError

ROPE_BASE = 500_000.0  # Llama 3's rope_theta; the value only changes the numbers, not the time


@dataclass(frozen=True)
class ProbeModelConfig:
    """The shapes the probe builds: a catalog model, possibly cut to its first `layers` layers."""

    model_id: str
    layers: int
    layers_total: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tie_embeddings: bool
    experts: int
    experts_per_token: int
    moe_intermediate: int
    shared_experts: int
    first_dense_layers: int
    sliding_window: int  # 0: every layer attends to the whole context
    sliding_layers: tuple[bool, ...]  # per probed layer

    @classmethod
    def from_spec(cls, spec: ModelSpec, *, layers: int | None = None) -> ProbeModelConfig:
        """Shapes of `spec`; `layers` keeps the first N layers (a slice when the model does not fit)."""
        if spec.is_mla:
            raise CostmodelError(
                f"--model {spec.id}: multi-head latent attention (MLA) is not in the probe's Llama-style "
                "decoder; probe a GQA model of similar size instead"
            )
        kept = spec.num_hidden_layers if layers is None else layers
        if not 1 <= kept <= spec.num_hidden_layers:
            raise CostmodelError(f"--layers must be between 1 and {spec.num_hidden_layers} for {spec.id} (got {kept})")
        if spec.layer_types:
            sliding = tuple(kind == "sliding_attention" for kind in spec.layer_types[:kept])
        else:
            sliding = tuple(bool(spec.sliding_window) for _ in range(kept))  # Mistral v0.1: every layer
        return cls(
            model_id=spec.id,
            layers=kept,
            layers_total=spec.num_hidden_layers,
            hidden=spec.hidden_size,
            heads=spec.num_attention_heads,
            kv_heads=spec.kv_heads,
            head_dim=spec.head_dim_resolved,
            intermediate=spec.intermediate_size,
            vocab=spec.vocab_size,
            tie_embeddings=spec.tie_word_embeddings,
            experts=spec.experts,
            experts_per_token=spec.num_experts_per_tok or 0,
            moe_intermediate=spec.moe_intermediate_size or spec.intermediate_size,
            shared_experts=spec.n_shared_experts or 0,
            first_dense_layers=min(spec.first_k_dense_replace or 0, kept),
            sliding_window=spec.sliding_window or 0,
            sliding_layers=sliding,
        )


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(*, positions: int, head_dim: int, device: torch.device) -> tuple[Tensor, Tensor]:
    """cos, sin of shape [positions, head_dim/2] (float32)."""
    inv_freq = 1.0 / ROPE_BASE ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim)
    angles = torch.outer(torch.arange(positions, device=device).float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate-half RoPE (HF Llama layout); x [B, T, heads, D], cos/sin [T, D/2]."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).type_as(x)


class Attention(nn.Module):
    def __init__(self, cfg: ProbeModelConfig, *, window: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.window = cfg.heads, cfg.kv_heads, cfg.head_dim, window
        q_dim, kv_dim = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
        self.wqkv = nn.Linear(cfg.hidden, q_dim + 2 * kv_dim, bias=False)  # fused, as gpt-fast
        self.wo = nn.Linear(q_dim, cfg.hidden, bias=False)
        self.k_cache: Tensor | None = None  # [B, G, max_tokens, D]
        self.v_cache: Tensor | None = None

    def forward(self, x: Tensor, *, start: int, cos: Tensor, sin: Tensor) -> Tensor:
        assert self.k_cache is not None and self.v_cache is not None, "call setup_cache first"
        bsz, new, _ = x.shape
        q_dim, kv_dim = self.heads * self.head_dim, self.kv_heads * self.head_dim
        q, k, v = self.wqkv(x).split([q_dim, kv_dim, kv_dim], dim=-1)
        q = apply_rope(q.view(bsz, new, self.heads, self.head_dim), cos, sin).transpose(1, 2)
        k = apply_rope(k.view(bsz, new, self.kv_heads, self.head_dim), cos, sin).transpose(1, 2)
        end = start + new
        self.k_cache[:bsz, :, start:end] = k
        self.v_cache[:bsz, :, start:end] = v.view(bsz, new, self.kv_heads, self.head_dim).transpose(1, 2)
        # Read only the cached prefix (C + T keys), as the roofline counts, not the whole static cache.
        first = max(0, end - self.window - new + 1) if self.window else 0
        keys, values = self.k_cache[:bsz, :, first:end], self.v_cache[:bsz, :, first:end]
        mask, causal = None, new > 1 and start == 0 and not self.window  # prefill: the flash kernel's causal path
        if new > 1 and not causal:  # causal and windowed mask over absolute positions
            q_pos = torch.arange(start, end, device=x.device)[:, None]
            k_pos = torch.arange(first, end, device=x.device)[None, :]
            mask = (k_pos <= q_pos) & (k_pos > q_pos - self.window) if self.window else k_pos <= q_pos
        out = F.scaled_dot_product_attention(
            q, keys, values, attn_mask=mask, is_causal=causal, enable_gqa=self.heads != self.kv_heads
        )
        return self.wo(out.transpose(1, 2).reshape(bsz, new, q_dim))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, dim: int, width: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, width, bias=False)
        self.w3 = nn.Linear(dim, width, bias=False)
        self.w2 = nn.Linear(width, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Top-k routed SwiGLU experts (Mixtral style) plus optional shared experts (DeepSeek style)."""

    def __init__(self, cfg: ProbeModelConfig) -> None:
        super().__init__()
        self.top_k = cfg.experts_per_token
        self.router = nn.Linear(cfg.hidden, cfg.experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(cfg.hidden, cfg.moe_intermediate) for _ in range(cfg.experts))
        width = cfg.shared_experts * cfg.moe_intermediate
        self.shared = FeedForward(cfg.hidden, width) if width else None

    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])  # [B*T, d]
        weights, chosen = torch.topk(self.router(flat), self.top_k, dim=-1)  # [B*T, K]
        weights = weights.softmax(dim=-1).type_as(x)
        out = self.shared(flat) if self.shared is not None else torch.zeros_like(flat)
        # Only the experts some token chose run (and read their weights), as the roofline assumes.
        for expert_id in chosen.unique().tolist():
            rows, slot = (chosen == expert_id).nonzero(as_tuple=True)
            out.index_add_(0, rows, self.experts[expert_id](flat[rows]) * weights[rows, slot, None])
        return out.view_as(x)


class Block(nn.Module):
    def __init__(self, cfg: ProbeModelConfig, *, sliding: bool, moe: bool) -> None:
        super().__init__()
        self.attention_norm, self.ffn_norm = RMSNorm(cfg.hidden), RMSNorm(cfg.hidden)
        self.attention = Attention(cfg, window=cfg.sliding_window if sliding else 0)
        self.mlp: nn.Module = MoE(cfg) if moe else FeedForward(cfg.hidden, cfg.intermediate)

    def forward(self, x: Tensor, *, start: int, cos: Tensor, sin: Tensor) -> Tensor:
        h = x + self.attention(self.attention_norm(x), start=start, cos=cos, sin=sin)
        return h + self.mlp(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, cfg: ProbeModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        # A bare parameter, not nn.Embedding: its meta-device normal_ init imports torch._refs (~3 s).
        self.tok_embeddings = nn.Parameter(torch.empty(cfg.vocab, cfg.hidden))
        self.layers = nn.ModuleList(
            Block(cfg, sliding=cfg.sliding_layers[i], moe=cfg.experts > 0 and i >= cfg.first_dense_layers)
            for i in range(cfg.layers)
        )
        self.norm = RMSNorm(cfg.hidden)
        self.output = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.tie_embeddings:
            self.output.weight = self.tok_embeddings
        self.rope_cos: Tensor | None = None
        self.rope_sin: Tensor | None = None

    def attentions(self) -> list[Attention]:
        return [cast(Block, layer).attention for layer in self.layers]

    def setup_cache(self, *, batch: int, max_tokens: int) -> None:
        """Preallocate the static KV cache for `batch` sequences of up to `max_tokens` tokens."""
        param = self.output.weight
        for attn in self.attentions():
            shape = (batch, self.cfg.kv_heads, max_tokens, self.cfg.head_dim)
            attn.k_cache = torch.zeros(shape, dtype=param.dtype, device=param.device)
            attn.v_cache = torch.zeros(shape, dtype=param.dtype, device=param.device)
        self.rope_cos, self.rope_sin = rope_tables(positions=max_tokens, head_dim=self.cfg.head_dim, device=param.device)

    def release_cache(self) -> None:
        for attn in self.attentions():
            attn.k_cache = attn.v_cache = None
        self.rope_cos = self.rope_sin = None

    def forward(self, tokens: Tensor, start: int) -> Tensor:
        """tokens [B, T] at positions start..start+T-1 -> logits of the last position [B, 1, V]."""
        assert self.rope_cos is not None and self.rope_sin is not None, "call setup_cache first"
        new = tokens.shape[1]
        cos, sin = self.rope_cos[start : start + new], self.rope_sin[start : start + new]
        x = F.embedding(tokens, self.tok_embeddings)
        for layer in self.layers:
            x = layer(x, start=start, cos=cos, sin=sin)
        return self.output(self.norm(x[:, -1:, :]))


RANDOM_BLOCK = 1_000_003  # values in the tiled random block; prime, so rows of power-of-two width differ


def build_model(cfg: ProbeModelConfig, *, dtype: torch.dtype, device: torch.device, seed: int = 0) -> Transformer:
    """Allocate the model on `device` without a CPU copy and fill it with N(0, 0.02) weights.

    Large matrices are tiled from one random block (a copy runs ~20x faster than normal_ on a CPU, and
    the values do not change the timing); routers get their own draws so routing stays uniform.
    """
    with torch.device("meta"):
        model = Transformer(cfg).to(dtype)  # meta tensors: no memory, no copy
    model = model.to_empty(device=device)
    if cfg.tie_embeddings:  # to_empty gives the tied pair two tensors; tie them again
        model.output.weight = model.tok_embeddings
    generator = torch.Generator(device=device).manual_seed(seed)
    block = torch.empty(RANDOM_BLOCK, dtype=dtype, device=device).normal_(0.0, 0.02, generator=generator)
    with torch.no_grad():
        for name, param in model.named_parameters():
            flat = param.view(-1)
            if name.endswith("norm.weight"):
                param.fill_(1.0)
            elif "router" in name or flat.numel() <= RANDOM_BLOCK:
                param.normal_(0.0, 0.02, generator=generator)
            else:
                for start in range(0, flat.numel(), RANDOM_BLOCK):
                    chunk = flat[start : start + RANDOM_BLOCK]
                    chunk.copy_(block[: chunk.numel()])
    return model.eval().requires_grad_(False)
