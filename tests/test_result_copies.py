"""`evidence._with_fields` (the attribute copy behind `with_evidence`) is `dataclasses.replace`: same fields,
same values, an unknown field still refused."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from costmodel.decision.evidence import _with_fields
from costmodel.decision.rank import decide
from costmodel.scenario import load_scenario


def test_copy_is_replace() -> None:
    decision = decide(load_scenario("examples/chat-assistant.yaml"), capacity_method="roofline")
    for result in decision.options:
        changes = {"slo_status": "unverified", "ttft_p90_seconds": 1.5, "latency_basis": "copied"}
        copied, replaced = _with_fields(result, **changes), replace(result, **changes)  # type: ignore[arg-type]
        assert copied == replaced and copied is not result
        assert [getattr(copied, f.name) for f in fields(copied)] == [getattr(replaced, f.name) for f in fields(replaced)]
        assert result.latency_basis != "copied"  # the original is untouched
        with pytest.raises(TypeError):
            _with_fields(result, no_such_field=1)
