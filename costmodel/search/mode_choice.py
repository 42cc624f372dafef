"""Serving modes as a search dimension: which modes a configuration may run, and where they apply.

A searched configuration runs aggregated and tensor parallel (the plain search, `mode` None) unless the scenario's
`search.modes` names more (`costmodel search --modes`); then, where each applies:
- `speculative`: the model has a bundled published acceptance row (catalog/speculative.yaml: DeepSeek's MTP), each
  of its draft-token counts, aggregated or disaggregated;
- `disaggregated`: xPyD pools of the configuration's tensor-parallel size g, for x, y in DISAGGREGATED_RATIOS
  with (x + y) g <= MAX_MODE_GPUS; the model is MoE or needs a whole node (g = 8), the deployments the published
  disaggregated results run (SGLang and Dynamo on DeepSeek, Mooncake on Kimi/DeepSeek);
- `expert-parallel`: an MoE model as DP attention + EP ("DEP") over 8, 16 or 32 GPUs (1, 2 or 4 nodes, the
  cross-node part over the catalog's per-GPU NICs).
Modes run under the engines that ship them (`MODE_ENGINES`: SGLang, vLLM and TensorRT-LLM all offer PD
disaggregation, DeepSeek MTP and DP attention + EP); not searched: DEP pools inside a disaggregated deployment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.catalog.speculative import speculation_rows

SearchMode = Literal["disaggregated", "speculative", "expert-parallel"]
SEARCH_MODES: tuple[SearchMode, ...] = ("disaggregated", "speculative", "expert-parallel")
MODE_ENGINES = frozenset({"sglang", "vllm", "trtllm"})
DISAGGREGATED_RATIOS: tuple[tuple[int, int], ...] = ((1, 1), (1, 2), (2, 1))
DEP_SIZES: tuple[int, ...] = (8, 16, 32)
MAX_MODE_GPUS = 32  # four 8-GPU nodes
MAX_DEP_NODES = 4


@dataclass(frozen=True, kw_only=True)
class ModeChoice:
    """One serving mode of a searched configuration (hashable: it is part of the capacity key)."""

    parallelism: Literal["tp", "dep"] = "tp"
    speculation_method: Literal["mtp"] | None = None
    draft_tokens: int = 0
    prefill_instances: int = 0  # 0: aggregated
    decode_instances: int = 0
    pool_gpus: int = 0  # GPUs per prefill and per decode instance (disaggregated)

    @property
    def disaggregated(self) -> bool:
        return self.prefill_instances > 0

    @property
    def kind(self) -> str:
        """'aggregated' or 'disaggregated' (the `mode` key of a search row)."""
        return "disaggregated" if self.disaggregated else "aggregated"

    @property
    def layout(self) -> str | None:
        """'1P(8)2D(8)' for a disaggregated deployment, 'DEP16'-style for expert parallelism, else None."""
        if self.disaggregated:
            return f"{self.prefill_instances}P({self.pool_gpus}){self.decode_instances}D({self.pool_gpus})"
        return None

    def label(self, *, gpus: int) -> str:
        """'disaggregated 1P(8)1D(8) + mtp1', 'DEP16', 'tp8 + mtp2' (for people and option names)."""
        if self.disaggregated:
            base = f"disaggregated {self.layout}"
        else:
            base = f"DEP{gpus}" if self.parallelism == "dep" else f"tp{gpus}"
        return base + (f" + {self.speculation_method}{self.draft_tokens}" if self.speculation_method else "")

    def slug(self, *, gpus: int) -> str:
        """The label as an option-name suffix: 'pd1p1d-g8-mtp1', 'dep16', 'mtp2'."""
        parts = []
        if self.disaggregated:
            parts.append(f"pd{self.prefill_instances}p{self.decode_instances}d-g{self.pool_gpus}")
        if self.parallelism == "dep":
            parts.append(f"dep{gpus}")
        if self.speculation_method:
            parts.append(f"{self.speculation_method}{self.draft_tokens}")
        return "-".join(parts)


def draft_token_counts(model_id: str) -> tuple[int, ...]:
    """Draft-token counts with a bundled published MTP acceptance row for the model (none: not searched)."""
    rows = speculation_rows()
    return tuple(sorted({len(r.acceptance_rates) for r in rows if model_id in r.models and r.method == "mtp"}))


def _speculations(model_id: str, modes: frozenset[str]) -> tuple[tuple[Literal["mtp"] | None, int], ...]:
    plain: tuple[tuple[Literal["mtp"] | None, int], ...] = ((None, 0),)
    if "speculative" not in modes:
        return plain
    return plain + tuple(("mtp", k) for k in draft_token_counts(model_id))


def mode_choices(*, model_id: str, shape: ModelShape, hardware: AcceleratorSpec, tp_gpus: int, engine: str,
                 modes: frozenset[str]) -> tuple[tuple[int, ModeChoice], ...]:
    """(deployment GPUs, mode) pairs the search adds for one configuration of `tp_gpus` GPUs (module docstring);
    empty where none applies."""
    if not modes or engine not in MODE_ENGINES:
        return ()
    specs = _speculations(model_id, modes)
    out: list[tuple[int, ModeChoice]] = [(tp_gpus, ModeChoice(speculation_method=m, draft_tokens=k))
                                         for m, k in specs if m is not None]
    big = shape.moe_layers > 0 or tp_gpus >= 8
    if "disaggregated" in modes and big:
        out += [((x + y) * tp_gpus, ModeChoice(speculation_method=m, draft_tokens=k, prefill_instances=x,
                                               decode_instances=y, pool_gpus=tp_gpus))
                for x, y in DISAGGREGATED_RATIOS if (x + y) * tp_gpus <= MAX_MODE_GPUS for m, k in specs]
    return tuple(out)


def dep_choices(*, model_id: str, shape: ModelShape, hardware: AcceleratorSpec, engine: str,
                modes: frozenset[str]) -> tuple[tuple[int, ModeChoice], ...]:
    """(GPUs, mode) pairs of the DEP layouts the search adds for one model and accelerator (none for dense models,
    or past one node without a cited inter-node bandwidth)."""
    if "expert-parallel" not in modes or engine not in MODE_ENGINES or shape.moe_layers == 0:
        return ()
    per_node = hardware.gpus_per_node or 8
    sizes = [n for n in DEP_SIZES if n <= per_node * MAX_DEP_NODES
             and (n <= per_node or hardware.inter_node_bytes_per_s is not None)]
    return tuple((n, ModeChoice(parallelism="dep", speculation_method=m, draft_tokens=k))
                 for n in sizes for m, k in _speculations(model_id, modes))
