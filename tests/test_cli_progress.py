"""Progress bars of the long commands: on stderr by default, none with --quiet or --json, stdout untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.cli.progress import Bar

pytest.importorskip("tqdm")

SIMULATE = ["simulate", "--model", "qwen2.5-0.5b", "--hardware", "l4", "--rate", "2", "--requests", "50",
            "--prompt-tokens", "200", "--output-tokens", "20"]
SCENARIO = {
    "name": "small search", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b"], "hardware": ["l4"], "engines": ["generic"]},
    "options": [{"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "gpus_per_replica": 1, "weight_dtype": "bf16", "kv_dtype": "bf16", "offering": "owned/l4/owned"}],
}


def test_simulate_shows_a_bar_on_stderr_unless_quiet_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(SIMULATE) == 0
    shown = capsys.readouterr()
    assert "simulating 50 requests" in shown.err and "simulating 50 requests" not in shown.out
    assert main([*SIMULATE, "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out == shown.out
    assert main([*SIMULATE, "--json"]) == 0
    as_json = capsys.readouterr()
    assert as_json.err == "" and json.loads(as_json.out)["requests"] == 50


def test_search_reports_its_progress_and_json_stays_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    assert main(["search", str(path), "--top", "1", "--date", "2026-12-01"]) == 0
    err = capsys.readouterr().err
    assert main(["search", str(path), "--top", "1", "--date", "2026-12-01", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # no bar under --json
    # The bar names the count the search enumerated (the search's scope decides how many: search/scope.py).
    enumerated = json.loads(captured.out)["candidates_enumerated"]
    assert "search:" in err and f"screened {enumerated:,} configurations" in err


def test_a_disabled_bar_does_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with Bar(total=3, desc="x", enabled=False) as shown:
        shown.step("one")
        shown.fraction(0.5, "half")
        shown.note("now")
    assert capsys.readouterr().err == ""


def test_fraction_sets_the_share_of_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    with Bar(total=1000, desc="share", enabled=True) as shown:
        shown.fraction(0.25, "a quarter")
        assert shown._bar.n == 250
        shown.fraction(2.0, "clamped")
        assert shown._bar.n == 1000
    assert "share:" in capsys.readouterr().err
