"""`costmodel probe-endpoint`: streaming latency of an OpenAI-compatible chat-completions endpoint.

Exit codes: 0 when every request succeeded; 1 when the probe ran but at least one request failed
(connection refused, HTTP errors, broken streams, timeouts: the result, with errors by kind, is still
printed and written); 2 for bad flags (CostmodelError, printed by costmodel.cli.main), including an --out
path that cannot be written (checked before any request; if the write still fails at the end, the
result is printed on stdout and the exit code is 2).
The API key is read from the environment (--api-key-env, default OPENAI_API_KEY) or, with --ask-key on
a terminal, typed without echo; it is sent in the Authorization header and nowhere else.
"""

from __future__ import annotations

import argparse
import getpass
import math
import os
import sys
from pathlib import Path

from costmodel.cli.output import emit
from costmodel.cli.progress import add_quiet_flag, wanted
from costmodel.errors import CostmodelError
from costmodel.fileio import atomic_write_text, write_problem
from costmodel.measurements.endpoint_result import (
    DEFAULT_TIMEOUT_SECONDS,
    EndpointProbeResult,
    EndpointProbeSettings,
    endpoint_settings,
)
from costmodel.units import fmt_seconds

_EPILOG = (
    "exit codes: 0 all requests ok; 1 some requests failed (result still printed, errors by kind); "
    "2 bad flags. The prompt is ~N tokens of random common words (an approximation; the server's count "
    "is prompt_tokens_mean)."
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `probe-endpoint` subcommand."""
    parser = subparsers.add_parser(
        "probe-endpoint",
        help="TTFT/TPOT/ITL/E2E percentiles of an OpenAI-compatible streaming endpoint",
        epilog=_EPILOG,
    )
    parser.add_argument("--url", required=True, help="base URL, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", required=True, help="model name as the server knows it")
    parser.add_argument(
        "--concurrency", default="1",
        help="requests in flight at once (default 1); a comma list such as 1,2,4,8 runs a closed-loop sweep",
    )
    parser.add_argument(
        "--rates", help="comma list of request rates (requests/s), e.g. 1,2,4: an open-loop Poisson sweep"
    )
    parser.add_argument(
        "--requests", type=int, default=8, help="requests in all, or per level in a sweep (default 8)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the Poisson arrival times (--rates)")
    parser.add_argument(
        "--prompt-tokens", type=int, default=256, help="approximate prompt length (default 256)"
    )
    parser.add_argument("--max-tokens", type=int, default=128, help="max_tokens per request (default 128)")
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the key (default OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--ask-key", action="store_true", help="prompt for the key (no echo) if the variable is unset"
    )
    parser.add_argument("--slo-ttft-p90", type=float, default=None, metavar="SECONDS",
                        help="judge the run against this p90 TTFT limit (s): meets / misses in the output")
    parser.add_argument("--slo-tpot-p90", type=float, default=None, metavar="SECONDS",
                        help="judge the run against this p90 TPOT limit (s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS,
                        help=f"seconds per request (default {DEFAULT_TIMEOUT_SECONDS:g})")
    parser.add_argument("--out", type=Path, help="also write the result JSON here (atomic)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet_flag(parser)
    parser.set_defaults(handler=run_probe_endpoint)


def read_api_key(*, env_name: str, ask: bool) -> str | None:
    """The key from $env_name, else typed at a terminal when `ask`, else None (no header is sent)."""
    key = os.environ.get(env_name, "").strip()
    if key:
        return key
    if not ask:
        return None
    if not sys.stdin.isatty():
        raise CostmodelError(f"--ask-key needs an interactive terminal; set {env_name} instead")
    return getpass.getpass(f"API key (${env_name} is unset; input hidden): ").strip() or None


def run_probe_endpoint(args: argparse.Namespace) -> int:
    """Handler of `costmodel probe-endpoint`; returns the exit code (see module docstring)."""
    concurrency_values = parse_levels(args.concurrency, flag="--concurrency", integer=True)
    limits = slo_limits(ttft=args.slo_ttft_p90, tpot=args.slo_tpot_p90)
    if limits and (args.rates is not None or len(concurrency_values) > 1):
        raise CostmodelError("--slo-ttft-p90/--slo-tpot-p90 judge one run: give a single --concurrency level "
                             "(a sweep's levels are fitted with calibrate-endpoint instead)")
    if args.rates is not None or len(concurrency_values) > 1:
        from costmodel.cli.endpoint_sweep import run_sweep_command

        return run_sweep_command(args, concurrency_values=concurrency_values)
    settings = endpoint_settings(
        base_url=args.url,
        model=args.model,
        concurrency=int(concurrency_values[0]),
        requests_total=args.requests,
        prompt_tokens=args.prompt_tokens,
        max_tokens=args.max_tokens,
        timeout_seconds=args.timeout,
        api_key_env=args.api_key_env,
    )
    if args.out is not None:  # before any request is sent: a run must not be lost to a bad path
        problem = write_problem(args.out)
        if problem is not None:
            raise CostmodelError(f"--out {args.out}: cannot write there ({problem}); give a writable file path "
                                 "such as endpoint.json")
    api_key = read_api_key(env_name=args.api_key_env, ask=args.ask_key)

    from probes.endpoint import probe_endpoint  # lazy: costmodel must not import probes at module level

    result = probe_endpoint(settings, api_key=api_key, on_progress=_print_progress if wanted(args) else None)
    if not args.json:
        sys.stderr.write("\n")
    write_error = None
    if args.out is not None:
        try:
            atomic_write_text(args.out, result.model_dump_json(indent=2) + "\n")
        except OSError as exc:  # the path was writable when checked; print the result whatever happens
            write_error = exc.strerror or str(exc)
    verdict = slo_verdict(result, limits)
    payload = result.model_dump(mode="json") | ({"slo_status": verdict[0], "slo_reason": verdict[1]} if verdict else {})
    emit(payload, as_json=args.json, text=format_result(result) + (f"\n  SLO       {verdict[0]}: {verdict[1]}"
                                                                   if verdict else ""))
    if write_error is not None:
        sys.stderr.write(f"costmodel: error: --out {args.out}: could not write the result ({write_error}); "
                         "it is printed on stdout above\n")
        return 2
    return 0 if result.requests_failed == 0 else 1


def slo_limits(*, ttft: float | None, tpot: float | None) -> dict[str, float]:
    """The p90 limits given on the command line, each finite and > 0 (CostmodelError names the flag)."""
    limits = {}
    for flag, value, key in (("--slo-ttft-p90", ttft, "ttft"), ("--slo-tpot-p90", tpot, "tpot")):
        if value is None:
            continue
        if not (math.isfinite(value) and value > 0):
            raise CostmodelError(f"{flag} must be a positive number of seconds, got {value}")
        limits[key] = value
    return limits


def slo_verdict(result: EndpointProbeResult, limits: dict[str, float]) -> tuple[str, str] | None:
    """('meets' | 'misses' | 'unverified', why) of the run's measured p90s against the limits; None: none given."""
    if not limits:
        return None
    parts, status = [], "meets"
    for key, limit in limits.items():
        value = getattr(result, f"{key}_p90_seconds")
        if value is None:
            status = "unverified" if status == "meets" else status
            parts.append(f"no {key.upper()} p90 measured")
            continue
        over = value > limit
        status = "misses" if over else status
        parts.append(f"{key.upper()} p90 {fmt_seconds(value)} {'>' if over else '<='} {fmt_seconds(limit)}")
    if result.requests_failed:
        status = "unverified" if status == "meets" else status
        parts.append(f"{result.requests_failed} request(s) failed")
    return status, "; ".join(parts)


def parse_levels(text: str, *, flag: str, integer: bool) -> list[float]:
    """Comma list of positive finite numbers (integers when `integer`, kept exact so range checks can
    name huge values); CostmodelError names the flag."""
    values: list[float] = []
    for part in text.split(","):
        item = part.strip()
        try:
            value: float = int(item) if integer else float(item)
        except ValueError:
            kind = "integers" if integer else "numbers"
            raise CostmodelError(f"{flag} '{text}' must be comma-separated {kind}, e.g. 1,2,4") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise CostmodelError(f"{flag} must be a finite number, got {item}")
        if value <= 0:
            raise CostmodelError(f"{flag} must be positive, got {item}")
        values.append(value)
    if len(set(values)) != len(values):
        raise CostmodelError(f"{flag} '{text}' repeats a level; give each level once")
    return values


def _print_progress(done: int, total: int, failed: int) -> None:
    sys.stderr.write(f"\rprobe-endpoint: {done}/{total} requests done, {failed} failed")
    sys.stderr.flush()


def _describe(settings: EndpointProbeSettings) -> str:
    return (
        f"{settings.base_url}  model {settings.model}  concurrency {settings.concurrency}, "
        f"{settings.requests_total} requests, ~{settings.prompt_tokens} prompt tokens, "
        f"max {settings.max_tokens} output tokens"
    )


def format_result(result: EndpointProbeResult) -> str:
    """Human-readable summary: counts, errors by kind with one example each, percentile table."""

    def cell(seconds: float | None) -> str:
        return f"{fmt_seconds(seconds):>10}" if seconds is not None else f"{'-':>10}"

    key_note = "key sent" if result.api_key_sent else f"no key sent (${result.settings.api_key_env} unset)"
    lines = [
        f"probe-endpoint {_describe(result.settings)}; {key_note}",
        f"  requests  {result.requests_ok} ok, {result.requests_failed} failed",
    ]
    for kind, count in result.errors_by_kind.items():
        lines.append(f"  error     {kind}: {count}  e.g. {result.error_examples.get(kind, '')[:160]}")
    source = "no successful request" if result.output_tokens_source == "none" else result.output_tokens_source
    if result.requests_implausible_usage:
        lines.append(f"  usage     {result.requests_implausible_usage} request(s) with implausible usage counts "
                     "were not trusted (output counted by content chunks, prompt count dropped)")
    lines.append(
        f"  output    {result.output_tokens} tokens (counted from {source}), "
        f"{result.output_tokens_per_second:.1f} tokens/s over {fmt_seconds(result.wall_seconds)}"
    )
    lines.append(f"  {'':6}{'p50':>10}{'p90':>10}{'p99':>10}")
    for name in ("ttft", "tpot", "itl", "e2e"):
        p50, p90, p99 = (getattr(result, f"{name}_p{p}_seconds") for p in (50, 90, 99))
        lines.append(f"  {name.upper():6}{cell(p50)}{cell(p90)}{cell(p99)}")
    return "\n".join(lines)
