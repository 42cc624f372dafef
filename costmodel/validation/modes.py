"""Serving modes against published results: MTP speed-ups, disaggregated gains, expert-parallel pool throughput.

Rows live in `costmodel/data/mode_reference_measurements.csv` (mode, the reference columns, and
`not_evaluated`: why a row cannot be predicted, else empty). Each evaluated row is predicted with the catalog's
defaults and the engine's bundled profile, nothing fitted on these rows, and split tuning / held-out by the
same hash of its configuration as every other category (`categories.is_holdout`).

- `decode_speedup` (speculative): `serving.speculative.speedup` (tensor-parallel rows) or `dep_speedup`
  (data-parallel attention + expert parallelism, `costmodel/expert_parallel.py`) at the row's batch per GPU,
  with the bundled acceptance row for the model and the row's draft tokens, at the row's prompt plus half its
  output as the context, or 1,024 cached tokens where the source states no lengths (at those batch sizes the
  step is weight-bound). The SGLang case-study rows are the runs the bundled 2- and 3-draft-token acceptance
  lengths come from, so for them only the cost side is tested; KV is taken as fp8 (no source states it).
- `throughput_per_gpu_gain` (disaggregated): the best disaggregated layout of the row's GPUs over the best
  aggregated one, both as capacity at one SLO (fixed ISL/OSL, Poisson arrivals): aggregated = TP2, TP4 or
  TP8 replicas filling the GPUs; disaggregated = every xPyD of TP2/TP4 instances filling them. The source's
  figure is read off a throughput-vs-interactivity plot with no stated operating point, so the SLO is an
  assumption written here: TTFT p90 <= 2 s and TPOT p90 <= 40 ms (25 tokens/s per user).
- `output_tokens_per_second_per_node` / `input_tokens_per_second_per_node` (expert-parallel): a DEPn pool's
  step at the row's batch per GPU (`expert_parallel.dep_step`, the step the simulator's DEP timer takes, equal to
  1e-9), decode: one token per sequence at the row's KV length; prefill: the row's prompts per GPU from an empty
  cache; per node = 8 GPUs x tokens per GPU per step / step seconds. Evaluated with the engine's profile (SGLang's
  step overhead) and fp8 KV (the sources do not state it).
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from costmodel.catalog.speculative import published_speculation
from costmodel.config import ReplicaConfig
from costmodel.expert_parallel import dep_step
from costmodel.scenario.distributions import FixedTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import build_replica
from costmodel.serving.capacity import CapacitySearch, capacity_for_replica
from costmodel.serving.disaggregated import DisaggregatedLayout, kv_link
from costmodel.serving.disaggregated_capacity import disaggregated_capacity
from costmodel.serving.profile import engine_settings
from costmodel.serving.speculative import Speculation, dep_speedup, speedup
from costmodel.validation.categories import is_holdout
from costmodel.validation.disaggregated_rate import predict_rate_row

MODE_CSV = Path(__file__).resolve().parents[1] / "data" / "mode_reference_measurements.csv"
# Reference strings -> catalog ids. DeepSeek-R1-Distill-Llama-70B is Llama-3.3-70B-Instruct fine-tuned (its
# model card, huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Llama-70B): the same shapes.
MODEL_IDS = {"DeepSeek-V3-0324": "deepseek-v3", "DeepSeek-V3": "deepseek-v3", "DeepSeek-R1-Distill-Llama-70B": "llama-3.3-70b",
             "Qwen3-235B-A22B": "qwen3-235b-a22b", "Llama-3.1-70B-Instruct": "llama-3.1-70b",
             "DeepSeek-R1": "deepseek-r1"}
HARDWARE_IDS = {"H200-SXM-141GB": "h200", "H100-SXM-80GB": "h100-sxm", "MI300X-192GB": "mi300x", "B200": "b200"}
ENGINES = {"SGLang": "sglang", "vLLM": "vllm"}
ASSUMED_CONTEXT_TOKENS = 1024
DISAGG_SLO = (SloLimit("ttft", 90, 2.0), SloLimit("tpot", 90, 0.040))
DISAGG_REQUESTS = 600
INSTANCE_GPUS = (2, 4)
NODE_GPUS = 8  # an HGX/DGX H100 node, as the SGLang rows count per node
DEP_METRICS = ("output_tokens_per_second_per_node", "input_tokens_per_second_per_node")
# disaggregated runs at a stated rate or client count (validation/disaggregated_rate.py)
RATE_METRICS = ("slo_attainment", "goodput_gain", "output_tokens_per_second")


@dataclass(frozen=True)
class ModeRow:
    """One published mode figure with our prediction, or why there is none."""

    mode: str
    label: str
    metric: str
    measured: float
    predicted: float | None
    not_evaluated: str | None
    holdout: bool
    source: str

    @property
    def error(self) -> float | None:
        """Signed relative error (predicted - measured) / measured."""
        return None if self.predicted is None else (self.predicted - self.measured) / self.measured


def read_mode_rows(path: Path = MODE_CSV) -> list[dict[str, str]]:
    """Raw rows of the modes CSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _engine(row: dict[str, str]) -> str:
    return next((pid for name, pid in ENGINES.items() if name in row["scenario"]), "vllm")


def predict_speedup(row: dict[str, str]) -> float:
    """The MTP speed-up at the row's batch size on its layout: `TPn` (tensor parallel, `speedup`) or `DEPn`
    (DP attention + expert parallelism over n GPUs, `dep_speedup`); the bundled acceptance row for its draft
    tokens; its decode context, else ASSUMED_CONTEXT_TOKENS (module docstring)."""
    model_id, hardware_id = MODEL_IDS[row["model"]], HARDWARE_IDS[row["hardware"]]
    settings = engine_settings(_engine(row))
    layout = row["layout"]
    gpus = int(layout.removeprefix("DEP").removeprefix("TP"))
    replica = build_replica(model_id, hardware_id, gpus=gpus if layout.startswith("TP") else 8, weight_dtype="fp8",
                            kv_dtype="fp8", engine=settings)
    config = ReplicaConfig(shape=replica.shape, hardware=replica.hardware, gpus=replica.gpus, weight_dtype="fp8",
                           kv_dtype="fp8", efficiency=replica.efficiency, engine=settings.engine_id)
    published = published_speculation(model_id=model_id, method="mtp", draft_tokens=int(row["draft_tokens"]))
    spec = Speculation(method="mtp", acceptance_rates=published.acceptance_rates, source=published.id)
    context = int(row["context_tokens"] or ASSUMED_CONTEXT_TOKENS)
    batch = int(row["batch_per_gpu"])
    if layout.startswith("DEP"):
        return dep_speedup(config, spec, ep_gpus=gpus, batch_per_gpu=batch, context_tokens=context).speedup
    return speedup(config, spec, batch=batch, context_tokens=context).speedup


def predict_dep_throughput(row: dict[str, str]) -> float:
    """Tokens/s per 8-GPU node of a DEPn pool at the row's batch per GPU (module docstring)."""
    model_id, hardware_id = MODEL_IDS[row["model"]], HARDWARE_IDS[row["hardware"]]
    gpus = int(row["layout"].removeprefix("DEP"))
    replica = build_replica(model_id, hardware_id, gpus=8, weight_dtype="fp8", kv_dtype="fp8",
                            engine=engine_settings(_engine(row)))
    prefill = row["metric"] == "input_tokens_per_second_per_node"
    batch = int(row["batch_per_gpu"])
    new_tokens = int(row["input_len"]) if prefill else 1
    step = dep_step(replica.shape, replica.hardware, ep_gpus=gpus, batch_per_gpu=batch, new_tokens=new_tokens,
                    context_tokens=int(row["context_tokens"]), logit_rows_per_sequence=1.0, weight_dtype="fp8",
                    kv_dtype="fp8", efficiency=replica.efficiency)
    return NODE_GPUS * batch * new_tokens / step.step_seconds


@functools.cache
def _rate(model_id: str, hardware_id: str, engine_id: str, gpus: int, isl: int, osl: int) -> float:
    """Aggregated capacity (requests/s) of one replica at DISAGG_SLO."""
    replica = build_replica(model_id, hardware_id, gpus=gpus, weight_dtype="fp8", kv_dtype="fp8",
                            engine=engine_settings(engine_id))
    return capacity_for_replica(replica, _search(isl, osl)).max_rate_requests_per_second


def _search(isl: int, osl: int) -> CapacitySearch:
    return CapacitySearch(prompt_tokens=FixedTokens(tokens=isl), output_tokens=FixedTokens(tokens=osl), slo=DISAGG_SLO,
                          requests=DISAGG_REQUESTS, rate_tolerance=0.02)


def predict_disaggregated_gain(row: dict[str, str]) -> float:
    """Best disaggregated over best aggregated requests/s per GPU on the row's GPUs (module docstring)."""
    model_id, hardware_id, engine_id = MODEL_IDS[row["model"]], HARDWARE_IDS[row["hardware"]], _engine(row)
    total, isl, osl = int(row["n_gpus"]), int(row["input_len"]), int(row["output_len"])
    aggregated = max(_rate(model_id, hardware_id, engine_id, tp, isl, osl) * (total // tp) / total
                     for tp in (2, 4, 8) if total % tp == 0)
    settings = engine_settings(engine_id)
    best = 0.0
    for gp in INSTANCE_GPUS:
        for gd in INSTANCE_GPUS:
            prefill = build_replica(model_id, hardware_id, gpus=gp, weight_dtype="fp8", kv_dtype="fp8", engine=settings)
            decode = build_replica(model_id, hardware_id, gpus=gd, weight_dtype="fp8", kv_dtype="fp8", engine=settings)
            for x in range(1, total // gp):
                if (total - x * gp) % gd:
                    continue
                layout = DisaggregatedLayout(prefill=prefill, decode=decode, prefill_instances=x,
                                             decode_instances=(total - x * gp) // gd, link=kv_link(prefill, decode))
                rate = disaggregated_capacity(layout, _search(isl, osl)).max_rate_requests_per_second
                best = max(best, rate / total)
    return best / aggregated


def _predict(row: dict[str, str]) -> float:
    if row["metric"] == "decode_speedup":
        return predict_speedup(row)
    if row["metric"] in DEP_METRICS:
        return predict_dep_throughput(row)
    if row["metric"] in RATE_METRICS:
        return predict_rate_row(row, (MODEL_IDS[row["model"]], HARDWARE_IDS[row["hardware"]]), _engine(row))
    return predict_disaggregated_gain(row)


def mode_rows(path: Path = MODE_CSV) -> list[ModeRow]:
    """Every mode row with its prediction (or reason) and split, in CSV order."""
    result = []
    for row in read_mode_rows(path):
        reason = row["not_evaluated"] or None
        predicted = None
        if reason is None:
            predicted = _predict(row)
        where = (f"{row['hardware']} x{row['n_gpus']}" if row["n_gpus"].isdigit() else
                 "hardware not stated" if row["hardware"] == "not stated" else f"{row['hardware']}, GPUs not stated")
        label = f"{row['model']} {row['precision']} {where}: {row['scenario']}"
        result.append(ModeRow(mode=row["mode"], label=label, metric=row["metric"], measured=float(row["value"]),
                              predicted=predicted, not_evaluated=reason, holdout=is_holdout(row), source=row["source"]))
    return result
