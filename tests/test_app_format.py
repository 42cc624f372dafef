"""Table cells and axis labels as people read them (app/formatting.py), and the pages that use them:
no raw None/nan/Infinity in the Compare table, 'never at this size' for a break-even utilization above
100%, 'does not fit' instead of the Roofline timings it invalidates, full log-axis labels."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app import formatting as fmt

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")
RAW = ("None", "nan", "NaN", "inf", "Infinity")


def test_cells_never_print_raw_missing_values() -> None:
    for value in (None, math.nan, math.inf, -math.inf):
        assert fmt.ms(value) == fmt.percent(value) == fmt.break_even_utilization(value) == "-"
    assert fmt.billions_per_month(None, applies=True) == "never"
    assert fmt.billions_per_month(math.inf, applies=True) == "never"
    assert fmt.billions_per_month(None, applies=False) == "-"
    assert fmt.count(None) == "-"


def test_units_separators_and_ms() -> None:
    assert fmt.ms(0.0567) == "56.7 ms"  # 0.0567 s x 1000
    assert fmt.ms(0.503) == "503 ms"
    assert fmt.ms(6.13) == "6,130 ms"  # TPOT and TTFT both in ms, with a separator
    assert fmt.percent(0.2) == "20%"
    assert fmt.break_even_utilization(0.28) == "28%"
    assert fmt.break_even_utilization(2.53) == "never at this size"  # 253% cannot be reached
    assert fmt.billions_per_month(24.85e9, applies=True) == "24.85B tokens/month"
    assert fmt.count(12345) == "12,345"


def test_log_ticks_have_full_labels() -> None:
    values, labels = fmt.log_ticks(0.15, 12, prefix="$")
    assert labels == ["$0.20", "$0.50", "$1", "$2", "$5", "$10"]  # never a bare '5' or '2' below $1
    assert values == pytest.approx([0.2, 0.5, 1, 2, 5, 10])
    _, labels = fmt.log_ticks(500, 20_000, prefix="$")
    assert labels == ["$500", "$1,000", "$2,000", "$5,000", "$10,000", "$20,000"]  # one style, never '$10k'
    assert fmt.log_ticks(0, 10) == ([], [])


def _page(path: str) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=90).run()
    return at.switch_page(path).run()


def test_compare_table_has_no_raw_values_and_reads_never() -> None:
    at = _page("views/compare.py")
    assert not at.exception
    table = at.dataframe[0].value
    for column in table.columns:
        if table[column].dtype == object:
            for cell in table[column]:
                assert isinstance(cell, str) and cell.strip() not in RAW, (column, cell)
    assert table["TPOT p90"].str.endswith("ms").any()
    assert not table["break-even utilization"].str.contains(r"^\d{3,}%", regex=True).any()
    assert list(table.columns[:4]) == ["rank", "option", "kind", "$/month"]


def test_roofline_does_not_fit_replaces_the_timings() -> None:
    at = _page("views/roofline.py")
    at.selectbox(key="rf_model").set_value("llama-3.1-70b")
    at.selectbox(key="rf_hardware").set_value("h100-sxm")
    at.number_input(key="rf_gpus").set_value(1)
    at.run()
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    # 70B parameters x 2 bytes (bf16) = 140 GB of weights > 80 GB of HBM on one H100.
    for label in ("TTFT (prefill)", "TPOT (decode step)", "Decode tokens/s (replica)"):
        assert values[label] == "does not fit"
    assert all(m.help for m in at.metric)


def _tables_read_cleanly(at: AppTest) -> list[tuple[str | None, tuple[str, ...]]]:
    """Every table on the page: its missing cells drawn as '-' or left blank (never Streamlit's 'None'), and no
    text cell holding a raw None/nan; returns each table's key (editors only) and columns."""
    keys = []
    for table in at.dataframe:
        keys.append((table.key, tuple(table.value.columns)))
        assert table.proto.HasField("placeholder") and table.proto.placeholder in ("-", ""), table.key
        frame = table.value
        for column in frame.columns:
            if frame[column].dtype == object:
                for cell in frame[column]:
                    assert cell is None or str(cell).strip() not in RAW, (table.key, column, cell)
    return keys


def test_scenario_and_prices_tables_never_show_none() -> None:
    # The example's own options leave optional cells empty (no RPM/TPM limits, no own $/GPU-hour, no own
    # latency), so the missing-value drawing is exercised.
    at = _page("views/scenario.py")
    assert not at.exception
    shown = {key for key, _ in _tables_read_cleanly(at)}
    assert {"sc_options_api_1", "sc_options_self-host_1", "sc_options_hybrid_1"} <= shown
    api = at.dataframe(key="sc_options_api_1").value
    assert api["requests_per_minute_limit"].isna().any()  # a blank cell, drawn blank, its help says 'no limit'
    at.switch_page("views/prices.py").run()
    at.selectbox(key="pr_ovr_api_row").set_value(at.selectbox(key="pr_ovr_api_row").options[0])
    at.number_input(key="pr_ovr_api_out").set_value(50.0)
    at.button(key="pr_ovr_api_apply").click().run()
    assert not at.exception
    tables = _tables_read_cleanly(at)
    assert len(tables) == 3  # the API sheet, the GPU sheet and this session's overrides
    overrides = next(t.value for t in at.dataframe if "input $/M tokens" in t.value.columns)
    assert list(overrides.columns) == ["price id", "input $/M tokens", "output $/M tokens"]
    assert overrides.iloc[0]["input $/M tokens"] == "the sheet's" and overrides.iloc[0]["output $/M tokens"] == "$50.000"
