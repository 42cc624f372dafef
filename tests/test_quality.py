"""The bundled quality sheet (costmodel/catalog/quality.csv) and its loader.

Golden scores below are copied from the source page every row cites: the LMArena text leaderboard's daily
snapshot of 2026-07-30 10:24 UTC, archived at
https://github.com/CherryHQ/cherry-studio-docs/blob/5bc06d153bc24cbd2af8d2b768da7821b6ebdffb/other/model_rank/lmarena.md
(score column "1293±4" etc.). They are written out here, not read back from the CSV.
"""

from __future__ import annotations

import datetime as dt
import math

import pytest

from costmodel.catalog.loader import bundled_models
from costmodel.catalog.quality import DEFAULT_BENCHMARK, QUALITY_FILE, load_quality_scores, parse_quality_text
from costmodel.errors import CostmodelError
from costmodel.pricing.sheets import load_api_prices, open_model_ids

SNAPSHOT_URL = (
    "https://github.com/CherryHQ/cherry-studio-docs/blob/5bc06d153bc24cbd2af8d2b768da7821b6ebdffb/"
    "other/model_rank/lmarena.md"
)
HEADER = "subject,benchmark,score,scale,source_name,source,source_url,as_of,notes\n"
ROW = "llama-3.1-70b,lmarena-text,1293,elo,llama-3.1-70b-instruct,LMArena,https://example.org/x,2026-07-30,\n"


@pytest.fixture(scope="module")
def sheet():
    return load_quality_scores(open_model_ids=open_model_ids())


def test_every_row_validates_with_a_source_and_a_date(sheet) -> None:
    assert len(sheet.rows) >= 30
    for row in sheet.rows:
        assert row.source_url.startswith("https://"), row.subject
        assert row.source.strip() and row.source_name.strip(), row.subject
        assert math.isfinite(row.score)
        # A figure is read from a page that existed before the data was bundled (2026-12-01).
        assert row.as_of <= dt.date(2026, 12, 1), row.subject


def test_one_benchmark_from_one_snapshot(sheet) -> None:
    # Arena ratings from different days sit on different scales; the sheet must not mix them.
    assert sheet.benchmarks() == ("lmarena-text",)
    assert sheet.scale("lmarena-text") == "elo"
    assert {row.as_of for row in sheet.rows} == {dt.date(2026, 7, 30)}
    assert {row.source_url for row in sheet.rows} == {SNAPSHOT_URL}


def test_every_subject_is_a_catalog_model_or_an_api_price_id(sheet) -> None:
    known = set(bundled_models()) | set(load_api_prices().ids())
    unknown = [row.subject for row in sheet.rows if row.subject not in known]
    assert not unknown, f"quality rows for unknown subjects: {unknown}"


@pytest.mark.parametrize(
    ("subject", "source_name", "score"),
    [
        # Snapshot rows, as printed: "Meta llama-3.1-70b-instruct ... 1293±4 | 55,240".
        ("llama-3.1-70b", "llama-3.1-70b-instruct", 1293),
        # "Meta llama-3.3-70b-instruct ... 1318±3 | 54,712".
        ("llama-3.3-70b", "llama-3.3-70b-instruct", 1318),
        # "Meta llama-3.1-8b-instruct ... 1211±4 | 49,605".
        ("llama-3.1-8b", "llama-3.1-8b-instruct", 1211),
        # "gpt-oss-120b OpenAI · Apache 2.0 | 1352±4 | 30,615".
        ("gpt-oss-120b", "gpt-oss-120b", 1352),
        # "qwen3-235b-a22b Alibaba · Apache 2.0 | 1375±5 | 26,244".
        ("qwen3-235b-a22b", "qwen3-235b-a22b", 1375),
        # "gpt-4.1-2025-04-14 OpenAI · Proprietary | 1414±4 | 50,904".
        ("openai/gpt-4.1", "gpt-4.1-2025-04-14", 1414),
        # "Anthropic claude-haiku-4-5-20251001 ... 1412±3 | 110,068".
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5-20251001", 1412),
        # "gemini-2.5-flash Google · Proprietary | 1410±2 | 124,020".
        ("google/gemini-2.5-flash", "gemini-2.5-flash", 1410),
    ],
)
def test_scores_match_the_snapshot(sheet, subject: str, source_name: str, score: int) -> None:
    found = sheet.score(subject, "lmarena-text")
    assert found is not None
    assert (found.source_name, found.score, found.inherited_from) == (source_name, score, None)


def test_an_8b_model_scores_below_a_70b_one(sheet) -> None:
    # The substitution question issue 13 raises: on the same snapshot 1211 (8B) < 1318 (3.3 70B).
    small = sheet.score("llama-3.1-8b", "lmarena-text")
    large = sheet.score("llama-3.3-70b", "lmarena-text")
    assert small is not None and large is not None and small.score < large.score


def test_api_rows_serving_an_open_model_inherit_its_score(sheet) -> None:
    # together/llama-3.3-70b has open_model_id llama-3.3-70b in the API sheet and no row of its own.
    assert sheet.row("together/llama-3.3-70b", "lmarena-text") is None
    inherited = sheet.score("together/llama-3.3-70b", "lmarena-text")
    assert inherited is not None
    assert (inherited.subject, inherited.score, inherited.inherited_from) == (
        "together/llama-3.3-70b",
        1318,
        "llama-3.3-70b",
    )
    assert inherited.source_url == SNAPSHOT_URL


def test_an_api_rows_own_score_wins_over_inheritance() -> None:
    text = HEADER + ROW + ROW.replace("llama-3.1-70b,", "fireworks/llama-3.1-70b,").replace("1293", "1200")
    sheet = parse_quality_text(
        text, where="t.csv", open_model_ids={"fireworks/llama-3.1-70b": "llama-3.1-70b"}
    )
    own = sheet.score("fireworks/llama-3.1-70b", "lmarena-text")
    assert own is not None and (own.score, own.inherited_from) == (1200, None)


def test_gaps_are_missing_and_listed_in_the_file_header(sheet) -> None:
    subjects = list(bundled_models()) + list(load_api_prices().ids())
    missing = sheet.missing(subjects, "lmarena-text")
    # Known gaps (no entry on the snapshot): never filled by a guess.
    for gap in ("qwen2.5-7b", "qwen2.5-0.5b", "anthropic/claude-haiku-5-5", "google/gemini-2.5-flash-lite",
                "mistral/mistral-small-2603", "together/qwen2.5-7b", "deepinfra/qwen2.5-7b"):  # fmt: skip
        assert gap in missing
    header = "\n".join(
        line for line in QUALITY_FILE.read_text(encoding="utf-8").splitlines() if line.startswith("#")
    )
    unlisted = [subject for subject in missing if subject not in header]
    assert not unlisted, f"add these gaps to the comments at the top of quality.csv: {unlisted}"


def test_unknown_benchmark_names_the_known_ones(sheet) -> None:
    assert sheet.score("llama-3.1-70b", "mmlu-pro") is None
    with pytest.raises(CostmodelError, match="'mmlu-pro' has no scores.*lmarena-text"):
        sheet.scale("mmlu-pro")


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (ROW.replace("1293", "nan"), "field '(row)'"),
        (ROW.replace("1293", "99999"), "outside the elo range"),
        (ROW.replace(",elo,", ",percent,"), "outside the percent range"),
        (ROW.replace(",elo,", ",stars,"), "field 'scale'"),
        (ROW.replace("https://example.org/x", "example.org/x"), "field 'source_url'"),
        (ROW.replace("2026-07-30", "2026-13-01"), "field 'as_of'"),
        (ROW.replace("llama-3.1-70b,", "Llama 3.1,"), "field 'subject'"),
        (ROW.rstrip("\n") + ",extra\n", "more cells than header columns"),
        (ROW.replace(",LMArena,", ",,"), "field 'source'"),
    ],
)
def test_bad_rows_name_the_field(row: str, fragment: str) -> None:
    with pytest.raises(CostmodelError, match="t.csv row 1") as err:
        parse_quality_text(HEADER + row, where="t.csv", open_model_ids={})
    assert fragment in str(err.value)


def test_extra_column_is_rejected() -> None:
    text = HEADER.rstrip("\n") + ",rank\n" + ROW.rstrip("\n") + ",3\n"
    with pytest.raises(CostmodelError, match="field 'rank'"):
        parse_quality_text(text, where="t.csv", open_model_ids={})


def test_duplicates_mixed_scales_and_empty_sheets_are_rejected() -> None:
    with pytest.raises(CostmodelError, match="duplicate of row 1"):
        parse_quality_text(HEADER + ROW + ROW, where="t.csv", open_model_ids={})
    percent = ROW.replace("llama-3.1-70b,", "llama-3.1-8b,").replace(",1293,elo,", ",48.3,percent,")
    with pytest.raises(CostmodelError, match="mixes scales"):
        parse_quality_text(HEADER + ROW + percent, where="t.csv", open_model_ids={})
    with pytest.raises(CostmodelError, match="no rows"):
        parse_quality_text("# only a comment\n" + HEADER, where="t.csv", open_model_ids={})


def test_missing_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(CostmodelError, match="not found"):
        load_quality_scores(tmp_path / "none.csv", open_model_ids={})


def test_default_benchmark_is_in_the_bundled_sheet(sheet) -> None:
    assert DEFAULT_BENCHMARK in sheet.benchmarks()
