"""Schema of the OpenAI-compatible endpoint probe: its settings, one record per request, the summary.

Latency vocabulary (DESIGN.md): TTFT = request sent -> first content token; TPOT = (E2E - TTFT) / (N - 1)
with N output tokens (vLLM's convention, first token excluded); ITL = gap between consecutive streamed
chunks that carry content (per chunk, not per token); E2E = request sent -> last content token.
All times in seconds. Percentiles use linear interpolation between order statistics (numpy's default,
as vLLM's benchmark_serving does).
"""

from __future__ import annotations

import math
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from costmodel.errors import CostmodelError
from costmodel.strict import StrictModel

# Error kinds a failed request is filed under. HTTP errors are "http_<status>" (e.g. "http_429").
ERROR_KIND_TIMEOUT = "timeout"  # no byte for timeout_seconds, or the request ran past timeout_seconds
ERROR_KIND_CONNECTION = "connection"  # refused, reset, or dropped before the stream ended
ERROR_KIND_MALFORMED = "malformed_stream"  # not an event stream, or an event that is not a chat chunk
ERROR_KIND_STREAM_ERROR = "stream_error"  # the server sent an {"error": ...} event mid-stream
ERROR_KIND_MISSING_DONE = "missing_done"  # the stream ended cleanly but without `data: [DONE]`
ERROR_KIND_REDIRECT = "redirect"  # a 3xx: not followed, so the key and the figures stay with the URL given

TokenSource = Literal["usage", "content_chunks"]

# Flag limits. The per-request timeout is a wall-clock limit for one streamed answer: an hour is longer
# than any interactive or batch request should stream; NaN or inf would never time out.
MAX_TIMEOUT_SECONDS = 3600.0
DEFAULT_TIMEOUT_SECONDS = 60.0  # `probe-endpoint --timeout` when not given
# Worker threads and requests held in memory at once (each prompt is built up front).
MAX_CONCURRENCY = 4096
MAX_REQUESTS = 1_000_000
MAX_TOKENS_PER_REQUEST = 2**24  # 16.8M: above any context window sold (prompt or output)

# Plausibility of a server's usage.completion_tokens (issue 10, item 12). The request asked for at most
# max_tokens; a server may count a few special tokens (stop, reasoning delimiters) beyond them, so 10%
# plus 8 tokens of slack. Each streamed chunk that carries content holds at least one token, so fewer
# tokens than content chunks is impossible.
USAGE_MARGIN_FRACTION = 0.10
USAGE_MARGIN_TOKENS = 8


def implausible_usage(completion_tokens: Any, *, max_tokens: int, content_chunks: int) -> str | None:
    """Why a server's usage.completion_tokens cannot be right, or None when it is plausible.

    Refused: non-integers (floats, strings, booleans), negatives, counts above max_tokens by more than
    the margin above, and counts below the number of streamed content chunks.
    """
    if isinstance(completion_tokens, bool) or not isinstance(completion_tokens, int):
        return f"completion_tokens {completion_tokens!r:.40} is not an integer"
    if completion_tokens < 0:
        return f"completion_tokens {completion_tokens} is negative"
    ceiling = max_tokens * (1 + USAGE_MARGIN_FRACTION) + USAGE_MARGIN_TOKENS
    if completion_tokens > ceiling:
        return f"completion_tokens {completion_tokens:.3g} is above max_tokens {max_tokens} (+10% + 8)"
    if completion_tokens < content_chunks:
        return f"completion_tokens {completion_tokens} is below the {content_chunks} content chunks streamed"
    return None


# A server's usage.prompt_tokens for a synthetic prompt of N common words (one token each in the cl100k and
# Llama-3 vocabularies): a tokenizer that splits every word in 8 plus a 1,024-token chat template is still
# below this; more (e.g. 1e23) is a count that cannot be true and would skew the sweep's fit and means.
PROMPT_USAGE_FACTOR = 8
PROMPT_USAGE_TEMPLATE_TOKENS = 1024


def implausible_prompt_tokens(prompt_tokens: Any, *, prompt_tokens_sent: int) -> str | None:
    """Why a server's usage.prompt_tokens cannot be right for a ~`prompt_tokens_sent`-token prompt, or None."""
    if isinstance(prompt_tokens, bool) or not isinstance(prompt_tokens, int):
        return f"prompt_tokens {prompt_tokens!r:.40} is not an integer"
    if prompt_tokens < 0:
        return f"prompt_tokens {prompt_tokens} is negative"
    ceiling = min(MAX_TOKENS_PER_REQUEST, prompt_tokens_sent * PROMPT_USAGE_FACTOR + PROMPT_USAGE_TEMPLATE_TOKENS)
    if prompt_tokens > ceiling:
        return (f"prompt_tokens {prompt_tokens:.3g} is above {ceiling:,} for a ~{prompt_tokens_sent}-token prompt "
                f"(x{PROMPT_USAGE_FACTOR} + {PROMPT_USAGE_TEMPLATE_TOKENS})")
    return None


class EndpointProbeSettings(StrictModel):
    """What was probed and how. Holds the *name* of the API-key variable, never the key."""

    base_url: str = Field(description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    model: str
    concurrency: int = Field(gt=0, description="requests in flight at once (worker threads)")
    requests_total: int = Field(gt=0, description="requests sent in all, shared by the workers")
    prompt_tokens: int = Field(gt=0, description="target prompt length, approximate (synthetic words)")
    max_tokens: int = Field(gt=0, description="max_tokens sent with each request")
    timeout_seconds: float = Field(gt=0, description="per-request limit, total and between bytes")
    api_key_env: str = Field(description="name of the environment variable the key was read from")

    @property
    def chat_completions_url(self) -> str:
        """The endpoint POSTed to: base URL + /chat/completions."""
        parts = urlsplit(self.base_url)
        path = parts.path.rstrip("/") + "/chat/completions"
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class EndpointRequestRecord(StrictModel):
    """One request's outcome. Latencies are None when the request failed or streamed no content."""

    index: int
    ok: bool
    error_kind: str | None = None
    http_status: int | None = None
    ttft_seconds: float | None = None
    tpot_seconds: float | None = Field(None, description="None when fewer than 2 output tokens")
    e2e_seconds: float | None = None
    output_tokens: int = 0
    output_tokens_source: TokenSource = "content_chunks"
    content_chunks: int = Field(0, description="streamed chunks that carried content")
    prompt_tokens: int | None = Field(None, ge=0, le=MAX_TOKENS_PER_REQUEST,
                                      description="usage.prompt_tokens when the server sent a plausible one")
    usage_implausible: str | None = Field(
        None, description="why a server's usage count was not used (output tokens then counted as content "
                          "chunks; an implausible prompt_tokens is dropped)"
    )


class EndpointProbeResult(StrictModel):
    """Summary of one probe run; the `costmodel probe-endpoint --json` object."""

    kind: Literal["endpoint_probe"] = "endpoint_probe"
    settings: EndpointProbeSettings
    api_key_sent: bool = Field(description="whether an Authorization header was sent (the key is not stored)")
    started_at_utc: str = Field(description="ISO 8601 time the first request was sent")
    wall_seconds: float = Field(description="first request sent -> last request finished")
    requests_ok: int
    requests_failed: int
    errors_by_kind: dict[str, int] = Field(description="failed requests per error kind")
    error_examples: dict[str, str] = Field(description="first message per error kind, key redacted")
    output_tokens: int = Field(description="output tokens of the successful requests")
    output_tokens_source: Literal["usage", "content_chunks", "mixed", "none"]
    output_tokens_per_second: float = Field(description="output_tokens / wall_seconds, all workers")
    requests_implausible_usage: int = Field(
        0, description="successful requests whose usage counts were implausible and not used"
    )
    prompt_tokens_mean: float | None = Field(description="mean usage.prompt_tokens; None without usage")
    itl_samples: int = Field(description="inter-chunk gaps pooled for the itl_ percentiles")
    ttft_p50_seconds: float | None
    ttft_p90_seconds: float | None
    ttft_p99_seconds: float | None
    tpot_p50_seconds: float | None
    tpot_p90_seconds: float | None
    tpot_p99_seconds: float | None
    itl_p50_seconds: float | None
    itl_p90_seconds: float | None
    itl_p99_seconds: float | None
    e2e_p50_seconds: float | None
    e2e_p90_seconds: float | None
    e2e_p99_seconds: float | None
    notes: list[str] = Field(description="how the numbers were obtained and what they rest on")
    environment: dict[str, str] = Field(description="client python, requests and platform versions")
    request_records: list[EndpointRequestRecord]


def endpoint_settings(
    *,
    base_url: str,
    model: str,
    concurrency: int,
    requests_total: int,
    prompt_tokens: int,
    max_tokens: int,
    timeout_seconds: float,
    api_key_env: str,
) -> EndpointProbeSettings:
    """Check user-given probe settings and build them; bad values raise CostmodelError naming the flag.

    A trailing `/chat/completions` on the URL is accepted and removed; credentials embedded in the URL
    (user:password@host) are refused, because the URL is stored in the result.
    """
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CostmodelError(
            f"--url '{base_url}' is not an http(s) URL; give the base URL, e.g. http://127.0.0.1:8000/v1"
        )
    if parts.username or parts.password:
        raise CostmodelError("--url must not hold credentials; put the key in an environment variable")
    path = parts.path.rstrip("/")
    path = path.removesuffix("/chat/completions")
    clean_url = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    if not model.strip():
        raise CostmodelError("--model is empty; give the model name the server serves")
    checks = {
        "--concurrency": concurrency,
        "--requests": requests_total,
        "--prompt-tokens": prompt_tokens,
        "--max-tokens": max_tokens,
        "--timeout": timeout_seconds,
    }
    limits = {
        "--concurrency": MAX_CONCURRENCY,
        "--requests": MAX_REQUESTS,
        "--prompt-tokens": MAX_TOKENS_PER_REQUEST,
        "--max-tokens": MAX_TOKENS_PER_REQUEST,
        "--timeout": MAX_TIMEOUT_SECONDS,
    }
    for flag, value in checks.items():
        if isinstance(value, float) and not math.isfinite(value):  # ints are finite (and may exceed a float)
            raise CostmodelError(f"{flag} must be a finite number, got {value}")
        if value <= 0:
            raise CostmodelError(f"{flag} must be positive, got {value}")
        if value > limits[flag]:
            digits = str(value)
            shown = f"{value:.3g}" if isinstance(value, float) else digits if len(digits) <= 15 else (
                f"{digits[:12]}... ({len(digits)} digits)")
            raise CostmodelError(f"{flag} must be at most {limits[flag]:,}, got {shown}")
    if not api_key_env.strip():
        raise CostmodelError("--api-key-env is empty; give a variable name such as OPENAI_API_KEY")
    return EndpointProbeSettings(
        base_url=clean_url,
        model=model,
        concurrency=concurrency,
        requests_total=requests_total,
        prompt_tokens=prompt_tokens,
        max_tokens=max_tokens,
        timeout_seconds=float(timeout_seconds),
        api_key_env=api_key_env,
    )
