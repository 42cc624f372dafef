"""The memo's "Configurations considered" section (issue 15): present with a search, with the front chart and
table; absent without one; `memo --search K` and a scenario's `search:` section both build it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.memo.configurations import FIGURE_KEY, front_table, search_blocks
from costmodel.scenario import parse_scenario
from costmodel.search import search

SCENARIO = {
    "name": "memo search", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b"], "hardware": ["l4"]},
    "options": [{"kind": "api", "name": "gpt-4.1-mini", "price_id": "openai/gpt-4.1-mini"},
                {"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "gpus_per_replica": 1, "weight_dtype": "bf16", "kv_dtype": "bf16", "offering": "owned/l4/owned"}],
}


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return search(parse_scenario(SCENARIO), top_k=2)


def test_section_has_counts_chart_and_the_front_table(result) -> None:  # type: ignore[no-untyped-def]
    blocks = search_blocks(result, top_k=2)
    texts = [getattr(b, "text", "") for b in blocks]
    assert texts[0] == "Configurations considered"
    assert f"enumerated {result.candidates_enumerated:,}" in texts[1]
    assert f"simulated {result.candidates_simulated:,}" in texts[1]
    assert any(getattr(b, "key", None) == FIGURE_KEY for b in blocks)
    table = front_table(result)
    best = result.best[0]
    assert table.highlight_row is not None
    label = table.rows[table.highlight_row][0]
    assert label == f"{best.model}, {best.gpus_per_replica}x {best.hardware} {best.weight_dtype}/{best.kv_dtype}"
    assert len(table.rows) == len({*result.frontier, best})
    assert all(len(row) == len(table.header) for row in table.rows)


def test_front_chart_renders_two_panels(result) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    from types import SimpleNamespace

    from costmodel.memo.charts import DPI, WIDTH_INCHES, render_charts
    image = render_charts(SimpleNamespace(search=result), {FIGURE_KEY})[FIGURE_KEY]  # type: ignore[arg-type]
    assert image.size == (round(WIDTH_INCHES * DPI), round(WIDTH_INCHES * 0.4 * DPI))


@pytest.mark.parametrize("flag", [["--search", "2"], []])  # the flag, or the scenario's `search:` section (K=3)
def test_memo_cli_builds_the_section(flag: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pypdf = pytest.importorskip("pypdf")
    pytest.importorskip("reportlab")
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    out = tmp_path / "memo.pdf"
    assert main(["memo", str(path), "--out", str(out), "--date", "2026-12-01", *flag, "--json"]) == 0
    json.loads(capsys.readouterr().out)
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(out).pages)
    assert "Configurations considered" in text and "search-1-qwen2.5-0.5b-l4" in text
    assert ("search-3-" in text) == (not flag)


def test_memo_without_a_search_has_no_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pypdf = pytest.importorskip("pypdf")
    pytest.importorskip("reportlab")
    path = tmp_path / "s.json"
    path.write_text(json.dumps({k: v for k, v in SCENARIO.items() if k != "search"}))
    out = tmp_path / "memo.pdf"
    assert main(["memo", str(path), "--out", str(out), "--date", "2026-12-01"]) == 0
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(out).pages)
    assert "Configurations considered" not in text and "search-1-" not in text
