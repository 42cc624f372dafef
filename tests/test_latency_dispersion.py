"""The published latency dispersion sheet: validation, provenance, figures checked against their sources
(written out here), and the p90/p50 band lookup with its fallbacks."""

from __future__ import annotations

import datetime as dt

import pytest

from costmodel.errors import CostmodelError
from costmodel.pricing import load_api_prices
from costmodel.pricing.dispersion import (
    SERVED_ENGINE,
    default_dispersion_path,
    dispersion_band,
    load_latency_dispersion,
    parse_dispersion_text,
)

HEADER = ("scope,metric,percentile,p90_over_p50,median_seconds,upper_seconds,workload,source,source_url,as_of,"
          "checked,notes")


def _row(scope: str = "fireworks", metric: str = "ttft", percentile: str = "p90", ratio: str = "1.5",
         median: str = "0.2", upper: str = "0.3", as_of: str = "2026-01-01", checked: str = "2026-12-01") -> str:
    return f"{scope},{metric},{percentile},{ratio},{median},{upper},w,s,https://x.example,{as_of},{checked},"


def _sheet(*rows: str):
    return parse_dispersion_text("\n".join([HEADER, *rows]), where="t.csv")


def test_every_row_is_sourced_dated_and_scoped_to_a_sheet_provider_or_served_engines() -> None:
    sheet = load_latency_dispersion()
    providers = {row.provider for row in load_api_prices().rows}
    assert len(sheet.rows) >= 10
    for row in sheet.rows:
        assert row.scope in providers or row.scope == SERVED_ENGINE, row.scope
        assert row.source_url.startswith("https://") and row.workload and row.source
        assert row.as_of <= row.checked <= dt.date(2026, 12, 1)
        assert row.p90_over_p50 > 1.0
        assert row.p90_over_p50 == pytest.approx(row.upper_seconds / row.median_seconds, rel=5e-3)


def test_figures_match_their_sources() -> None:
    sheet = load_latency_dispersion()
    # ray-project/llmperf-leaderboard raw_data/summary/fireworks_70b.json: results_ttft_s_quantiles_p50
    # 0.5165989695000235, _p90 0.6361946695999222 -> 0.63619 / 0.51660 = 1.2315.
    fireworks = [r for r in sheet.for_scope("fireworks", metric="ttft") if "fireworks_70b" in r.source_url][0]
    assert (fireworks.median_seconds, fireworks.upper_seconds) == (0.516599, 0.636195)
    assert fireworks.p90_over_p50 == pytest.approx(0.6361946695999222 / 0.5165989695000235, abs=1e-4)
    # groq_70b.json: results_inter_token_latency_s_quantiles_p50 0.00532081, _p90 0.00616195 -> 1.1581.
    groq = sheet.for_scope("groq", metric="tpot")[0]
    assert groq.p90_over_p50 == pytest.approx(0.00616195 / 0.00532081, abs=1e-4)
    # ai.wmx.dev/benchmarks, concurrency 4: "TTFT p50 50.1 | TTFT p95 85.4" ms -> 85.4 / 50.1 = 1.7046.
    engine = [r for r in sheet.for_scope(SERVED_ENGINE, metric="ttft") if "concurrency 4" in r.workload][0]
    assert (engine.percentile, engine.median_seconds, engine.upper_seconds) == ("p95", 0.0501, 0.0854)
    assert engine.p90_over_p50 == pytest.approx(85.4 / 50.1, abs=1e-4)


def test_band_of_a_provider_is_the_range_of_its_own_ratios() -> None:
    sheet = load_latency_dispersion()
    # Fireworks TTFT on LLMPerf: 7B 0.358829/0.330713 = 1.0850, 13B 0.572351/0.497591 = 1.1502,
    # 70B 0.636195/0.516599 = 1.2315.
    assert dispersion_band(sheet, provider="fireworks", metric="ttft") == pytest.approx((1.0850, 1.2315))


def test_band_of_an_unlisted_provider_spans_every_provider_but_not_served_engines() -> None:
    sheet = load_latency_dispersion()
    # deepinfra has no rows: every provider's TTFT rows, of which the p90 ones (the sheet has some).
    providers = [r.p90_over_p50 for r in sheet.rows
                 if r.metric == "ttft" and r.scope != SERVED_ENGINE and r.percentile == "p90"]
    assert providers and dispersion_band(sheet, provider="deepinfra", metric="ttft") == (min(providers), max(providers))
    # openai has its own (p95) row: 1.094 / 0.645 s (jonathanwrede.de, 7 days of probes) = 1.6961.
    assert dispersion_band(sheet, provider="openai", metric="ttft") == pytest.approx((1.6961, 1.6961), abs=1e-4)
    synthetic = _sheet(_row(scope="groq", ratio="1.5", upper="0.3"),
                       _row(scope=SERVED_ENGINE, ratio="3", upper="0.6"))
    assert dispersion_band(synthetic, provider="anthropic", metric="ttft") == (1.5, 1.5)
    assert dispersion_band(synthetic, provider=SERVED_ENGINE, metric="ttft") == (3.0, 3.0)


def test_band_is_none_without_rows_and_prefers_p90_over_wider_percentiles() -> None:
    synthetic = _sheet(_row(scope="groq", percentile="p90", ratio="1.5", upper="0.3"),
                       _row(scope="groq", percentile="p99", ratio="4", upper="0.8"),
                       _row(scope="together", percentile="p99", ratio="2", upper="0.4"))
    assert dispersion_band(synthetic, provider="groq", metric="ttft") == (1.5, 1.5)
    assert dispersion_band(synthetic, provider="together", metric="ttft") == (2.0, 2.0)
    assert dispersion_band(synthetic, provider="groq", metric="tpot") is None
    assert dispersion_band(synthetic, provider=SERVED_ENGINE, metric="ttft") is None


def test_band_rejects_an_unknown_metric() -> None:
    with pytest.raises(CostmodelError, match="metric 'e2e'"):
        dispersion_band(load_latency_dispersion(), provider="groq", metric="e2e")


def test_bundled_file_is_the_default() -> None:
    assert default_dispersion_path().name == "latency_dispersion.csv" and default_dispersion_path().exists()


@pytest.mark.parametrize(("row", "match"), [
    (_row(ratio="1.4"), "upper_seconds / median_seconds"),
    (_row(ratio="1.0", upper="0.2"), "p90_over_p50"),
    (_row(ratio="0.5", upper="0.1"), "p90_over_p50"),
    (_row(ratio="nan"), "p90_over_p50"),
    (_row(median="inf"), "median_seconds"),
    (_row(median="-0.2", ratio="1.5"), "median_seconds"),
    (_row(percentile="p50"), "percentile"),
    (_row(metric="e2e"), "metric"),
    (_row(scope="Open AI"), "scope"),
    (_row(as_of="2026-12-02", checked="2026-12-01"), "checked"),
    (_row().replace("https://x.example", "http://x.example"), "source_url"),
])
def test_bad_rows_are_rejected_naming_the_field(row: str, match: str) -> None:
    with pytest.raises(CostmodelError, match=match):
        _sheet(row)


def test_unknown_column_and_empty_sheet_are_rejected() -> None:
    with pytest.raises(CostmodelError, match="unknown column"):
        parse_dispersion_text(HEADER + ",extra\n" + _row() + ",x", where="t.csv")
    with pytest.raises(CostmodelError, match="no rows"):
        parse_dispersion_text(HEADER, where="t.csv")
    with pytest.raises(CostmodelError, match="not found"):
        load_latency_dispersion("/nonexistent/latency_dispersion.csv")
