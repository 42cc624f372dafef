"""A batch API's latency is its provider's completion window: the batch price only where the window fits the
SLO's TTFT/E2E limits, else the interactive price with the interactive evidence and a note (pricing/batch_window.py)."""

from __future__ import annotations

from typing import Any

import pytest

from costmodel.decision.evidence import slo_verdict
from costmodel.decision.latency import batch_evidence
from costmodel.decision.rank import decide
from costmodel.pricing import load_api_prices
from costmodel.pricing.api_cost import api_workload_cost
from costmodel.pricing.batch_window import batch_window, choose_batch, load_batch_windows
from costmodel.scenario import Workload, parse_scenario
from costmodel.scenario.slo import Slo

DAY_S = 24 * 3600.0  # every sourced window in the table is "within 24 hours"
PROMPT, OUTPUT, REQUESTS_PER_DAY = 4000, 400, 50_000


def _slo(**limits: float) -> Slo:
    return Slo.model_validate({"ttft_p90_seconds": DAY_S, "tpot_p90_seconds": 0.5, **limits})


def _choose(slo: Slo | None, *, provider: str = "openai", **flags: bool) -> Any:
    kwargs = {"has_batch_price": True, "batch_allowed": True, "use_batch_api": True, **flags}
    return choose_batch(provider=provider, slo=slo, **kwargs)


def test_every_batch_priced_provider_has_a_sourced_window_or_none() -> None:
    providers = {row.id.split("/")[0] for row in load_api_prices().rows if row.has_batch}
    assert providers <= load_batch_windows().keys()
    for provider in providers:
        window = load_batch_windows()[provider]
        assert window.source.startswith("https://") and "read 2026-12-02" in window.source
        assert window.window_seconds in (DAY_S, None)
    assert batch_window("nobody").window_seconds is None


def test_batch_only_where_the_window_fits_every_ttft_and_e2e_limit() -> None:
    assert _choose(_slo()).batch  # TTFT p90 = the window: fits
    assert _choose(None).batch  # no SLO: no limit to exceed
    tight = _choose(_slo(ttft_p90_seconds=60.0))
    assert not tight.batch and tight.declined is not None
    assert "24 h completion window exceeds the TTFT p90 limit of 60.00 s" in tight.declined
    p99 = _choose(_slo(ttft_p99_seconds=DAY_S - 1))  # p90 fits, p99 one second short
    assert not p99.batch and p99.declined is not None and "TTFT p99" in p99.declined
    e2e = _choose(_slo(e2e_p90_seconds=3600.0))  # a result arrives whole: its last token with its first
    assert not e2e.batch and e2e.declined is not None and "E2E p90 limit of 1 h" in e2e.declined
    assert _choose(_slo(tpot_p90_seconds=1e-3)).batch  # TPOT does not bind a result that arrives whole


def test_no_batch_without_permission_price_or_sourced_window() -> None:
    for flags in ({"batch_allowed": False}, {"has_batch_price": False}, {"use_batch_api": False}):
        choice = _choose(_slo(), **flags)
        assert not choice.batch and choice.declined is None  # not a candidate: nothing to explain
    xai = _choose(_slo(), provider="xai")  # "typically within 24 hours": no bound
    assert not xai.batch and xai.declined is not None and "publishes no bound" in xai.declined


def test_the_batch_price_follows_the_choice() -> None:
    row = load_api_prices().get("openai/gpt-5-mini")
    assert row.batch_input_usd_per_mtok is not None and row.batch_output_usd_per_mtok is not None
    workload = Workload.model_validate({
        "requests_per_day": REQUESTS_PER_DAY, "prompt_tokens": {"kind": "fixed", "tokens": PROMPT},
        "output_tokens": {"kind": "fixed", "tokens": OUTPUT}, "peak_to_mean_ratio": 1.0, "batch_allowed": True})
    batch_usd = (PROMPT * row.batch_input_usd_per_mtok + OUTPUT * row.batch_output_usd_per_mtok) / 1e6
    list_usd = (PROMPT * row.input_usd_per_mtok + OUTPUT * row.output_usd_per_mtok) / 1e6
    fits = api_workload_cost(row, workload, slo=_slo())
    assert fits.batch and fits.usd_per_request == pytest.approx(batch_usd, rel=1e-12)
    too_tight = api_workload_cost(row, workload, slo=_slo(ttft_p90_seconds=60.0))
    assert not too_tight.batch and too_tight.usd_per_request == pytest.approx(list_usd, rel=1e-12)
    assert not too_tight.rate_limit.batch  # interactive: the per-minute limits apply again


def test_the_verdict_reads_the_window() -> None:
    evidence = batch_evidence(load_batch_windows()["openai"])
    assert evidence.source == "published" and evidence.ttft.point == evidence.ttft.high == DAY_S
    assert evidence.ttft.low is None and evidence.tpot.point is None and not evidence.tpot_applies
    assert slo_verdict(evidence, _slo(tpot_p90_seconds=1e-3)).status == "likely_meets"  # TPOT not judged
    # Judged against a limit under the window (never priced so, but the verdict must read the window):
    over = slo_verdict(evidence, _slo(ttft_p90_seconds=3600.0))
    assert over.status == "unverified" and "up to 86400.00 s" in over.reason
    assert batch_evidence(load_batch_windows()["xai"]).source == "none"


def _scenario(*, ttft_p90_seconds: float, batch_allowed: bool = True) -> Any:
    return parse_scenario({
        "name": "batch", "as_of": "2026-12-01",
        "workload": {"requests_per_day": REQUESTS_PER_DAY, "prompt_tokens": {"kind": "fixed", "tokens": PROMPT},
                     "output_tokens": {"kind": "fixed", "tokens": OUTPUT}, "peak_to_mean_ratio": 1.0,
                     "batch_allowed": batch_allowed},
        "slo": {"ttft_p90_seconds": ttft_p90_seconds, "tpot_p90_seconds": 0.5},
        "options": [{"kind": "api", "name": "haiku", "price_id": "anthropic/claude-haiku-4-5"}],
    })


def test_decision_prices_and_judges_the_same_route() -> None:
    row = load_api_prices().get("anthropic/claude-haiku-4-5")
    assert row.batch_input_usd_per_mtok is not None and row.batch_output_usd_per_mtok is not None
    requests = REQUESTS_PER_DAY * 365.25 / 12
    batch_month = requests * (PROMPT * row.batch_input_usd_per_mtok + OUTPUT * row.batch_output_usd_per_mtok) / 1e6
    list_month = requests * (PROMPT * row.input_usd_per_mtok + OUTPUT * row.output_usd_per_mtok) / 1e6

    day = decide(_scenario(ttft_p90_seconds=DAY_S)).option("haiku")
    assert day.priced_via_batch_api and day.usd_per_month == pytest.approx(batch_month, rel=1e-9)
    assert day.latency_source == "published" and day.slo_status == "likely_meets"
    assert day.ttft_p90_seconds == day.ttft_p90_seconds_high == DAY_S and day.tpot_p90_seconds is None
    assert "docs.anthropic.com" in day.slo_reason and day.contract()["priced_via_batch_api"] is True

    minute = decide(_scenario(ttft_p90_seconds=60.0)).option("haiku")
    interactive = decide(_scenario(ttft_p90_seconds=60.0, batch_allowed=False)).option("haiku")
    assert not minute.priced_via_batch_api and minute.usd_per_month == pytest.approx(list_month, rel=1e-9)
    assert any("batch API not used: its 24 h completion window exceeds the TTFT p90 limit" in n for n in minute.notes)
    # Priced interactively, it is judged on exactly the interactive evidence
    for field in ("usd_per_month", "slo_status", "latency_source", "ttft_p90_seconds", "ttft_p90_seconds_high",
                  "tpot_p90_seconds"):
        assert getattr(minute, field) == getattr(interactive, field), field
    assert minute.ttft_p90_seconds is not None and minute.ttft_p90_seconds < 60.0


def test_the_window_sheet_is_validated_and_names_the_bad_cell(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each bundled row carries its page and the date it was read; a bad window is refused with its row and field."""
    import pytest

    from costmodel.errors import CostmodelError

    for window in load_batch_windows().values():
        assert "https://" in window.source and "read 2026-12-02" in window.source
    bad = tmp_path / "windows.csv"
    bad.write_text("provider,window_seconds,quote,source_url,checked\n"
                   "openai,-5,within 24 hours,https://example.org,2026-12-02\n", encoding="utf-8")
    with pytest.raises(CostmodelError, match=r"row 2 \(openai\).*window_seconds"):
        load_batch_windows(str(bad))
