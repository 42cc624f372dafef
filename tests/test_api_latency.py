"""The published API latency sheet: validation, provenance of every row, lookups, and figures checked
against their sources (written out here)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from costmodel.errors import CostmodelError
from costmodel.pricing import load_api_latency, load_api_prices
from costmodel.pricing.latency import default_latency_path, parse_latency_text

HEADER = ("price_id,ttft_seconds,output_tokens_per_second,percentile,prompt_tokens,output_tokens,parallelism,"
          "source,source_url,as_of,notes")
GOOD = "groq/gpt-oss-20b,0.8,778,p50,,,,Vercel AI Gateway,https://vercel.com/ai-gateway/models/gpt-oss-20b,2026-12-01,"


def test_every_row_is_sourced_dated_and_names_an_api_price_row() -> None:
    sheet = load_api_latency()
    prices = load_api_prices()
    assert len(sheet.rows) >= 20
    for row in sheet.rows:
        prices.get(row.price_id)  # raises on an id the price sheet lacks
        assert row.source and row.source_url.startswith("https://")
        assert row.as_of <= dt.date(2026, 12, 2)  # no row dated after the last read (2026-12-02)
        assert row.ttft_seconds is not None or row.output_tokens_per_second is not None


def test_figures_match_their_sources() -> None:
    sheet = load_api_latency()
    # artificialanalysis.ai/models/gpt-oss-120b-low/providers: Cerebras "1,844.1 t/s", "1.54 s" (lowest latency).
    cerebras = sheet.for_price_id("cerebras/gpt-oss-120b")[0]
    assert (cerebras.output_tokens_per_second, cerebras.ttft_seconds, cerebras.percentile) == (1844.1, 1.54, "p50")
    # vercel.com/ai-gateway/models/gpt-oss-20b, Groq: "0.8s", "778tps" (P50 on live gateway traffic).
    vercel = [r for r in sheet.for_price_id("groq/gpt-oss-20b") if "vercel.com" in r.source_url][0]
    assert (vercel.ttft_seconds, vercel.output_tokens_per_second) == (0.8, 778)
    # krabarena.org claim 592e1fd1: "Groq · Llama 3.1 8B Instruct | 157 ms" (~700-token prefix).
    krab = [r for r in sheet.for_price_id("groq/llama-3.1-8b") if "krabarena" in r.source_url][0]
    assert (krab.ttft_seconds, krab.prompt_tokens) == (0.157, 700)
    # vercel.com/ai-gateway/models/deepseek-r1, DeepInfra: "0.5s", "32tps" (P50 on live gateway traffic).
    r1 = sheet.for_price_id("deepinfra/deepseek-r1")[0]
    assert (r1.ttft_seconds, r1.output_tokens_per_second, r1.percentile) == (0.5, 32, "p50")
    # Jwrede/llmprobe blog/llm-latency-benchmark.md: Mistral Small (2603) TTFT p50 2,735 ms, 191.6 tok/s, max 20 tokens.
    small = sheet.for_price_id("mistral/mistral-small-2603")[0]
    assert (small.ttft_seconds, small.output_tokens_per_second, small.output_tokens) == (2.735, 191.6, 20)
    # console.groq.com/docs/models.md, OpenAI GPT-OSS 120B card: "Token Speed ~500 tps" (Groq's own figure, no TTFT).
    groq = [r for r in sheet.for_price_id("groq/gpt-oss-120b") if "console.groq.com" in r.source_url][0]
    assert (groq.ttft_seconds, groq.output_tokens_per_second) == (None, 500)
    # artificialanalysis.ai/models/mistral-7b-instruct/providers/prompt-options/single/medium: Together.ai
    # "87.4 t/s" (output speed) and "0.22 s" (time to first token).
    together = sheet.for_price_id("together/mistral-7b")[0]
    assert (together.ttft_seconds, together.output_tokens_per_second, together.parallelism) == (0.22, 87.4, 1)


def test_lookup_sorts_by_prompt_length_unstated_last() -> None:
    rows = load_api_latency().for_price_id("openai/gpt-4o")
    assert [r.prompt_tokens for r in rows] == [500, 700, None]
    sheet = load_api_latency()
    unmeasured = next(i for i in load_api_prices().ids() if i not in sheet.price_ids())
    assert sheet.for_price_id(unmeasured) == ()


def test_bundled_file_is_the_default() -> None:
    assert default_latency_path().name == "api_latency.csv" and default_latency_path().exists()


@pytest.mark.parametrize(("row", "match"), [
    ("groq/gpt-oss-20b,nan,778,p50,,,,V,https://x.example,2026-12-01,", "ttft_seconds"),
    ("groq/gpt-oss-20b,-1,778,p50,,,,V,https://x.example,2026-12-01,", "ttft_seconds"),
    ("groq/gpt-oss-20b,0.8,inf,p50,,,,V,https://x.example,2026-12-01,", "output_tokens_per_second"),
    ("groq/gpt-oss-20b,,,p50,,,,V,https://x.example,2026-12-01,", "give ttft_seconds"),
    ("groq/gpt-oss-20b,0.8,778,p42,,,,V,https://x.example,2026-12-01,", "percentile"),
    ("groq/gpt-oss-20b,0.8,778,p50,0,,,V,https://x.example,2026-12-01,", "prompt_tokens"),
    ("groq/gpt-oss-20b,0.8,778,p50,,,,V,http://x.example,2026-12-01,", "source_url"),
    ("groq/gpt-oss-20b,0.8,778,p50,,,,V,https://x.example,,", "as_of"),
])
def test_bad_rows_name_the_field(row: str, match: str) -> None:
    with pytest.raises(CostmodelError, match=match):
        parse_latency_text(f"{HEADER}\n{row}\n", where="t.csv")


def test_comments_unknown_columns_and_empty_files(tmp_path: Path) -> None:
    sheet = parse_latency_text(f"# a comment\n{HEADER}\n{GOOD}\n", where="t.csv")
    assert sheet.price_ids() == ("groq/gpt-oss-20b",)
    with pytest.raises(CostmodelError, match="unknown column"):
        parse_latency_text(f"{HEADER},extra\n{GOOD},x\n", where="t.csv")
    with pytest.raises(CostmodelError, match="no rows"):
        parse_latency_text(f"{HEADER}\n", where="t.csv")
    with pytest.raises(CostmodelError, match="not found"):
        load_api_latency(tmp_path / "missing.csv")
