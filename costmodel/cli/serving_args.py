"""The serving commands' shared inputs: the flags `simulate` and `capacity` both take, and their reading into
token distributions, SLO limits, scheduler settings, a replica and replayed arrival times (validated, with the
physical-minimum check of an SLO)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from pydantic import ValidationError

from costmodel.catalog import load_model
from costmodel.cli.calibration_args import calibrated_hardware, serving_calibration_file
from costmodel.cli.catalog import add_config_flags
from costmodel.cli.mode_args import add_mode_flags, with_speculation
from costmodel.cli.output import bounded_float, bounded_int, finite_float
from costmodel.cli.progress import add_quiet_flag
from costmodel.errors import CostmodelError
from costmodel.estimate import check_config
from costmodel.fileio import read_user_text
from costmodel.measurements.calibration import Calibration
from costmodel.memory import MAX_BATCHED_TOKENS
from costmodel.scenario.distributions import FixedTokens, LognormalTokens, TokenDistribution
from costmodel.scenario.limits import (
    MAX_LATENCY_SECONDS,
    MAX_TOKENS_PER_REQUEST,
)
from costmodel.scenario.slo import SloLimit
from costmodel.serving import MAX_NUM_SEQS, Replica, build_replica
from costmodel.serving.profile import MAX_SCHEDULER_STEPS, EngineSettings, engine_settings
from costmodel.serving.simulation import draw_lengths
from costmodel.serving.zero_load import zero_load_result, zero_load_seconds

MAX_SIMULATED_REQUESTS = 10_000_000  # ~100 s of simulation at the engine's speed; more is a typo
MAX_ARRIVAL_SECONDS = 365.25 * 86_400.0  # a replayed trace of up to a year


def add_serving_flags(parser: argparse.ArgumentParser, *, requests: int) -> None:
    """The flags `simulate` and `capacity` share; `requests` is the default of --requests."""
    add_config_flags(parser, with_batch=False)
    add_quiet_flag(parser)
    parser.add_argument("--prompt-sigma", type=finite_float, default=0.0,
                        help="lognormal sigma of prompt lengths around --prompt-tokens (mean); 0 = fixed")
    parser.add_argument("--output-sigma", type=finite_float, default=0.0,
                        help="lognormal sigma of output lengths around --output-tokens (mean); 0 = fixed")
    parser.add_argument("--requests", type=bounded_int(None, MAX_SIMULATED_REQUESTS), default=requests, help="requests to simulate")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0, help="random seed, 0..2^32-1")
    parser.add_argument("--burstiness", type=bounded_float(0.01, 100.0), default=1.0, help="gamma shape of arrival gaps (1 = Poisson)")
    parser.add_argument("--prefix-cached-fraction", type=bounded_float(0.0, 1.0), default=0.0,
                        help="share of each prompt already in the KV cache (shared prefix), 0..1 (the last token is always computed)")
    parser.add_argument("--slo-ttft-p90", type=bounded_float(None, MAX_LATENCY_SECONDS), help="p90 TTFT limit, s")
    parser.add_argument("--slo-tpot-p90", type=bounded_float(None, MAX_LATENCY_SECONDS), help="p90 TPOT limit, s")
    parser.add_argument("--max-num-seqs", type=bounded_int(None, 100_000), default=None,
                        help=f"running sequences at most (default: the engine's; generic {MAX_NUM_SEQS})")
    parser.add_argument("--max-batched-tokens", type=bounded_int(None, MAX_TOKENS_PER_REQUEST), default=None,
                        help=f"token budget per step (default: the engine's; generic {MAX_BATCHED_TOKENS})")
    parser.add_argument("--kv-policy", choices=("preempt", "reserve"), default=None,
                        help="KV full: preempt and recompute (vLLM) or reserve prompt+output at admission (TRT-LLM);"
                             " default: the engine's")
    parser.add_argument("--scheduler-steps", type=bounded_int(None, MAX_SCHEDULER_STEPS), default=None,
                        help="multi-step scheduling (vLLM v0.6 --num-scheduler-steps): the scheduler runs once per"
                             " this many decode steps and streams that many tokens per chunk; default 1")
    parser.add_argument("--gpu-memory-utilization", type=bounded_float(0.05, 1.0), default=None,
                        help="the engine's KV memory fraction under its own rule: vLLM's share of all HBM, "
                             "TensorRT-LLM's free_gpu_memory_fraction of what the weights leave; default the engine's (0.9)")
    add_mode_flags(parser)


def token_distribution(flag: str, mean: int, sigma: float) -> TokenDistribution:
    """Fixed lengths at sigma 0, else lognormal around the mean; `flag` names the flag in errors."""
    if mean < 1:
        raise CostmodelError(f"{flag} must be >= 1 token (got {mean})")
    try:
        return FixedTokens(tokens=mean) if sigma == 0 else LognormalTokens(mean_tokens=mean, sigma=sigma)
    except ValidationError as exc:
        raise CostmodelError(f"{flag.replace('tokens', 'sigma')} {sigma}: must be in (0, 3] ({exc.errors()[0]['msg']})") from exc


def slo_limits(args: argparse.Namespace) -> list[SloLimit]:
    """The p90 limits given by --slo-ttft-p90 and --slo-tpot-p90 (none, one or both)."""
    limits = []
    for metric, value in (("ttft", args.slo_ttft_p90), ("tpot", args.slo_tpot_p90)):
        if value is None:
            continue
        if not (math.isfinite(value) and value > 0):
            raise CostmodelError(f"--slo-{metric}-p90 must be a positive number of seconds (got {value})")
        limits.append(SloLimit(metric, 90, value))  # type: ignore[arg-type]
    return limits


def scheduler_settings(args: argparse.Namespace) -> EngineSettings:
    """The --engine profile's scheduler settings, with --max-num-seqs/--max-batched-tokens/--kv-policy/
    --scheduler-steps/--gpu-memory-utilization over them."""
    settings = engine_settings(args.engine, longest_prompt_tokens=args.prompt_tokens, max_num_seqs=args.max_num_seqs,
                               max_batched_tokens=args.max_batched_tokens, kv_policy=args.kv_policy,
                               scheduler_steps=args.scheduler_steps, gpu_memory_utilization=args.gpu_memory_utilization)
    args.max_num_seqs, args.max_batched_tokens, args.kv_policy = (
        settings.max_num_seqs, settings.max_batched_tokens, settings.kv_policy)
    return settings


def cli_replica(args: argparse.Namespace) -> Replica:
    """The replica the flags describe (calibration file, engine settings and speculation applied)."""
    file = serving_calibration_file(args)
    calibration = file if isinstance(file, Calibration) else None
    # The mean lengths must fit the model's context window (longer draws are rejected by the simulator).
    check_config(load_model(args.model), gpus=args.gpus, weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype,
                 batch=1, prompt_tokens=args.prompt_tokens, output_tokens=args.output_tokens)
    settings = scheduler_settings(args)
    replica = build_replica(args.model, calibrated_hardware(args, file), gpus=args.gpus, weight_dtype=args.weight_dtype,
                            kv_dtype=args.kv_dtype, calibration=calibration, max_batched_tokens=args.max_batched_tokens,
                            engine=settings)
    return with_speculation(replica, args)


def read_arrivals(path: Path) -> list[float]:
    """Arrival times, s, from a JSON list or one number per line."""
    text = read_user_text(path, what="--arrivals file")
    try:
        values = json.loads(text) if text.lstrip().startswith("[") else [float(x) for x in text.split()]
        arrivals = [float(v) for v in values]
    except (ValueError, TypeError, RecursionError) as exc:
        raise CostmodelError(f"--arrivals {path}: expected a JSON list of seconds or one number per line") from exc
    if not all(math.isfinite(t) and 0.0 <= t <= MAX_ARRIVAL_SECONDS for t in arrivals):
        raise CostmodelError(f"--arrivals {path}: every arrival time must be finite, in 0..{MAX_ARRIVAL_SECONDS:g} s")
    return arrivals


def check_slo_physical(replica: Replica, args: argparse.Namespace, limits: list[SloLimit], prompt: TokenDistribution,
                       output: TokenDistribution) -> None:
    """Refuse a limit below what the replica does with no queueing at all (each request alone)."""
    prompts, outputs = draw_lengths(prompt_tokens=prompt, output_tokens=output, requests=min(args.requests, 2000),
                                    seed=args.seed)
    alone = zero_load_result(replica, prompts=prompts, outputs=outputs,
                             prefix_cached_fraction=args.prefix_cached_fraction, kv_policy=args.kv_policy)
    for limit in limits:
        minimum = zero_load_seconds(alone, limit)
        if minimum > limit.limit_seconds:
            what = "a prefill" if limit.metric == "ttft" else "a decode step"
            raise CostmodelError(
                f"--slo-{limit.metric}-p90 {limit.limit_seconds:g} s is below the physical minimum: with no queueing "
                f"at all, p90 {limit.metric.upper()} is {minimum:.4g} s ({what} at batch 1 on {replica.gpus} x "
                f"{replica.hardware_id}); raise the limit, shorten the prompts, or use more/faster GPUs"
            )

