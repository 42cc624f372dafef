"""Pydantic schemas for catalog rows: models (shaped like Hugging Face config.json) and accelerators.

Every row carries `source` (where the numbers come from) and `checked` (when someone last looked).
Units are SI base units: bytes, bytes/s, FLOP/s, seconds, watts.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from costmodel.strict import StrictModel
from costmodel.units import printable

if TYPE_CHECKING:
    from costmodel.dtypes import OpPrecision

# Sane bounds on shapes (a config.json is user input): about 16x the largest in the bundled catalog
# (catalog/models/*.yaml: hidden 16,384, 126 layers and 128 heads in llama-3.1-405b, intermediate 53,248,
# head_dim 128, vocab 201,088 in gpt-oss, 256 routed experts in deepseek-v3, q_lora_rank 1,536), rounded up to
# a power of two, so a real new model passes and 1e30 or 2**63 does not. Context lengths get far more room
# (the catalog's longest is deepseek-v3's 163,840): 2**27 = 134M tokens.
MAX_HIDDEN_SIZE = 2**18
MAX_LAYERS = 2048
MAX_HEADS = 2048
MAX_HEAD_DIM = 2048
MAX_MLP_WIDTH = 2**20
MAX_VOCAB_SIZE = 2**22
MAX_CONTEXT_TOKENS = 2**27
MAX_EXPERTS = 4096
MAX_LORA_RANK = 2**15
MAX_PARAMS = 1e14  # 100T parameters; deepseek-v3 publishes 671B


def _dim(maximum: int, description: str = "", *, ge: int = 1) -> Any:
    """A required integer shape field in [ge, maximum]; strict, so true/false and 4096.0 are refused."""
    return Field(ge=ge, le=maximum, strict=True, description=description)


def _opt_dim(maximum: int, description: str = "", *, ge: int = 1) -> Any:
    """An optional integer shape field in [ge, maximum] (strict)."""
    return Field(default=None, ge=ge, le=maximum, strict=True, description=description)


class ModelSpec(StrictModel):
    """A decoder-only transformer, with field names as in its Hugging Face `config.json`."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="lower-case catalog id, e.g. llama-3.1-8b")
    name: str = Field(min_length=1, max_length=200, description="display name (printable characters only)")
    hf_repo: str | None = Field(default=None, description="Hugging Face repo the shapes come from")
    source: str = Field(min_length=1, description="URL of the config.json / model card")
    checked: dt.date = Field(description="date the shapes and counts were last checked")
    published_total_params: float | None = Field(default=None, gt=0, le=MAX_PARAMS, description="parameters, as published")
    published_active_params: float | None = Field(
        default=None, gt=0, le=MAX_PARAMS, description="active parameters per token"
    )
    published_counts_exclude_embedding: bool = Field(
        default=False, strict=True, description="the publisher's active count leaves out the input embedding table"
    )

    # Dense transformer shapes (HF names).
    hidden_size: int = _dim(MAX_HIDDEN_SIZE)
    num_hidden_layers: int = _dim(MAX_LAYERS)
    num_attention_heads: int = _dim(MAX_HEADS)
    num_key_value_heads: int | None = _opt_dim(MAX_HEADS, "defaults to num_attention_heads (MHA)")
    head_dim: int | None = _opt_dim(MAX_HEAD_DIM, "defaults to hidden_size / num_attention_heads")
    intermediate_size: int = _dim(MAX_MLP_WIDTH, "dense SwiGLU MLP width")
    vocab_size: int = _dim(MAX_VOCAB_SIZE)
    tie_word_embeddings: bool = Field(default=False, strict=True)
    max_position_embeddings: int | None = _opt_dim(MAX_CONTEXT_TOKENS)
    sliding_window: int | None = _opt_dim(MAX_CONTEXT_TOKENS, "tokens kept by sliding-window layers")
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = Field(
        default=None, description="per-layer attention kind (gpt-oss alternates)"
    )

    # Mixture of experts (Mixtral: num_local_experts; DeepSeek: n_routed_experts).
    num_local_experts: int | None = _opt_dim(MAX_EXPERTS)
    n_routed_experts: int | None = _opt_dim(MAX_EXPERTS)
    num_experts_per_tok: int | None = _opt_dim(MAX_EXPERTS)
    moe_intermediate_size: int | None = _opt_dim(MAX_MLP_WIDTH, "expert MLP width")
    n_shared_experts: int | None = _opt_dim(MAX_EXPERTS, ge=0)
    first_k_dense_replace: int | None = _opt_dim(MAX_LAYERS, "leading dense layers (DeepSeek)", ge=0)

    # Multi-head latent attention (DeepSeek-V2/V3).
    kv_lora_rank: int | None = _opt_dim(MAX_LORA_RANK)
    q_lora_rank: int | None = _opt_dim(MAX_LORA_RANK)
    qk_rope_head_dim: int | None = _opt_dim(MAX_HEAD_DIM)
    qk_nope_head_dim: int | None = _opt_dim(MAX_HEAD_DIM)
    v_head_dim: int | None = _opt_dim(MAX_HEAD_DIM)

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        if printable(value) != value:
            raise ValueError("the name holds control, bidi or other invisible characters; remove them")
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> ModelSpec:
        kv = self.num_key_value_heads or self.num_attention_heads
        if self.head_dim is None and self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); give head_dim or fix one of them"
            )
        if self.num_attention_heads % kv != 0:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({kv}); fix one of them"
            )
        if self.num_local_experts and self.n_routed_experts:
            raise ValueError("give num_local_experts or n_routed_experts, not both")
        experts = self.num_local_experts or self.n_routed_experts
        if experts and not self.num_experts_per_tok:
            raise ValueError("an MoE model needs num_experts_per_tok (experts routed per token)")
        if experts and self.num_experts_per_tok and self.num_experts_per_tok > experts:
            raise ValueError("num_experts_per_tok cannot exceed the number of experts")
        mla = [self.kv_lora_rank, self.qk_rope_head_dim, self.qk_nope_head_dim, self.v_head_dim]
        if any(v is not None for v in mla) and any(v is None for v in mla):
            raise ValueError("MLA needs all of kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim")
        if self.layer_types is not None:
            if len(self.layer_types) != self.num_hidden_layers:
                raise ValueError(
                    f"layer_types has {len(self.layer_types)} entries; it needs one per layer "
                    f"(num_hidden_layers = {self.num_hidden_layers})"
                )
            if "sliding_attention" in self.layer_types and self.sliding_window is None:
                raise ValueError("layer_types names sliding_attention layers but sliding_window is missing")
        if self.first_k_dense_replace and self.first_k_dense_replace > self.num_hidden_layers:
            raise ValueError("first_k_dense_replace cannot exceed num_hidden_layers")
        return self

    @property
    def kv_heads(self) -> int:
        """KV heads g (= query heads for MHA, 1 for MQA)."""
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def head_dim_resolved(self) -> int:
        """Head dimension d_h."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def experts(self) -> int:
        """Routed experts per MoE layer (0 for a dense model)."""
        return self.num_local_experts or self.n_routed_experts or 0

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None


class AcceleratorSpec(StrictModel):
    """One accelerator (per GPU), from its datasheet, with default efficiencies and their reasons."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="lower-case id, e.g. h100-sxm")
    name: str
    vendor: Literal["nvidia", "amd", "intel", "google", "cpu", "other"]
    memory_bytes: float = Field(gt=0, description="HBM/GDDR capacity, bytes")
    hbm_bytes_per_s: float = Field(gt=0, description="peak memory bandwidth, bytes/s")
    peak_flops_per_s: dict[str, float] = Field(
        description="dense (no sparsity) tensor peak per dtype, FLOP/s (int8: OP/s)"
    )
    interconnect_bytes_per_s: float = Field(
        gt=0, description="GPU-to-GPU bandwidth per GPU, one direction, bytes/s (NVLink, Infinity Fabric or PCIe)"
    )
    interconnect: str = Field(description="what the link is, e.g. 'NVLink 4 (18 links)'")
    interconnect_achieved_bytes_per_s: float | None = Field(
        default=None, gt=0, description="data bandwidth per GPU, one direction, that a ring collective reaches on "
        "that link after protocol overhead (bytes/s, <= interconnect_bytes_per_s); None = no cited figure (the line "
        "rate is used)",
    )
    interconnect_achieved_source: str | None = Field(
        default=None, description="URL, date and quoted sentence for interconnect_achieved_bytes_per_s"
    )
    link_latency_seconds: float = Field(ge=0, description="latency of one small all-reduce over that link, s")
    gpus_per_node: int | None = Field(
        default=None, ge=1, le=1024, strict=True,
        description="GPUs that share the intra-node link (8 on an HGX/DGX board); None = not stated (every TP "
        "size priced on the intra-node link)",
    )
    inter_node_bytes_per_s: float | None = Field(
        default=None, gt=0, description="network bandwidth per GPU between nodes, one direction, bytes/s (the NIC "
        "per GPU: InfiniBand or RoCE)",
    )
    inter_node: str | None = Field(default=None, description="what the network is, e.g. '8x ConnectX-7 400 Gb/s'")
    inter_node_latency_seconds: float | None = Field(
        default=None, ge=0, description="latency of one small all-reduce across nodes, s; None = no cited figure "
        "(the intra-node latency is used, a lower bound)",
    )
    inter_node_source: str | None = Field(default=None, description="URL and date of the network figures")
    allreduce_table: str | None = Field(
        default=None, pattern=r"^sm_[0-9a-zA-Z_]+$", description="XLA device key of the measured all-reduce time by "
        "message size inside one node (costmodel/data/xla_allreduce_throughput.csv, costmodel/catalog/allreduce_curve.py), "
        "e.g. 'sm_90'; None = the ring formula (bandwidth + link_latency_seconds)",
    )
    gemm_table: str | None = Field(
        default=None, pattern=r"^sm_[0-9a-zA-Z_]+$", description="XLA device key of the GEMM efficiency fit by shape "
        "(costmodel/data/gemm_efficiency_fit.csv, costmodel/catalog/gemm_efficiency.py), e.g. 'sm_90'; None = the "
        "constant eff_compute",
    )
    fp4_realized_peak_fraction: float | None = Field(
        default=None, gt=0, le=1, description="share of the fp4 peak the fp4 linear layers reach next to the other "
        "formats' (eff_compute applies on top); None = 1, the datasheet ratio",
    )
    fp4_realized_peak_fraction_source: str | None = Field(
        default=None, description="where fp4_realized_peak_fraction comes from: a URL, or 'fitted-public: ...' "
        "naming the script and the reference rows it was fitted on",
    )
    tdp_watts: float = Field(gt=0, description="board power, W")
    eff_compute: float = Field(gt=0, le=1, description="default fraction of peak FLOP/s achieved on large GEMMs")
    eff_memory: float = Field(gt=0, le=1, description="default fraction of peak bytes/s achieved (MBU)")
    overhead_seconds_per_step: float = Field(ge=0, description="default fixed cost per engine step, s")
    efficiency_reason: str = Field(min_length=1, description="why these defaults, with sources")
    source: str = Field(min_length=1, description="datasheet URL")
    checked: dt.date

    @model_validator(mode="after")
    def _needs_bf16(self) -> AcceleratorSpec:
        if "bf16" not in self.peak_flops_per_s:
            raise ValueError("peak_flops_per_s needs a bf16 entry (the default compute dtype)")
        unknown = set(self.peak_flops_per_s) - {"fp32", "bf16", "fp16", "fp8", "int8", "fp4"}
        if unknown:
            raise ValueError(f"peak_flops_per_s has unknown dtype(s) {sorted(unknown)}; use fp32, bf16, fp16, fp8, int8, fp4")
        if any(v <= 0 for v in self.peak_flops_per_s.values()):
            raise ValueError("every peak_flops_per_s value must be > 0 FLOP/s")
        if (self.fp4_realized_peak_fraction is None) != (self.fp4_realized_peak_fraction_source is None):
            raise ValueError("fp4_realized_peak_fraction needs fp4_realized_peak_fraction_source, and back")
        if self.fp4_realized_peak_fraction is not None and "fp4" not in self.peak_flops_per_s:
            raise ValueError("fp4_realized_peak_fraction needs an fp4 entry in peak_flops_per_s")
        achieved = self.interconnect_achieved_bytes_per_s
        if (achieved is None) != (self.interconnect_achieved_source is None):
            raise ValueError("interconnect_achieved_bytes_per_s needs interconnect_achieved_source (cite it), and back")
        if achieved is not None and achieved > self.interconnect_bytes_per_s:
            raise ValueError("interconnect_achieved_bytes_per_s must be <= interconnect_bytes_per_s (the line rate)")
        network = (self.inter_node_bytes_per_s, self.inter_node, self.inter_node_source)
        if any(v is not None for v in network) and (self.gpus_per_node is None or any(v is None for v in network)):
            raise ValueError("inter-node figures need gpus_per_node, inter_node_bytes_per_s, inter_node and "
                             "inter_node_source together (cite the datasheet)")
        return self

    def check_dtypes(self, *, weight_dtype: str, kv_dtype: str = "bf16") -> None:
        """Raise CostmodelError naming this accelerator when it cannot hold these formats (fp4 where the row lists no fp4 peak)."""
        from costmodel.dtypes import unsupported_dtype_reason
        from costmodel.errors import CostmodelError

        reason = unsupported_dtype_reason(weight_dtype=weight_dtype, kv_dtype=kv_dtype, peak_flops_per_s=self.peak_flops_per_s)
        if reason is not None:
            with_fp4 = ", ".join(sorted(self.fp4_hardware_ids())) or "none in the catalog"
            raise CostmodelError(f"{self.name} ('{self.id}'): {reason} (hardware with fp4: {with_fp4})")

    @staticmethod
    def fp4_hardware_ids() -> list[str]:
        """Catalog ids whose datasheet lists an fp4 tensor-core peak."""
        from costmodel.catalog.loader import accelerators

        return [hw_id for hw_id, hw in accelerators().items() if "fp4" in hw.peak_flops_per_s]

    def op_precision(self, *, weight_dtype: str, kv_dtype: str) -> OpPrecision:
        """The format and peak of each op for these weight and KV formats here (raises where fp4 is missing)."""
        from costmodel.catalog.gemm_efficiency import gemm_fit
        from costmodel.dtypes import OpPrecision, compute_dtype

        self.check_dtypes(weight_dtype=weight_dtype, kv_dtype=kv_dtype)
        linear = compute_dtype(weight_dtype=weight_dtype, peak_flops_per_s=self.peak_flops_per_s)
        return OpPrecision.of(peak_flops_per_s=self.peak_flops_per_s, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                              fp4_peak_fraction=self.fp4_realized_peak_fraction or 1.0,
                              gemm=gemm_fit(self.gemm_table, dtype=linear))

    def peak_for(self, weight_dtype: str) -> float:
        """Dense peak FLOP/s of the tensor-core format matmuls run in for this weight dtype."""
        from costmodel.dtypes import compute_dtype

        self.check_dtypes(weight_dtype=weight_dtype)
        return self.peak_flops_per_s[compute_dtype(weight_dtype=weight_dtype, peak_flops_per_s=self.peak_flops_per_s)]
