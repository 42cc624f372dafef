"""compare and memo never read as disagreeing on a scenario with a `search:` section: the memo searches it
(SCENARIO_SEARCH_TOP_K configurations added), compare only with --search, and its text says so; the memo's
header names the `compare --search K` command that reproduces it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costmodel.cli import main
from costmodel.cli.compare import _search_section_note
from costmodel.scenario import parse_scenario
from costmodel.scenario.search import SCENARIO_SEARCH_TOP_K

BASE = {
    "name": "note", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 10_000, "prompt_tokens": {"kind": "fixed", "tokens": 200},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.1},
    "options": [{"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b"}],
}


def test_the_note_appears_only_with_a_search_section_and_no_search_flag() -> None:
    plain = parse_scenario(BASE)
    searching = parse_scenario({**BASE, "search": {"models": ["llama-3.1-8b"], "ops_usd_per_month": 100}})
    assert _search_section_note(plain, searched=False) == ""
    assert _search_section_note(searching, searched=True) == ""
    note = _search_section_note(searching, searched=False)
    assert f"compare --search {SCENARIO_SEARCH_TOP_K}" in note and "listed options only" in note


def test_compare_text_carries_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**BASE, "search": {"models": ["llama-3.1-8b"], "ops_usd_per_month": 100}}))
    assert main(["compare", str(path), "--quiet"]) == 0
    assert "has a `search:` section" in capsys.readouterr().out
    assert main(["compare", str(path), "--json"]) == 0
    assert "search:" not in capsys.readouterr().out.split('"options"')[0]  # --json unchanged: no prose added
