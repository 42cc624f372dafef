"""The horizon (decision/horizon.py): month-by-month growth, re-sizing, reserved terms, the ranking change.

Capacities come from the roofline closed form (decide(..., capacity_method="roofline")), so no simulation
runs; each expected figure is written out from the formulas of docs/economics.md ("The horizon"):
replicas_m = max(min_replicas, ceil(peak_m / (target x capacity))), peak_m = peak_0 x (1 + g)^m,
self-host $/month = replicas x GPUs x $/GPU-h x 730.5 h + ops, API $/month = $/request x requests/month.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
import yaml

from costmodel.cli import main
from costmodel.decision import capacity as capacity_module
from costmodel.decision.horizon import committed_replicas
from costmodel.decision.rank import decide
from costmodel.scenario import parse_scenario

TODAY = dt.date(2026, 12, 1)
HOURS_PER_MONTH = 365.25 * 24 / 12  # 730.5 h
DAYS_PER_MONTH = 365.25 / 12  # 30.4375 d
# cerebras/llama-3.1-8b in pricing_data/api_prices.csv: $0.10 per million prompt and output tokens (litellm
# 1.110.2), so a 1,000 + 200 token request costs (1,000 x 0.10 + 200 x 0.10) / 1e6 = $0.00012.
API_USD_PER_REQUEST = (1000 * 0.10 + 200 * 0.10) / 1e6


def scenario(*, requests_per_day, options, growth=0.0, horizon=12, fleet=None):
    data = {
        "name": "horizon", "horizon_months": horizon, "accept_unverified_latency": True,
        "workload": {"requests_per_day": requests_per_day, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0,
                     "growth_per_month": growth},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": options,
    }
    if fleet is not None:
        data["fleet"] = fleet
    return data


API = {"kind": "api", "name": "api", "price_id": "cerebras/llama-3.1-8b"}
H100 = {"kind": "self-host", "name": "h100", "model": "llama-3.1-8b", "hardware": "h100-sxm",
        "usd_per_gpu_hour": 2.0, "ops_usd_per_month": 1000.0}
L40S_RESERVED = {"kind": "self-host", "name": "l40s", "model": "llama-3.1-8b", "hardware": "l40s",
                 "offering": "aws/l40s/reserved-1y"}  # $1.17/GPU-h, "1 year, no upfront": a 12-month term


def decided(data):
    return decide(parse_scenario(data), today=TODAY, capacity_method="roofline")


def capacity(option):
    """Requests/s per replica at the SLO (independent of the volume)."""
    result = decided(scenario(requests_per_day=10_000, options=[option])).option(option["name"])
    assert result.capacity_requests_per_second
    return result.capacity_requests_per_second


def test_five_percent_growth_resizes_month_by_month():
    mu = capacity(H100)
    # Peak at month 0 = 2.5 replicas' worth at the default 80% target: peak = rpd / 86,400 x 2.0.
    rpd = 2.5 * 0.8 * mu * 86_400 / 2.0
    # No spare replica here (spare_replicas 0): the test follows the headroom term month by month.
    decision = decided(scenario(requests_per_day=rpd, options=[API, H100], growth=0.05, fleet={"spare_replicas": 0}))
    h100 = decision.option("h100")
    # replicas_m = max(2, ceil(2.5 x 1.05^m)): 3 in months 0-3 (2.5 .. 2.89), 4 in 4-9 (3.04 .. 3.88), 5 in 10-11.
    replicas = [max(2, math.ceil(2.5 * 1.05**m)) for m in range(12)]
    assert replicas == [3] * 4 + [4] * 6 + [5] * 2
    expected = [r * 2.0 * HOURS_PER_MONTH + 1000.0 for r in replicas]  # 3 x 1,461 + 1,000 = $5,383 in month 0
    assert h100.usd_by_month is not None and len(h100.usd_by_month) == decision.horizon_months == 12
    assert list(h100.usd_by_month) == pytest.approx(expected)
    assert h100.usd_by_month[0] == h100.usd_per_month == pytest.approx(5383.0)
    assert h100.usd_horizon_total == pytest.approx(sum(expected))
    api = decision.option("api")
    assert api.usd_by_month is not None
    assert list(api.usd_by_month) == pytest.approx(
        [API_USD_PER_REQUEST * rpd * DAYS_PER_MONTH * 1.05**m for m in range(12)])
    assert api.usd_by_month[0] == api.usd_per_month


def test_ranking_changes_in_the_month_the_api_overtakes_one_replica():
    # One H100 replica (floor 1, no ops) costs 2.0 x 730.5 = $1,461 every month while its peak fits.
    # API month 0 = $1,461 / 1.05^3.5, so the API is cheaper through month 3 (1,461 / 1.05^0.5 = $1,425.8)
    # and dearer from month 4 (1,461 x 1.05^0.5 = $1,497.1).
    one_replica = {**H100, "ops_usd_per_month": 0.0}
    rpd = 1461.0 / 1.05**3.5 / (API_USD_PER_REQUEST * DAYS_PER_MONTH)  # 340,640 requests/day
    assert rpd / 86_400 * 2.0 * 1.05**11 < 0.8 * capacity(one_replica)  # still one replica in month 11
    decision = decided(scenario(requests_per_day=rpd, options=[API, one_replica], growth=0.05,
                                fleet={"min_replicas": 1, "spare_replicas": 0}))
    # horizon_months is set, so the ranking compares the 12-month totals (with commitments; none here):
    # API sum_m 1,461 / 1.05^3.5 x 1.05^m = 1,461 x (1.05^12 - 1) / 0.05 / 1.05^3.5 = $19,607 against
    # 12 x $1,461 = $17,532 for the replica: the replica ranks first though the API is cheaper in month 0.
    api_total = 1461.0 * (1.05**12 - 1) / 0.05 / 1.05**3.5
    assert decision.ranking_basis == "usd_horizon_total_with_commitments"
    assert decision.option("api").usd_horizon_total_with_commitments == pytest.approx(api_total)
    assert decision.option("h100").usd_horizon_total_with_commitments == pytest.approx(12 * 1461.0)
    assert decision.recommendation == "h100"
    unset = scenario(requests_per_day=rpd, options=[API, one_replica], growth=0.05, fleet={"min_replicas": 1, "spare_replicas": 0})
    unset.pop("horizon_months")  # left at its default: ranked by month 0's $/month
    default = decided(unset)
    assert default.ranking_basis == "usd_per_month" and default.recommendation == "api"
    assert decision.ranking_change_month == 4
    assert decision.contract()["ranking_change_month"] == 4
    api, h100 = decision.option("api"), decision.option("h100")
    assert api.usd_by_month and h100.usd_by_month
    assert api.usd_by_month[3] == pytest.approx(1461.0 / 1.05**0.5) and api.usd_by_month[3] < h100.usd_by_month[3]
    assert api.usd_by_month[4] == pytest.approx(1461.0 * 1.05**0.5) and api.usd_by_month[4] > h100.usd_by_month[4]
    assert any("ranking changes in month 4 (2027-04)" in reason for reason in decision.reasons)
    flat = decided(scenario(requests_per_day=rpd, options=[API, one_replica], fleet={"min_replicas": 1, "spare_replicas": 0}))
    assert flat.ranking_change_month is None


def test_committed_replicas_keep_a_term_paid_when_the_volume_shrinks():
    # Needed 4, 4, 3, 2, 2 with a 3-month term: the 4 of month 0 run months 0-2; month 3 commits 2 for 3-5.
    paid, after = committed_replicas([4, 4, 3, 2, 2], term_months=3)
    assert paid == (4, 4, 4, 2, 2)
    assert after == 2 * 1  # month 5 of the second tranche lies past the 5-month horizon
    # Growth adds tranches: 2 in month 0 (months 0-1), +1 in month 1 (months 1-2); month 2 needs 3 with 1 left.
    assert committed_replicas([2, 3, 3], term_months=2) == ((2, 3, 3), 2 * 1 + 1 * 0)


def test_reserved_term_priced_over_the_term_when_volume_shrinks():
    mu = capacity(L40S_RESERVED)
    rpd = 3.5 * 0.8 * mu * 86_400 / 2.0  # 3.5 replicas' worth at month 0
    decision = decided(scenario(requests_per_day=rpd, options=[L40S_RESERVED], growth=-0.10, horizon=18))
    l40s = decision.option("l40s")
    # Needed: max(2, ceil(3.5 x 0.9^m)) = 4, 4, 3, 3, 3, 3, 2, ...; the 4 committed in month 0 are paid through
    # month 11; month 12 commits the 2 then needed for months 12-23, 6 of them past the 18-month horizon.
    needed = [max(2, math.ceil(3.5 * 0.9**m)) for m in range(18)]
    assert needed[:7] == [4, 4, 3, 3, 3, 3, 2]
    replica_usd = 1.17 * HOURS_PER_MONTH  # $854.685 per replica-month
    expected = [4 * replica_usd] * 12 + [2 * replica_usd] * 6
    assert l40s.usd_by_month is not None and list(l40s.usd_by_month) == pytest.approx(expected)
    assert l40s.usd_horizon_total == pytest.approx(sum(expected))
    assert any("$10,256 stays committed after the horizon" in note for note in l40s.notes)  # 2 x 6 x 854.685
    # The same tail as typed fields (the cost-by-month chart draws it past the last month).
    assert l40s.usd_committed_after_horizon == pytest.approx(2 * 6 * replica_usd)
    assert l40s.commitment_term_months == 12
    assert l40s.contract()["usd_committed_after_horizon"] == pytest.approx(2 * 6 * replica_usd)


def test_capacity_is_found_once_per_option_not_per_month(monkeypatch):
    calls = []
    real = capacity_module.roofline_capacity

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capacity_module, "roofline_capacity", counting)
    decision = decided(scenario(requests_per_day=500_000, options=[API, H100, L40S_RESERVED,
                                                                   {"kind": "hybrid", "name": "hy", "self_host": "h100",
                                                                    "api": "api"}],
                                growth=0.05, horizon=36))
    assert len(calls) == 2  # two self-host options, 36 months
    assert all(o.usd_by_month is not None and len(o.usd_by_month) == 36 for o in decision.options)


def write(tmp_path, data):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_horizon_beyond_120_months_exits_2_naming_the_field(tmp_path, capsys):
    path = write(tmp_path, scenario(requests_per_day=10_000, options=[API], horizon=121))
    assert main(["compare", str(path), "--date", "2026-12-01"]) == 2
    assert "horizon_months" in capsys.readouterr().err
    path = write(tmp_path, scenario(requests_per_day=10_000, options=[API]))
    with pytest.raises(SystemExit) as exited:
        main(["compare", str(path), "--horizon-months", "121"])
    assert exited.value.code == 2
    assert "--horizon-months" in capsys.readouterr().err


def test_compare_json_and_text_carry_the_horizon(tmp_path, capsys):
    path = write(tmp_path, scenario(requests_per_day=200_000, options=[API, H100], growth=0.05))
    assert main(["compare", str(path), "--date", "2026-12-01", "--horizon-months", "24", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["horizon_months"] == 24 and "ranking_change_month" in data
    for option in data["options"]:
        assert len(option["usd_by_month"]) == 24
        assert option["usd_horizon_total"] == pytest.approx(sum(option["usd_by_month"]))
    assert main(["compare", str(path), "--date", "2026-12-01", "--horizon-months", "24"]) == 0
    text = capsys.readouterr().out
    assert "Cost over the horizon (24 months" in text
    assert text.count("month 0 $") == 2 and text.count(", month 12 $") == 2


def test_break_even_pair_is_on_one_fleet_and_every_row_names_its_api():
    h100_auto = {**H100, "name": "h100-auto", "scaling": {"mode": "autoscale", "warmup_minutes": 10}}
    too_big = {"kind": "self-host", "name": "70b-on-l40s", "model": "llama-3.1-70b", "hardware": "l40s",
               "usd_per_gpu_hour": 1.0}  # 140 GB of bf16 weights do not fit 48 GB: no load meets the SLO
    hybrid = {"kind": "hybrid", "name": "hy", "self_host": "h100", "api": "api"}
    decision = decided(scenario(requests_per_day=100_000, options=[API, H100, h100_auto, too_big, hybrid]))
    h100 = decision.option("h100")
    mu = h100.capacity_requests_per_second
    assert mu
    # Month-0 fleet: peak 100,000 / 86,400 x 2 = 2.31 requests/s needs max(2, ceil(2.31 / (0.8 mu)),
    # ceil(2.31 / mu) + 1) = 2 replicas, F = 2 x 2.0 x 730.5 + 1,000 = $3,922/month.
    assert h100.replicas == 2 and h100.usd_per_month == pytest.approx(3922.0)

    def replicas(volume: float) -> int:  # the fleet re-sized for `volume` tokens/month (1,200 tokens a request)
        peak = volume / 1200 / 2_629_800 * 2.0
        return max(2, math.ceil(peak / (0.8 * mu) - 1e-12), math.ceil(peak / mu - 1e-12) + 1)

    def fleet_usd(volume: float) -> float:
        return replicas(volume) * 2.0 * HOURS_PER_MONTH + 1000.0

    def api_usd(volume: float) -> float:  # cerebras at $0.10/M, blended
        return 0.10 * volume / 1e6

    # V*: where the re-sized fleet's cost crosses the API's (the memo's chart), above today's 3.65B.
    volume = h100.break_even_tokens_per_month
    assert volume is not None and volume > decision.tokens_per_month
    assert fleet_usd(volume * (1 + 1e-6)) <= api_usd(volume * (1 + 1e-6))
    assert fleet_usd(volume * (1 - 1e-6)) > api_usd(volume * (1 - 1e-6))
    # u* = V* / C(V*), C = n(V*) x mu x 1,200 tokens x S: the fleet at the break-even volume.
    assert h100.break_even_utilization == pytest.approx(volume / (replicas(volume) * mu * 1200 * 2_629_800),
                                                        rel=1e-6)
    auto = decision.option("h100-auto")
    assert auto.replicas_by_hour is not None and auto.break_even_against == "api"
    for name in ("h100", "h100-auto", "70b-on-l40s", "hy"):
        assert decision.option(name).break_even_against == "api", name
    assert decision.option("70b-on-l40s").break_even_utilization is None  # no capacity: no pair


def test_api_reasons_cite_only_a_break_even_the_fleet_can_carry():
    # At $20/GPU-h each added replica costs 20 x 730.5 = $14,610 a month for at most 0.8 mu x 1,200 tokens x
    # S / 2 more tokens (peak-to-mean 2): more per token than the API's $0.10/M, so the re-sized fleet's cost
    # line never crosses the API's at any volume in range: no break-even, and the reasons say so.
    dear = {**H100, "usd_per_gpu_hour": 20.0}
    decision = decided(scenario(requests_per_day=100_000, options=[API, dear]))
    h100 = decision.option("h100")
    mu = h100.capacity_requests_per_second
    assert mu and 20.0 * HOURS_PER_MONTH / (0.8 * mu * 1200 * 2_629_800 / 2) * 1e6 > 0.10
    assert decision.recommendation == "api"
    assert h100.usd_per_month == pytest.approx(30_220.0)
    assert h100.break_even_tokens_per_month is None and h100.break_even_utilization is None
    assert not any("would break even" in r for r in decision.reasons)
    assert any("No self-host option here breaks even with this API" in r for r in decision.reasons)
