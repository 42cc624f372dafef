"""Reserved commitments past the horizon, the ranking by the horizon total when horizon_months is set, and owned
hardware with and without a sourced host server.

Figures from pricing_data/gpu_prices.csv and pricing_data/host_servers.csv (sources in the rows); a month is
730.5 h, a year 8,766 h. Capacities from the roofline closed form (no simulation).
"""

from __future__ import annotations

import datetime as dt

import pytest

from costmodel.decision.rank import decide
from costmodel.memo.commitments import ranking_basis_sentence
from costmodel.scenario import parse_scenario

TODAY = dt.date(2026, 12, 1)
H = 365.25 * 24 / 12  # 730.5 h
YEAR_HOURS = 365.25 * 24  # 8,766 h
# cerebras/llama-3.1-8b: $0.10 per million prompt and output tokens, so 1,000 + 200 tokens cost $0.00012.
API_USD_PER_REQUEST = (1000 * 0.10 + 200 * 0.10) / 1e6


def scenario(options, *, requests_per_day=20_000, horizon=None):
    data = {
        "name": "commitments", "accept_unverified_latency": True,
        "fleet": {"min_replicas": 1, "spare_replicas": 0},  # one replica: the arithmetic below is about terms and hosts
        "workload": {"requests_per_day": requests_per_day, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": options,
    }
    if horizon is not None:
        data["horizon_months"] = horizon
    return data


def decided(data):
    return decide(parse_scenario(data), today=TODAY, capacity_method="roofline")


API = {"kind": "api", "name": "api", "price_id": "cerebras/llama-3.1-8b"}
RESERVED_3Y = {"kind": "self-host", "name": "reserved", "model": "llama-3.1-8b", "hardware": "h100-sxm",
               "offering": "semianalysis/h100-sxm/reserved"}  # $1.30/GPU-h, "3 years, 25% upfront": 36 months


def test_three_year_term_in_a_twelve_month_horizon_leaves_24_months_owed():
    result = decided(scenario([RESERVED_3Y], horizon=12)).option("reserved")
    n = result.gpus_billed
    assert n == result.replicas == 1  # one 1-GPU replica, sold by the GPU
    # 12 months paid inside the horizon; the tranche of month 0 runs 36 months: 24 x 1 GPU x $1.30 x 730.5 h owed.
    owed = 24 * n * 1.30 * H
    assert result.usd_committed_after_horizon == pytest.approx(owed) == pytest.approx(22_791.6)
    assert result.usd_horizon_total == pytest.approx(12 * result.usd_per_month)
    assert result.usd_horizon_total_with_commitments == pytest.approx(12 * result.usd_per_month + owed)
    assert result.ranking_basis == "usd_horizon_total_with_commitments"
    contract = result.contract()
    assert contract["usd_committed_after_horizon"] == pytest.approx(owed)
    assert contract["usd_horizon_total_with_commitments"] == pytest.approx(12 * result.usd_per_month + owed)


RESERVED_1Y = {"kind": "self-host", "name": "reserved-1y", "model": "llama-3.1-8b", "hardware": "h100-sxm",
               "offering": "coreweave/h100-sxm/reserved-1y"}  # $1.79/GPU-h, "1 year reserved": 12 months


def test_ranking_uses_the_total_with_commitments_when_a_term_runs_past_the_horizon():
    # One reserved replica costs R = $1.30 x 730.5 = $949.65 a month but commits 36 months: over a 12-month
    # horizon 36 R = $34,187.40. The API at ~2 R a month costs 24 R = $22,791.60 over the horizon: cheaper.
    # Month 0's $/month (R against 2 R) would pick the reserved row and leave 24 R owed after the horizon out.
    reserved_month = 1.30 * H
    requests_per_day = 2 * reserved_month / (API_USD_PER_REQUEST * 365.25 / 12)  # 520,047 requests/day
    for horizon in (None, 12):  # left at its default 12 months, or set: the 36-month term runs past it either way
        total = decided(scenario([API, RESERVED_3Y], requests_per_day=requests_per_day, horizon=horizon))
        api, reserved = total.option("api"), total.option("reserved")
        assert reserved.replicas == 1 and reserved.usd_per_month < api.usd_per_month
        assert api.usd_horizon_total_with_commitments == pytest.approx(24 * reserved_month)
        assert reserved.usd_horizon_total_with_commitments == pytest.approx(36 * reserved_month)
        assert total.ranking_basis == "usd_horizon_total_with_commitments" and total.recommendation == "api"
        sentence = ranking_basis_sentence(total)
        assert sentence is not None and "12-month horizon with its commitments" in sentence
        contract = total.contract()
        assert contract["ranking_basis"] == "usd_horizon_total_with_commitments"
        owed = f"${24 * reserved_month:,.0f} owed after month 12"
        assert "36-month reserved term" in str(contract["ranking_basis_reason"]) and owed in str(
            contract["ranking_basis_reason"])
        assert owed in sentence


def test_ranking_stays_on_month_0_when_no_term_runs_past_a_default_horizon():
    # A 1-year term (coreweave/h100-sxm/reserved-1y, $1.79/GPU-h) inside the default 12-month horizon owes nothing
    # after it: ranked by month 0's $/month, R1 = $1.79 x 730.5 = $1,307.60 against the API at 2 x $949.65.
    requests_per_day = 2 * 1.30 * H / (API_USD_PER_REQUEST * 365.25 / 12)
    monthly = decided(scenario([API, RESERVED_1Y], requests_per_day=requests_per_day))
    reserved = monthly.option("reserved-1y")
    assert reserved.usd_per_month == pytest.approx(1.79 * H) and reserved.usd_committed_after_horizon == 0
    assert monthly.ranking_basis == "usd_per_month" and monthly.recommendation == "reserved-1y"
    assert ranking_basis_sentence(monthly) is None
    assert "no option commits past the 12-month horizon" in monthly.ranking_basis_reason


# Owned GPUs (pricing_data/gpu_prices.csv): capex / (4 years x 8,766 h) + kW x PUE 1.2 x $0.08/kWh +
# colocation / 730.5 h; host share (pricing_data/host_servers.csv) = server capex / 8 - GPU capex, server kW / 8 -
# GPU kW, colocation at the GPU row's rate per kW (pricing/hosts.py).
def owned_usd_per_gpu_hour(*, capex, kw, colocation, host_capex=0.0, host_kw=0.0):
    gpu = capex / (4 * YEAR_HOURS) + kw * 1.2 * 0.08 + colocation / H
    host = host_capex / (4 * YEAR_HOURS) + host_kw * 1.2 * 0.08 + host_kw * (colocation / kw) / H
    return gpu + host


# H100: $30,000, 0.7 kW, $140/month; host: 8-GPU node $325,000 and 10.2 kW (v2-pseo-ai.pages.dev gpu-tco-analysis).
H100_ALL_IN = owned_usd_per_gpu_hour(capex=30_000, kw=0.7, colocation=140, host_capex=325_000 / 8 - 30_000,
                                     host_kw=10.2 / 8 - 0.7)
# B200: $40,000, 1.0 kW, $200/month; host: DGX B200 $515,000 (vengineer.hatenablog.com, 2025-03-16) and 14.3 kW
# (madcoolstuff.com datacenter inference blueprint): $24,375 and 0.7875 kW per GPU beyond the GPU.
B200_ALL_IN = owned_usd_per_gpu_hour(capex=40_000, kw=1.0, colocation=200, host_capex=515_000 / 8 - 40_000,
                                     host_kw=14.3 / 8 - 1.0)
# H200: $35,000, 0.7 kW, $140/month; no sourced host server: the GPU alone.
H200_GPU_ONLY = owned_usd_per_gpu_hour(capex=35_000, kw=0.7, colocation=140)


def owned(name, hardware):
    return {"kind": "self-host", "name": name, "model": "llama-3.1-8b", "hardware": hardware,
            "offering": f"owned/{hardware}/owned"}


def test_owned_hardware_scenario_counts_hosts_and_never_ranks_a_partial_cost_first():
    # 1.1144 + 0.5156 = $1.6301 (H100); 1.5106 + 0.9864 = $2.4969 (B200); $1.2570 (H200, host left out).
    assert pytest.approx(1.6301, abs=5e-5) == H100_ALL_IN
    assert pytest.approx(1.14077 + 0.096 + 0.27379 + 0.69516 + 0.0756 + 0.21561, abs=5e-5) == B200_ALL_IN
    assert pytest.approx(0.99818 + 0.0672 + 0.19165, abs=5e-5) == H200_GPU_ONLY
    decision = decided(scenario([owned("h100", "h100-sxm"), owned("b200", "b200"), owned("h200", "h200")]))
    h100, b200, h200 = (decision.option(n) for n in ("h100", "b200", "h200"))
    assert h100.usd_per_gpu_hour == pytest.approx(H100_ALL_IN)
    assert b200.usd_per_gpu_hour == pytest.approx(B200_ALL_IN)
    assert h200.usd_per_gpu_hour == pytest.approx(H200_GPU_ONLY)
    assert (h100.host_not_counted, b200.host_not_counted, h200.host_not_counted) == (False, False, True)
    for result, rate in ((h100, H100_ALL_IN), (b200, B200_ALL_IN), (h200, H200_GPU_ONLY)):
        assert result.gpus_billed == 1 and result.usd_per_month == pytest.approx(rate * H)
    # The H200's partial cost ($918/month) is the lowest, yet it ranks after both complete costs.
    assert h200.usd_per_month < h100.usd_per_month < b200.usd_per_month
    assert [o.name for o in decision.options] == ["h100", "b200", "h200"]
    assert decision.recommendation == "h100"
    assert any("host server not counted" in n for n in h200.notes)
    assert h200.contract()["host_not_counted"] is True


def test_a_partial_cost_is_never_the_break_even_or_the_horizon_s_new_cheapest():
    # 100,000 requests/day at $0.00012 = $365/month on the API, below the H200's partial $918 and the H100's $1,190:
    # the API is recommended. Both fleets cross it, the H200 nearer today's volume; its cost leaves the host out, so
    # the break-even sentence names the H100. With 30%/month growth the API passes $918 in month 4 (365 x 1.3^4 =
    # $1,042) and $1,190 in month 5 ($1,355): the ranking change names the H100 in month 5, never the H200.
    data = scenario([API, owned("h100", "h100-sxm"), owned("h200", "h200")], requests_per_day=100_000, horizon=6)
    data["workload"]["growth_per_month"] = 0.3
    decision = decided(data)
    assert decision.recommendation == "api"
    h100, h200 = decision.option("h100"), decision.option("h200")
    assert h200.host_not_counted and h200.usd_per_month < h100.usd_per_month
    assert h200.break_even_tokens_per_month is not None  # it does cross the API: the rule, not a missing V*, skips it
    said = " ".join(decision.reasons)
    assert "Self-hosting (h100)" in said and "Self-hosting (h200)" not in said
    assert "month 5" in said and "h100 becomes cheaper" in said and "h200 becomes cheaper" not in said


def test_compare_text_says_which_costs_leave_the_host_out():
    from costmodel.cli.compare import render_table

    text = render_table(decided(scenario([owned("h100", "h100-sxm"), owned("h200", "h200")])))
    section = text.split("Costs that leave the host server out")[1].split("\n\n")[0]
    assert "h200: host server not counted" in section and "h100:" not in section


def test_memo_totals_show_the_commitment_tail_and_the_total_with_it():
    from costmodel.memo.blocks import Table, money
    from costmodel.memo.rollout import totals_blocks

    reserved_month = 1.30 * H
    requests_per_day = 2 * reserved_month / (API_USD_PER_REQUEST * 365.25 / 12)
    decision = decided(scenario([API, RESERVED_3Y], requests_per_day=requests_per_day))
    table = totals_blocks(decision)[0]
    assert isinstance(table, Table)
    assert table.header[-2:] == ("Owed after month 12", "Total with commitments")
    rows = {row[0]: row for row in table.rows}
    # reserved: 12 R paid in the horizon, 24 R owed after it, 36 R in all; the API owes nothing after it.
    assert rows["reserved"][3:] == (money(12 * reserved_month), money(24 * reserved_month), money(36 * reserved_month))
    assert rows["api"][4] == money(0.0)
    assert "36-month reserved term" in (table.caption or "")


def test_compare_warnings_name_a_stale_price_with_its_age():
    from costmodel.decision.warnings import STALE_PRICE_DAYS
    from costmodel.pricing import load_gpu_prices

    decision = decided(scenario([API, RESERVED_3Y], horizon=12))
    # The analyst estimate's own date (price_as_of in pricing_data/gpu_prices.csv) is over 90 days before TODAY.
    row = load_gpu_prices().get("semianalysis/h100-sxm/reserved")
    age = (TODAY - row.price_date).days
    assert age > STALE_PRICE_DAYS
    stale = [w for w in decision.warnings if w.startswith(f"Prices older than {STALE_PRICE_DAYS} days")]
    assert len(stale) == 1 and f"semianalysis/h100-sxm/reserved ({age} days old, used by reserved)" in stale[0]
    assert "deepinfra" not in stale[0] and "cerebras" not in stale[0]  # the API's price is fresh
