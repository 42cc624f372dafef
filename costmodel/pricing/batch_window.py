"""A batch API's latency: its provider's published completion window, and when the batch price applies.

A batch API returns each request's result whole (no stream) some time within the provider's completion
window, so the window's bound is the only latency a provider stands behind: TTFT (and end-to-end time) is
at most the window, and TPOT does not apply to a result that arrives in one piece. A provider that
publishes no bound ("typically within 24 hours") gives no batch latency (`window_seconds` None).

The rule (docs/economics.md "Batch APIs"), one formula: an API option is priced through its batch API only
when the workload allows batching, the row has batch prices, the option does not opt out, the provider's
window is sourced, and every TTFT and E2E limit the SLO sets (p50, p90, p99) is at least the window.
Otherwise it is priced at its interactive price with its interactive latency evidence, and
`BatchChoice.declined` says why the batch API was not used.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.scenario.slo import Slo
from costmodel.units import fmt_seconds

SECONDS_PER_DAY = 86_400.0
READ_ON = "2026-12-02"  # when the stored copies of the pages below were read


@dataclass(frozen=True, kw_only=True)
class BatchWindow:
    """One provider's published batch completion window (s); None: no bound published."""

    provider: str
    window_seconds: float | None
    source: str  # URL, the page's words, and when it was read


# Keyed by the provider prefix of a price id ("openai/gpt-5-mini" -> "openai"): every provider with a
# batch price in pricing_data/api_prices.csv.
BATCH_WINDOWS: dict[str, BatchWindow] = {w.provider: w for w in (
    BatchWindow(provider="openai", window_seconds=SECONDS_PER_DAY, source=(
        "https://help.openai.com/en/articles/9197833-batch-api-faq: \"We will process these requests within "
        "24 hours\"; Batch API `completion_window`: \"Currently only 24h is supported\" "
        f"(https://www.rubydoc.info/github/openai/openai-ruby, the official SDK), read {READ_ON}")),
    BatchWindow(provider="anthropic", window_seconds=SECONDS_PER_DAY, source=(
        "https://docs.anthropic.com/de/api/creating-message-batches: Message Batches \"can take up to 24 hours "
        "to complete\"; expires_at is \"24 hours after creation\" (https://platform.claude.com/docs/en/api/"
        f"kotlin/beta/messages/batches), read {READ_ON}")),
    BatchWindow(provider="google", window_seconds=SECONDS_PER_DAY, source=(
        "https://developers.googleblog.com/scale-your-ai-workloads-batch-mode-gemini-api (2025-07-07): Gemini "
        f"API batch mode lets you \"retrieve your results within 24 hours\", read {READ_ON}")),
    BatchWindow(provider="fireworks", window_seconds=SECONDS_PER_DAY, source=(
        "https://fireworks.ai/blog/batch-api: \"Results can be retrieved in a few hours, with a max turnaround "
        f"time of 24 hours\", read {READ_ON}")),
    BatchWindow(provider="groq", window_seconds=SECONDS_PER_DAY, source=(
        "https://console.groq.com/docs/batch: \"Each batch completes within 24 hours (or often more quickly)\"; "
        f"\"Each batch has a 24-hour processing window\", read {READ_ON}")),
    BatchWindow(provider="xai", window_seconds=None, source=(
        "https://docs.x.ai/docs/guides/batch-api: \"Most batch requests complete within 24 hours, though "
        f"processing time may vary\" (typical, not a bound), read {READ_ON}")),
)}


def batch_window(provider: str) -> BatchWindow:
    """The provider's window; a provider not in the table has no sourced window."""
    return BATCH_WINDOWS.get(provider) or BatchWindow(
        provider=provider, window_seconds=None, source=f"no published batch completion window found for {provider}")


def fmt_window(seconds: float) -> str:
    """A window in hours ("24 h") when it is whole hours, else in seconds."""
    hours = seconds / 3600.0
    return f"{hours:g} h" if hours >= 1 and hours == round(hours) else fmt_seconds(seconds)


@dataclass(frozen=True, kw_only=True)
class BatchChoice:
    """Whether an API option is priced through its batch API, and why not when it could have been."""

    batch: bool
    window: BatchWindow | None = None  # set whenever the batch API was considered
    declined: str | None = None  # for people: why the batch API was not used although the workload allows it


def _window_limits(slo: Slo) -> list[tuple[str, float]]:
    """Every TTFT and E2E limit set: a batch result arrives whole, so its first token and its last arrive together."""
    return [(f"{limit.metric.upper()} p{limit.percentile}", limit.limit_seconds) for limit in slo.limits()
            if limit.metric in ("ttft", "e2e")]


def choose_batch(*, provider: str, has_batch_price: bool, batch_allowed: bool, use_batch_api: bool,
                 slo: Slo | None) -> BatchChoice:
    """The batch API only where its window fits every TTFT/E2E limit (module docstring); `slo` None: no limit."""
    if not (batch_allowed and has_batch_price and use_batch_api):
        return BatchChoice(batch=False)
    window = batch_window(provider)
    if window.window_seconds is None:
        return BatchChoice(batch=False, window=window, declined=(
            f"batch API not used: {provider} publishes no bound on its batch completion window ({window.source}), "
            "so it cannot be shown to meet the TTFT limit"))
    over = [(name, limit) for name, limit in (_window_limits(slo) if slo else [])
            if limit < window.window_seconds * (1 - 1e-9)]
    if over:
        limits = ", ".join(f"the {name} limit of {fmt_window(limit)}" for name, limit in over)
        return BatchChoice(batch=False, window=window, declined=(
            f"batch API not used: its {fmt_window(window.window_seconds)} completion window exceeds {limits}; "
            "priced at the interactive rates"))
    return BatchChoice(batch=True, window=window)
