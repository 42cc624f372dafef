"""scripts/import_api_prices.py's cross-check policy on small fake sources (no wheels needed):
the provider's page wins, genai-prices is kept where a third page agrees, LiteLLM's tier-less rate
limits are dropped, retirements and price dates come from the row spec."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from scripts.api_price_rows import ROW_SPECS, RowSpec
from scripts.import_api_prices import build_row

DAY = dt.date(2026, 12, 1)
VERSIONS = {"litellm": "litellm==1.110.2 (json)", "genai-prices": "genai-prices==0.2.3"}
SPECS = {spec.row_id: spec for spec in ROW_SPECS}


def _litellm(key: str, *, usd_in: float, usd_out: float, **extra: Any) -> dict[str, Any]:
    provider = key.split("/")[0] if "/" in key else "openai"
    return {key: {"litellm_provider": provider, "input_cost_per_token": usd_in / 1e6,
                  "output_cost_per_token": usd_out / 1e6, **extra}}


def _genai(provider_id: str, model_id: str, *, usd_in: float, usd_out: float) -> list[Any]:
    price = SimpleNamespace(input_mtok=usd_in, output_mtok=usd_out, cache_read_mtok=None, cache_write_mtok=None)
    model = SimpleNamespace(id=model_id, context_window=None, price_variants=None,
                            get_prices=lambda when, context=None: price)
    return [SimpleNamespace(id=provider_id, models=[model])]


def _build(spec: RowSpec, litellm: dict[str, Any], providers: list[Any]) -> Any:
    return build_row(spec, litellm, providers, versions=VERSIONS, day=DAY)


def test_provider_page_wins_and_both_sources_are_compared() -> None:
    spec = SPECS["fireworks/llama-3.1-8b"]
    assert spec.litellm_key and spec.genai_key
    row = _build(spec, _litellm(spec.litellm_key, usd_in=0.1, usd_out=0.1), _genai(*spec.genai_key, usd_in=0.2, usd_out=0.2))
    assert (row.input_usd_per_mtok, row.output_usd_per_mtok, row.source) == (0.2, 0.2, "provider-page")
    assert row.source_url == "https://fireworks.ai/pricing" and row.checked == DAY
    assert row.disagreement == "input: provider-page 0.2 vs litellm 0.1; output: provider-page 0.2 vs litellm 0.1"


def test_genai_prices_kept_where_a_third_page_agrees() -> None:
    spec = SPECS["together/llama-3.3-70b"]
    assert spec.litellm_key and spec.genai_key and spec.prefer_genai_prices
    row = _build(spec, _litellm(spec.litellm_key, usd_in=1.04, usd_out=1.04),
                 _genai(*spec.genai_key, usd_in=0.88, usd_out=0.88))
    assert (row.input_usd_per_mtok, row.source, row.crosscheck_input_usd_per_mtok) == (0.88, "genai-prices", 1.04)
    assert row.disagreement == "input: genai-prices 0.88 vs litellm 1.04; output: genai-prices 0.88 vs litellm 1.04"


def test_litellm_rate_limits_are_dropped_and_paid_tier_limits_kept() -> None:
    spec = SPECS["google/gemini-2.5-flash-lite"]
    assert spec.litellm_key and spec.genai_key
    row = _build(spec, _litellm(spec.litellm_key, usd_in=0.1, usd_out=0.4, rpm=15, tpm=250_000),
                 _genai(*spec.genai_key, usd_in=0.1, usd_out=0.4))
    assert (row.requests_per_minute, row.tokens_per_minute, row.rate_limit_tier) == (4000, 4_000_000, "tier 1 (paid)")
    pro = SPECS["google/gemini-2.5-pro"]
    assert pro.litellm_key and pro.genai_key
    pro_row = _build(pro, _litellm(pro.litellm_key, usd_in=1.25, usd_out=10, rpm=2000, tpm=800_000),
                     _genai(*pro.genai_key, usd_in=1.25, usd_out=10))
    assert pro_row.requests_per_minute is None and pro_row.rate_limit_tier is None


def test_retirement_price_date_and_5_percent_rule() -> None:
    spec = SPECS["deepseek/deepseek-v3"]
    assert spec.litellm_key
    row = _build(spec, _litellm(spec.litellm_key, usd_in=0.27, usd_out=1.1), [])
    assert row.deprecation_date == dt.date(2025, 8, 21) and "api-docs.deepseek.com" in (row.deprecation_source or "")
    haiku = SPECS["anthropic/claude-haiku-5-5"]
    assert haiku.litellm_key and haiku.genai_key
    # 0.100 vs 0.104 is 3.8% apart: not a disagreement
    haiku_row = _build(haiku, _litellm(haiku.litellm_key, usd_in=0.1, usd_out=0.5),
                       _genai(*haiku.genai_key, usd_in=0.104, usd_out=0.5))
    assert haiku_row.price_as_of == dt.date(2026, 10, 7) and haiku_row.disagreement is None


def test_page_only_rows_take_their_model_name_and_date() -> None:
    row = _build(SPECS["sambanova/deepseek-v3.1"], {}, [])
    assert (row.model, row.source, row.price_as_of) == ("DeepSeek-V3.1", "provider-page", dt.date(2026, 10, 7))
    lava = _build(SPECS["deepinfra/llama-4-scout"], {}, [])
    assert (lava.model, lava.source, lava.input_usd_per_mtok) == ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "manual", 0.08)
