"""The memo's "Configurations considered" section (issue 15): present with a search, with the front chart and
table; absent without one; `memo --search K` and a scenario's `search:` section both build it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.memo.configurations import FIGURE_KEY, front_table, search_blocks
from costmodel.scenario import parse_scenario
from costmodel.search import Configuration, SearchResult, search

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
    assert label.split(" (same cost: ")[0] == (f"{best.model}, {best.gpus_per_replica}x {best.hardware} "
                                               f"{best.weight_dtype}/{best.kv_dtype}")
    assert len(table.rows) == len({*result.frontier, best})
    assert all(len(row) == len(table.header) for row in table.rows)
    listed = {*result.frontier, best}  # each row names its configuration's engine profile and scaling
    assert {(row[0].split(" (same cost: ")[0], *row[1:4]) for row in table.rows} == {
        (f"{c.model}, {c.gpus_per_replica}x {c.hardware} {c.weight_dtype}/{c.kv_dtype}", c.offering, c.engine, c.scaling)
        for c in listed}


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


def _configuration(**changes: object) -> Configuration:
    base = {"model": "qwen2.5-7b", "hardware": "h100-sxm", "gpus_per_replica": 1, "weight_dtype": "bf16",
            "kv_dtype": "bf16", "offering": "lambda/h100-sxm/on-demand", "engine": "vllm", "scaling": "fixed",
            "usd_per_month": 2000.0, "usd_per_mtok": 0.5, "tokens_per_second_per_user": 40.0,
            "ttft_p90_seconds": 0.3, "meets_slo": True}
    return Configuration(**{**base, **changes})  # type: ignore[arg-type]


def test_front_table_names_each_configurations_engine_and_scaling() -> None:
    # Three configurations that differ only in engine profile and scaling: without those two columns their
    # 'configuration' and 'offering' cells would be the same, and the table could not tell them apart.
    fixed = _configuration()
    autoscaled = _configuration(scaling="autoscale", usd_per_month=1200.0, usd_per_mtok=0.3)
    sglang = _configuration(engine="sglang", usd_per_month=1800.0, usd_per_mtok=0.45, tokens_per_second_per_user=60.0)
    result = SearchResult(candidates_enumerated=3, candidates_pruned=0, candidates_simulated=3, seconds=1.0,
                          best=(autoscaled,), frontier=(autoscaled, sglang, fixed))
    table = front_table(result)
    assert table.header[:4] == ("configuration", "offering", "engine", "scaling")
    assert [row[2:4] for row in table.rows] == [("vllm", "autoscale"), ("sglang", "fixed"), ("vllm", "fixed")]
    assert table.highlight_row == 0  # the cheapest ($0.3/M) is the autoscaled one
    assert len(table.widths) == len(table.align) == len(table.header)
    assert sum(table.widths) == pytest.approx(1.0)
    best_line = next(b.text for b in search_blocks(result, top_k=1) if getattr(b, "lead", "") == "Best found.")
    assert "(engine vllm, autoscale)" in best_line


def test_page_one_says_when_searched_models_are_treated_as_substitutes() -> None:
    from costmodel.memo.configurations import scope_blocks
    from costmodel.search.scope import SearchScope

    def result(treated: bool) -> SearchResult:
        scope = SearchScope(models=("qwen2.5-0.5b", "llama-3.1-8b"), basis="all" if treated else "scenario",
                            floor=None, benchmark="lmarena-text", quality_scores={}, treated_as_substitutes=treated)
        return SearchResult(candidates_enumerated=1, candidates_pruned=0, candidates_simulated=1, seconds=1.0,
                            best=(_configuration(),), frontier=(), scope=scope)

    blocks = scope_blocks(result(True))
    assert len(blocks) == 1 and "treated as substitutes" in blocks[0].text  # type: ignore[attr-defined]
    assert scope_blocks(result(False)) == [] and scope_blocks(None) == []
