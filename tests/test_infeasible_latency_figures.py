"""A self-host option no load can serve shows the p90 its reason quotes (review D6): the zero-load run's p90
TTFT, the one 'prefill of a N-token prompt (p90) alone takes X s' names, not the roofline's mean-prompt figure."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from costmodel.decision.rank import decide
from costmodel.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]


def test_the_shown_p90_ttft_is_the_one_the_reason_quotes() -> None:
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["slo"]["ttft_p90_seconds"] = 0.001  # below any prefill: no load meets it
    decision = decide(parse_scenario(data), today=dt.date(2026, 12, 2))
    infeasible = [o for o in decision.options if o.kind == "self-host" and "alone takes" in o.slo_reason]
    assert len(infeasible) == 2
    for option in infeasible:
        assert option.ttft_p90_seconds is not None
        assert f"alone takes {option.ttft_p90_seconds:.3g} s" in option.slo_reason
