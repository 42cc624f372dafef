"""The decision's reasons format money and shares as the tables do (review L3): cents below $10
(units.fmt_money), and a saving short of the whole bill never reads '100%' (units.fmt_share)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from costmodel.decision.rank import decide
from costmodel.scenario import load_scenario, parse_scenario
from costmodel.units import fmt_money, fmt_share

ROOT = Path(__file__).resolve().parents[1]


def test_fmt_share_keeps_a_partial_share_off_100_and_0_percent() -> None:
    assert fmt_share(0.37) == "37%" and fmt_share(4.59) == "459%"
    assert fmt_share(0.9999) == "99.99%" and fmt_share(0.996) == "99.6%" and fmt_share(0.0004) == "0.04%"
    assert fmt_share(1 - 1e-9) == ">99.99%" and fmt_share(1e-9) == "<0.01%"
    assert fmt_share(1.0) == "100%" and fmt_share(0.0) == "0%"


def test_a_tiny_workload_s_reasons_keep_cents_and_no_total_saving() -> None:
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["workload"]["requests_per_day"] = 50  # a few dollars a month on an API against a self-host fleet
    decision = decide(parse_scenario(data), today=dt.date(2026, 12, 2))
    chosen = decision.chosen()
    assert chosen.usd_per_month < 10 and decision.recommendation_premium_usd_per_month
    text = " ".join(decision.reasons)
    assert f"{fmt_money(chosen.usd_per_month)}/month" in text and re.search(r"\$\d+\.\d\d/month", text)
    premium = decision.recommendation_premium_usd_per_month
    assert f"It costs {fmt_money(premium)}/month (" in text
    assert "100% less" not in text  # the runner-up's $31,902 against a few dollars: 99.99%, not all of it
    assert re.search(r"It costs 99\.\d+% less", text)
