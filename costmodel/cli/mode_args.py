"""Serving-mode flags shared by `simulate` and `capacity`: speculative decoding / MTP and disaggregated serving.

Speculation: `--spec-method mtp|eagle|draft-model` turns it on; the acceptance per draft position is the bundled
published row for the model (`catalog/speculative.yaml`, `--spec-draft-tokens K` picks the row) or the user's
`--spec-acceptance A1,A2,...`. Disaggregation: `--mode disaggregated` with `--prefill-gpus`, `--decode-gpus`,
`--prefill-instances` and `--decode-instances` (xPyD); `--kv-link` picks the link the KV cache crosses.
Expert parallelism: `--parallelism dep` runs an MoE model with DP attention + EP over --gpus (2-4 nodes past a
node's GPUs, over the catalog's NICs; `serving/expert_parallel_timer.py`), in each pool when disaggregated.
"""

from __future__ import annotations

import argparse
import math

from costmodel.catalog.speculative import MAX_DRAFT_TOKENS
from costmodel.cli.output import bounded_int
from costmodel.errors import CostmodelError
from costmodel.serving.expert_parallel_timer import dep_replica, nodes_of
from costmodel.serving.replica import Replica
from costmodel.serving.speculative import resolve_speculation
from costmodel.serving.speculative_timer import speculative_replica

MAX_INSTANCES = 64  # prefill or decode instances of one disaggregated deployment


def acceptance_list(text: str) -> tuple[float, ...]:
    """argparse type: comma-separated acceptance rates in [0, 1], one per draft token."""
    try:
        rates = tuple(float(part) for part in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers in [0, 1], e.g. 0.8,0.6 (got {text!r})") from exc
    if not 1 <= len(rates) <= MAX_DRAFT_TOKENS or not all(math.isfinite(a) and 0.0 <= a <= 1.0 for a in rates):
        raise argparse.ArgumentTypeError(f"give 1 to {MAX_DRAFT_TOKENS} rates, each in [0, 1] (got {text!r})")
    return rates


def add_mode_flags(parser: argparse.ArgumentParser) -> None:
    """The speculative and disaggregated flags."""
    parser.add_argument("--spec-method", choices=("mtp", "eagle", "draft-model"), default=None,
                        help="speculative decoding: MTP heads, an EAGLE head or a draft model (default: none)")
    parser.add_argument("--spec-draft-tokens", type=bounded_int(1, MAX_DRAFT_TOKENS), default=None,
                        help="draft tokens per step (picks the bundled published acceptance row; default 1)")
    parser.add_argument("--spec-acceptance", type=acceptance_list, default=None,
                        help="your own conditional acceptance per draft position, e.g. 0.8,0.6,0.45")
    parser.add_argument("--spec-draft-model", default=None, help="catalog id of the draft model (--spec-method draft-model)")
    parser.add_argument("--parallelism", choices=("tp", "dep"), default="tp",
                        help="tp: tensor parallel over --gpus; dep: data-parallel attention + expert-parallel MoE over"
                             " --gpus (MoE models; SGLang --enable-dp-attention --ep, vLLM --enable-expert-parallel)")
    parser.add_argument("--mode", choices=("aggregated", "disaggregated"), default="aggregated",
                        help="aggregated: prefill and decode share each replica; disaggregated: separate pools")
    parser.add_argument("--prefill-gpus", type=bounded_int(1, 64), default=None, help="GPUs per prefill instance (default --gpus)")
    parser.add_argument("--decode-gpus", type=bounded_int(1, 64), default=None, help="GPUs per decode instance (default --gpus)")
    parser.add_argument("--prefill-instances", type=bounded_int(1, MAX_INSTANCES), default=1, help="prefill instances (x of xPyD)")
    parser.add_argument("--decode-instances", type=bounded_int(1, MAX_INSTANCES), default=1, help="decode instances (y of xPyD)")
    parser.add_argument("--kv-link", choices=("auto", "intra-node", "inter-node"), default="auto",
                        help="link the KV cache crosses from prefill to decode (auto: inside one node when a prefill "
                             "and a decode instance fit in one)")
    parser.add_argument("--search-ratio", type=bounded_int(1, MAX_INSTANCES), default=None,
                        help="capacity: try every xPyD with x, y up to N and report the cheapest per request")


def check_mode_flags(args: argparse.Namespace) -> None:
    """Flags that only make sense together."""
    if args.spec_method is None and (args.spec_acceptance or args.spec_draft_tokens or args.spec_draft_model):
        raise CostmodelError("--spec-acceptance/--spec-draft-tokens/--spec-draft-model need --spec-method")
    if args.mode == "aggregated" and (args.prefill_gpus or args.decode_gpus or args.prefill_instances != 1
                                      or args.decode_instances != 1 or getattr(args, "search_ratio", None)):
        raise CostmodelError("--prefill-*/--decode-*/--search-ratio need --mode disaggregated")


def refuse_modes_with_measured(args: argparse.Namespace) -> None:
    """A calibrate-endpoint file replaces the roofline with your deployment's measured step times: it already
    is one mode, so --spec-* and --mode disaggregated cannot apply on top of it."""
    if args.spec_method is not None or args.mode != "aggregated" or getattr(args, "parallelism", "tp") != "tp":
        raise CostmodelError("--spec-method/--mode disaggregated/--parallelism dep cannot apply to a calibrate-endpoint "
                             "--calibration (its measured step times are your deployment's own mode); drop one of them")


def with_speculation(replica: Replica, args: argparse.Namespace) -> Replica:
    """The replica with the --spec-* flags and --parallelism applied (unchanged without them)."""
    check_mode_flags(args)
    if args.spec_method is not None:
        speculation = resolve_speculation(model_id=replica.model_id, method=args.spec_method,
                                          draft_tokens=args.spec_draft_tokens, acceptance_rates=args.spec_acceptance,
                                          draft_model_id=args.spec_draft_model)
        replica = speculative_replica(replica, speculation)
    return dep_replica(replica) if getattr(args, "parallelism", "tp") == "dep" else replica


def mode_payload(replica: Replica) -> dict[str, object]:
    """`--json` keys that say which serving mode ran (added to simulate's and capacity's objects)."""
    spec = replica.speculation
    return {
        "mode": "aggregated",
        "parallelism": replica.parallelism,
        "nodes": nodes_of(replica),
        "latency_owner": {"ttft": "replica", "tpot": "replica"},  # one pool owns both (disaggregated: two)
        "speculation_method": None if spec is None else spec.method,
        "speculation_draft_tokens": None if spec is None else spec.draft_tokens,
        "speculation_acceptance_rates": None if spec is None else list(spec.acceptance_rates),
        "speculation_tokens_per_step": None if spec is None else spec.tokens_per_step,
        "speculation_source": None if spec is None else spec.source,
    }


def mode_line(replica: Replica) -> str | None:
    """Text lines on the expert-parallel layout and the speculation that ran, or None without them."""
    spec = replica.speculation
    layout = None if replica.parallelism == "tp" else (
        f"  layout DEP{replica.gpus}: data-parallel attention + expert-parallel MoE over {replica.gpus} GPUs "
        f"({nodes_of(replica)} node(s)), all-to-all per MoE layer in place of the TP all-reduces")
    if spec is None:
        return layout
    rates = ", ".join(f"{a:.3g}" for a in spec.acceptance_rates)
    return ("" if layout is None else layout + "\n") + (f"  speculation {spec.method}: {spec.draft_tokens} draft tokens, acceptance {rates} -> "
            f"{spec.tokens_per_step:.3g} tokens per verify step ({spec.source[:80]})")
