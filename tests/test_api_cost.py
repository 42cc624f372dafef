"""API cost arithmetic, checked against hand computations written out below."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.errors import CostmodelError
from costmodel.pricing import (
    ApiPriceRow,
    api_option_cost,
    api_request_cost,
    api_workload_cost,
    load_api_prices,
)
from costmodel.scenario import ApiOption, FixedTokens, UniformTokens, Workload


def _row(**fields: Any) -> ApiPriceRow:
    base: dict[str, Any] = {
        "id": "test/model", "provider": "test", "model": "model", "input_usd_per_mtok": 1.0,
        "output_usd_per_mtok": 4.0, "source": "manual", "source_version": "test", "source_key": "model",
        "checked": dt.date(2026, 11, 29),
    }
    return ApiPriceRow.model_validate({**base, **fields})


def _workload(**fields: Any) -> Workload:
    base: dict[str, Any] = {
        "requests_per_day": 10_000, "prompt_tokens": {"kind": "fixed", "tokens": 2000},
        "output_tokens": {"kind": "fixed", "tokens": 500}, "peak_to_mean_ratio": 2.0,
    }
    return Workload.model_validate({**base, **fields})


# Provider "openai": the batch API is used only where the provider's sourced completion window fits the SLO
# (pricing/batch_window.py); an unknown provider has no window, hence no batch price.
GPT_4O = _row(id="openai/gpt-4o", provider="openai", input_usd_per_mtok=2.5, cache_read_usd_per_mtok=1.25, output_usd_per_mtok=10.0,
              batch_input_usd_per_mtok=1.25, batch_output_usd_per_mtok=5.0)  # LiteLLM gpt-4o, per Mtok
SONNET = _row(input_usd_per_mtok=3.0, cache_read_usd_per_mtok=0.3, cache_write_usd_per_mtok=3.75,
              output_usd_per_mtok=15.0)  # Anthropic Claude Sonnet 4.5, 5-minute cache writes
GEMINI_PRO = _row(input_usd_per_mtok=1.25, cache_read_usd_per_mtok=0.125, output_usd_per_mtok=10.0,
                  long_context_threshold_tokens=200_000, long_context_input_usd_per_mtok=2.5,
                  long_context_cache_read_usd_per_mtok=0.25, long_context_output_usd_per_mtok=15.0)


def test_request_with_cache_reads() -> None:
    cost = api_request_cost(GPT_4O, prompt_tokens=10_000, cached_prompt_tokens=4000, output_tokens=500)
    # (10,000 - 4,000) x 2.5 + 4,000 x 1.25 + 500 x 10 = 15,000 + 5,000 + 5,000 = 25,000 USD per 1e6 tokens
    assert cost.total_usd == pytest.approx(0.025)
    assert (cost.input_usd, cost.cache_read_usd, cost.output_usd) == pytest.approx((0.015, 0.005, 0.005))


def test_request_with_cache_writes_bills_written_tokens_at_the_write_rate() -> None:
    cost = api_request_cost(SONNET, prompt_tokens=10_000, cached_prompt_tokens=6000, cache_write_tokens=2000,
                            output_tokens=1000)
    # uncached 2,000 x 3 = 6,000; read 6,000 x 0.3 = 1,800; write 2,000 x 3.75 = 7,500; out 1,000 x 15 = 15,000
    # total 30,300 / 1e6 = 0.0303 USD
    assert cost.total_usd == pytest.approx(0.0303)
    assert cost.cache_write_usd == pytest.approx(0.0075)


def test_batch_halves_every_rate_of_gpt_4o() -> None:
    cost = api_request_cost(GPT_4O, prompt_tokens=10_000, cached_prompt_tokens=4000, output_tokens=500, batch=True)
    # batch input 1.25 / 2.5 = 0.5 scales input and cache reads; batch output 5 / 10 = 0.5: 25,000 x 0.5 = 12,500
    assert cost.total_usd == pytest.approx(0.0125)
    with pytest.raises(CostmodelError, match="no batch API price"):
        api_request_cost(SONNET, prompt_tokens=1, output_tokens=1, batch=True)


def test_long_context_tier_applies_to_the_whole_request() -> None:
    at_threshold = api_request_cost(GEMINI_PRO, prompt_tokens=200_000, output_tokens=2000)
    # not above the threshold: 200,000 x 1.25 + 2,000 x 10 = 250,000 + 20,000 -> 0.27 USD
    assert at_threshold.total_usd == pytest.approx(0.27) and not at_threshold.long_context
    above = api_request_cost(GEMINI_PRO, prompt_tokens=250_000, cached_prompt_tokens=50_000, output_tokens=2000)
    # all tokens at tier rates: 200,000 x 2.5 + 50,000 x 0.25 + 2,000 x 15 = 500,000 + 12,500 + 30,000 -> 0.5425
    assert above.total_usd == pytest.approx(0.5425) and above.long_context


def test_bundled_sheet_row_gives_the_same_answer() -> None:
    row = load_api_prices().get("google/gemini-2.5-pro")
    assert api_request_cost(row, prompt_tokens=250_000, cached_prompt_tokens=50_000, output_tokens=2000).total_usd == (
        pytest.approx(0.5425)
    )


def test_workload_month_and_blended_price() -> None:
    workload = _workload(cached_prompt_fraction=0.25)
    cost = api_workload_cost(_row(cache_read_usd_per_mtok=0.1), workload)
    # per request: 1,500 x 1.0 + 500 x 0.1 + 500 x 4.0 = 3,550 USD per 1e6 tokens = 0.00355 USD
    # requests/month: 10,000 x 30.4375 = 304,375; USD/month = 304,375 x 0.00355 = 1,080.53125
    # tokens/month: 304,375 x 2,500 = 760,937,500 -> 1,080.53125 / 760.9375 = 1.42 USD per million tokens
    assert cost.usd_per_request == pytest.approx(0.00355)
    assert cost.requests_per_month == pytest.approx(304_375)
    assert cost.usd_per_month == pytest.approx(1080.53125)
    assert cost.usd_per_mtok == pytest.approx(1.42)
    assert cost.usd_per_output_mtok == pytest.approx(1080.53125 / (304_375 * 500) * 1e6)  # 7.1
    assert not cost.batch and cost.long_context_request_fraction == 0


def test_long_context_share_of_a_uniform_prompt_distribution() -> None:
    workload = _workload(prompt_tokens={"kind": "uniform", "low_tokens": 150_001, "high_tokens": 250_000},
                         output_tokens={"kind": "fixed", "tokens": 1000})
    cost = api_workload_cost(GEMINI_PRO, workload)
    # 100,000 equally likely counts; 50,000 exceed 200,000 -> P = 0.5.
    # E[T; T > 200k] = 0.5 x (200,001 + 250,000) / 2 = 112,500.25; E[T] = 200,000.5 -> below part 87,500.25
    # E[cost] = 1.25 x 87,500.25 + 2.5 x 112,500.25 + 1,000 x (10 x 0.5 + 15 x 0.5)
    #         = 109,375.3125 + 281,250.625 + 12,500 = 403,125.9375 USD per 1e6 tokens
    assert cost.long_context_request_fraction == pytest.approx(0.5)
    assert cost.usd_per_request == pytest.approx(0.4031259375)


def test_closed_form_equals_averaging_every_request() -> None:
    dist = UniformTokens(low_tokens=195_001, high_tokens=205_000)
    workload = _workload(prompt_tokens=dist.model_dump(), output_tokens={"kind": "fixed", "tokens": 700},
                         cached_prompt_fraction=0.3, cache_write_prompt_fraction=0.1)
    row = GEMINI_PRO.model_copy(update={"cache_write_usd_per_mtok": 0.4})
    brute = sum(
        api_request_cost(row, prompt_tokens=t, cached_prompt_tokens=0.3 * t, cache_write_tokens=0.1 * t,
                         output_tokens=700).total_usd
        for t in range(dist.low_tokens, dist.high_tokens + 1)
    ) / 10_000
    assert api_workload_cost(row, workload).usd_per_request == pytest.approx(brute, rel=1e-12)


def test_batch_only_when_the_workload_allows_it() -> None:
    row = GPT_4O
    assert not api_workload_cost(row, _workload()).batch
    allowed = _workload(batch_allowed=True)
    on = api_workload_cost(row, allowed)
    assert on.batch and on.usd_per_request == pytest.approx(api_workload_cost(row, _workload()).usd_per_request / 2)
    assert not api_workload_cost(row, allowed, use_batch_api=False).batch
    assert not api_workload_cost(SONNET, allowed).batch  # no batch price on that row: list price


def test_rate_limit_at_the_peak_minute() -> None:
    workload = _workload(requests_per_day=1_440_000, peak_to_mean_ratio=3.0)
    # mean 1,440,000 / 1,440 min = 1,000 requests/min; peak x3 = 3,000/min; tokens 3,000 x 2,500 = 7.5M/min
    cost = api_workload_cost(_row(requests_per_minute=2000, tokens_per_minute=8_000_000), workload)
    limit = cost.rate_limit
    assert limit.peak_requests_per_minute == pytest.approx(3000)
    assert limit.peak_tokens_per_minute == pytest.approx(7.5e6)
    assert limit.throttled and "3,000 requests/min exceeds the 2,000 limit" in limit.reason
    assert "tokens/min" not in limit.reason
    raised = api_workload_cost(_row(requests_per_minute=2000), workload, requests_per_minute_limit=5000)
    assert not raised.rate_limit.throttled and raised.rate_limit.reason == "within the per-minute limits"
    batch = api_workload_cost(GPT_4O.model_copy(update={"requests_per_minute": 10}), _workload(batch_allowed=True))
    assert batch.batch and not batch.rate_limit.throttled


def test_api_option_uses_its_row_and_overrides() -> None:
    sheet = load_api_prices()
    workload = _workload(requests_per_day=1_440_000, peak_to_mean_ratio=3.0)
    option = ApiOption(name="flash", price_id="google/gemini-2.5-flash", requests_per_minute_limit=2500)
    cost = api_option_cost(option, workload, sheet, slo=None)
    assert cost.price_id == "google/gemini-2.5-flash" and cost.rate_limit.requests_per_minute_limit == 2500
    assert cost.rate_limit.throttled
    with pytest.raises(CostmodelError, match="unknown API price id"):
        api_option_cost(option.model_copy(update={"price_id": "google/gemini-flash"}), workload, sheet, slo=None)


@settings(max_examples=60, deadline=None)
@given(
    requests_per_day=st.floats(min_value=1.0, max_value=1e9),
    months_ahead=st.integers(min_value=0, max_value=24),
    prompt=st.integers(min_value=1, max_value=400_000),
    cached=st.floats(min_value=0.0, max_value=0.9),
)
def test_blended_price_does_not_depend_on_volume(
    requests_per_day: float, months_ahead: int, prompt: int, cached: float
) -> None:
    reference = _workload(requests_per_day=1000.0, prompt_tokens=FixedTokens(tokens=prompt).model_dump(),
                          cached_prompt_fraction=cached, growth_per_month=0.1)
    scaled = reference.model_copy(update={"requests_per_day": requests_per_day})
    expected = api_workload_cost(GEMINI_PRO, reference).usd_per_mtok
    got = api_workload_cost(GEMINI_PRO, scaled, months_ahead=months_ahead)
    assert got.usd_per_mtok == pytest.approx(expected, rel=1e-9)
    assert got.usd_per_month == pytest.approx(
        expected * got.tokens_per_month / 1e6, rel=1e-9
    )
