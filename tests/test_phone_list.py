"""The compact ranked list that replaces the Compare table at phone width (app/phone_list.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from app.phone_list import _CSS, PHONE_MAX_WIDTH_PX, compact_lines
from costmodel.decision.rank import decide
from costmodel.scenario import load_scenario
from costmodel.units import fmt_money

ROOT = Path(__file__).resolve().parents[1]


def test_one_line_per_option_in_ranked_order_with_cost_and_verdict() -> None:
    decision = decide(load_scenario(ROOT / "examples" / "chat-assistant.yaml"), today=dt.date(2026, 12, 1))
    lines = compact_lines(decision, lambda o: o.slo_status)
    assert len(lines) == len(decision.options)
    first = decision.options[0]
    assert lines[0] == f"1. **{first.name}**: {fmt_money(first.usd_per_month)}/month, {first.slo_status}"


def test_the_css_swaps_table_and_list_below_the_phone_width() -> None:
    assert f"@media (max-width: {PHONE_MAX_WIDTH_PX}px)" in _CSS
    assert ".st-key-cmp_table_box {display: none;}" in _CSS and ".st-key-cmp_compact {display: block;}" in _CSS
