"""The memo as a reviewer reads it: the design-review sections fed by the scenario's owner, goals and
constraints; every word inside the page margins; CJK text in an embedded CJK font; money as '-$127' and
cents for tiny sums; 'never' without a unit; the capacity method the options used; every SLO limit on
page 1; the spiky-traffic bullet once; long option names cut."""

from __future__ import annotations

import datetime as dt
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("reportlab")

from reportlab.lib.pagesizes import A4

from costmodel.memo import Memo, build_memo
from costmodel.memo.blocks import NAME_CHARS, Table, short
from costmodel.memo.builder import FRAME_PADDING, MARGIN, TEXT_WIDTH, fit_widths
from costmodel.memo.cjk import cjk_font_path
from costmodel.scenario import load_scenario, parse_scenario
from costmodel.units import fmt_money

ROOT = Path(__file__).resolve().parents[1]
DATE = dt.date(2026, 12, 1)
LONG_NAME = "claude-haiku-" + "x" * 257  # 270 characters, as the issue saw
CJK_NAME = "東京の推論サービス 한국어"


@pytest.fixture(scope="module")
def memo() -> Memo:
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump(mode="json")
    data |= {"name": CJK_NAME, "owner": "Dana Reviewer (platform lead)",
             "goals": ["Serve the EU launch within the SLO"], "non_goals": ["Fine-tuning"],
             "constraints": ["Prompts stay in the EU"]}
    data["slo"]["e2e_p90_seconds"] = 30.0
    for option in data["options"]:
        if option["name"] == "claude-haiku-4.5":
            option["name"] = LONG_NAME
    return build_memo(parse_scenario(data, where="test"), today=DATE)


def _text(memo: Memo) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(memo.pdf)).pages)


def test_design_review_sections_use_the_scenario_fields(memo: Memo) -> None:
    text = _text(memo)
    for heading in ("Context", "Goals and non-goals", "8. Reliability", "9. Open questions", "10. Rollout plan",
                    "11. Rollback", "12. Monitoring", "13. Sign-off", "1. Decision", "7. Assumptions and sources",
                    "Drawbacks of"):
        assert heading in text
    assert "Prompts stay in the EU" in text and "Serve the EU launch within the SLO" in text and "Fine-tuning" in text
    monitoring = text[text.index("12. Monitoring"):text.index("13. Sign-off")]
    assert "TTFT p90" in monitoring and "TPOT p90" in monitoring and "E2E p90" in monitoring  # every SLO limit
    assert "Monthly bill" in monitoring
    sign_off = text[text.index("13. Sign-off"):]
    assert "Dana Reviewer (platform lead)" in sign_off
    reliability = text[text.index("8. Reliability"):text.index("9. Open questions")]
    assert "replica" in reliability and "SLA" in reliability


def test_page_one_lists_every_slo_limit(memo: Memo) -> None:
    first = pypdf.PdfReader(io.BytesIO(memo.pdf)).pages[0].extract_text()
    decision = first[first.index("1. Decision"):]
    # chat-assistant sets p90 TTFT/TPOT and p99 TTFT 2.5 s; the test adds E2E p90 30 s.
    for limit in ("TTFT p90", "TPOT p90", "TTFT p99", "E2E p90"):
        assert limit in decision


def test_wording_money_never_capacity_method_and_spiky_once(memo: Memo) -> None:
    text = _text(memo)
    assert "never tok/mo" not in text and "$-" not in text
    assert text.count("Spiky traffic") <= 1
    assert "continuous-batching simulator" in text  # every self-host option here is sized by the simulator
    assert "no queueing" not in text[text.index("7. Assumptions"):text.index("8. Reliability")]
    assert fmt_money(-127.0) == "-$127"
    assert fmt_money(0.42) == "$0.42"  # a tiny sum keeps its cents
    assert fmt_money(2084.4) == "$2,084"
    assert fmt_money(-0.001) == "$0.00"  # no '-$0.00'


def test_long_option_names_are_cut(memo: Memo) -> None:
    text = re.sub(r"\s+", "", _text(memo))
    assert LONG_NAME not in text
    assert short(LONG_NAME).rstrip("\u2026") in text or LONG_NAME[:80] in text
    assert len(short(LONG_NAME)) == NAME_CHARS


def test_table_columns_fit_the_text_width_and_hold_their_longest_word() -> None:
    assert pytest.approx(A4[0]) == MARGIN * 2 + FRAME_PADDING * 2 + TEXT_WIDTH
    block = Table(header=("#", "Option", "$/month"), rows=(("1", "x", "$2,084,463"), ("2", "y", "$1")),
                  widths=(0.05, 0.9, 0.05), align=("r", "l", "r"))
    widths = fit_widths(block, font_size=8.0)
    assert sum(widths) == pytest.approx(TEXT_WIDTH)
    from reportlab.pdfbase import pdfmetrics

    from costmodel.memo.pdf_text import register_fonts

    register_fonts()
    assert widths[2] >= pdfmetrics.stringWidth("$2,084,463", "DejaVuSans", 8.0) + 6  # never split mid-number


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) not installed")
def test_every_word_is_inside_the_margins(memo: Memo, tmp_path: Path) -> None:
    pdf = tmp_path / "memo.pdf"
    pdf.write_bytes(memo.pdf)
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    words = re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*?)</word>', out)
    assert len(words) > 500
    outside = [(w, x0, x1) for x0, x1, w in words if float(x0) < MARGIN - 0.5 or float(x1) > A4[0] - MARGIN + 0.5]
    assert not outside, outside[:10]


@pytest.mark.skipif(cjk_font_path() is None, reason="needs Debian's fonts-noto-cjk")
def test_cjk_text_renders_in_an_embedded_cjk_font(memo: Memo) -> None:
    reader = pypdf.PdfReader(io.BytesIO(memo.pdf))
    fonts = {}
    for font in reader.pages[0]["/Resources"]["/Font"].values():
        font = font.get_object()
        fonts[str(font["/BaseFont"])] = font
    cjk = [name for name in fonts if "NotoSansCJK" in name]
    assert cjk, sorted(fonts)
    descriptor = fonts[cjk[0]]["/FontDescriptor"].get_object()
    assert "/FontFile2" in descriptor  # embedded
    assert CJK_NAME.split()[0] in reader.pages[0].extract_text()  # the characters map back (ToUnicode)


def test_latency_section_lists_each_option_with_its_source(memo: Memo) -> None:
    text = _text(memo)
    section = re.sub(r"\s+", " ", text[text.index("Latency\nThe SLO:"):])
    assert "TTFT p90" in section and "Owner of the latency" in section
    decision = memo.content.decision
    assert decision is not None
    # Every option's verdict is stated with where its figure comes from (the tri-state, never a bare 'meets').
    for option in decision.options:
        if option.excluded_reason is None and option.latency_source == "simulated":
            assert "simulated (this tool)" in section
        if option.latency_source == "published":
            assert "published, not your traffic" in section
    assert "E2E p90" in section  # the SLO line names every limit, p99 and E2E included
