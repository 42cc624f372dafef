"""The PDF memo: its text against `costmodel compare`, determinism, fonts, rendering, page count."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("reportlab")
pytest.importorskip("matplotlib")

from costmodel.cli import main
from costmodel.decision.results import exclusion_label
from costmodel.memo import Memo, build_memo
from costmodel.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
TODAY = dt.date(2026, 12, 1)
_BUILT: dict[str, Memo] = {}


def memo_for(path: Path) -> Memo:
    """One memo per example per test session (building one takes about a second)."""
    if path.stem not in _BUILT:
        _BUILT[path.stem] = build_memo(load_scenario(path), today=TODAY)
    return _BUILT[path.stem]


def pdf_text(pdf: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return "\n".join(page.extract_text() for page in reader.pages)


# Every page ends with the running footer: the memo's title and date (extracted elsewhere on page 1, where the
# title block repeats it), the scenario's name, "Page K of N".
_FOOTER = re.compile(r"(Design review: API or self-hosted LLM serving · \S+\n)?[^\n]*\nPage \d+ of \d+\s*$")


def body_text(pdf: bytes) -> str:
    """The memo's text without the page footers, so a paragraph that runs onto the next page reads whole."""
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    pages = [page.extract_text() for page in reader.pages]
    assert all(_FOOTER.search(page) for page in pages), "a page lost its footer"
    return "\n".join(_FOOTER.sub("", page) for page in pages)


def squeeze(text: str) -> str:
    """Whitespace removed: table cells wrap and extractors split lines differently."""
    return re.sub(r"\s+", "", text)


def compare(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["compare", str(path), *extra]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_options_and_figures_match_costmodel_compare(path, capsys):
    contract = json.loads(compare(path, capsys, "--json"))
    table = compare(path, capsys)
    text = squeeze(body_text(memo_for(path).pdf))
    assert squeeze(f"Recommendation: {contract['recommendation']}.") in text
    rank = 0
    for option in contract["options"]:
        # A 0-replica hybrid is its API's plan: listed without a rank of its own (issue 16).
        alias = (option["kind"] == "hybrid" and option["replicas"] == 0 and option["excluded_reason"] is None
                 and option["name"] != contract["recommendation"])
        rank += 0 if alias else 1
        # `costmodel compare`'s text row: name, kind, $/month, $/M tok, SLO, ...
        row = next(line.split() for line in table.splitlines() if line.split()[:1] == [option["name"][:32]])
        name, kind, usd_month, usd_mtok, slo = row[:5]
        assert (name, kind) == (option["name"], option["kind"])
        util = "-" if option["utilization"] is None else f"{option['utilization']:.0%}"
        verdict = {"yes": "yes", "likely": "likely", "?": "unverified"}.get(slo, "NO") + (
            ", throttled" if option["throttled"] else "")
        if option["excluded_kind"] not in (None, "misses_slo", "throttled"):  # issue 13: the state, in words
            verdict = f"excluded: {exclusion_label(option['excluded_kind'])}" + (
                f", retires {option['retires_on']}" if option["retires_on"] else "")
            latency = ""
        elif option["slo_status"] == "unverified":  # no evidence, or a band across a limit: never "yes"
            assert not option["meets_slo"] and slo == "?"
            latency = {"published": " (published, not your traffic)",
                       "simulated": " (simulated band across a limit)"}.get(option["latency_source"], " (not measured)")
        elif option["ttft_p90_seconds"] is None or option["tpot_p90_seconds"] is None:
            latency = (" (published, not your traffic)" if option["latency_source"] == "published"
                       else " (no load meets it)" if option["kind"] == "self-host" else " (not measured)")
        else:  # whole milliseconds below a second, as compare prints them; seconds with 2 decimals above
            latency = ": " + " / ".join(f"{v * 1e3:.0f} ms" if v < 1 else f"{v:.2f} s"
                                         for v in (option["ttft_p90_seconds"], option["tpot_p90_seconds"]))
        # The memo's options table row, cell by cell: rank, name, kind, $/month, $/M tok, SLO, GPUs, utilization.
        mtok = usd_mtok if usd_mtok == "n/a" else f"${usd_mtok}"
        cells = ("-", "hybrid, 0 replicas (= its API)") if alias else (rank, kind)
        # GPUs: the replicas' own, and the GPUs billed where whole instances bill more (review L5).
        billed = option["gpus_billed"]
        gpus = f"{option['gpus']}" + (f" ({billed} billed)" if billed not in (None, option["gpus"]) else "")
        row_text = squeeze(f"{cells[0]} {name} {cells[1]} {usd_month} {mtok} {verdict}{latency} {gpus} {util}")
        assert row_text in text, f"row {rank} of the options table does not read {row_text!r}"
    # The decision's reasons are quoted verbatim.
    for reason in contract["reasons"]:
        assert squeeze(reason) in text
    # Each option's latency owner and its lever, as `compare --json` names them (issue 17, item 5).
    for option in contract["options"]:
        if option["latency_owner"]:
            assert squeeze(f"Latency owner: {option['latency_owner']}") in text


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_memo_has_every_section_and_three_to_eight_pages(path):
    memo = memo_for(path)
    # The body (through Sign-off) fits in 8 pages; the formula appendix may start a ninth since the Drawbacks,
    # Rollback and Monitoring sections were added.
    assert 3 <= memo.pages <= 10
    pages = pypdf.PdfReader(io.BytesIO(memo.pdf)).pages
    assert len(pages) == memo.pages
    # The verify-first and premium paragraphs on page 1 (the evidence rule) can push the appendix to page 9.
    assert next(i for i, page in enumerate(pages) if "Appendix A. Formulas" in page.extract_text()) < 9
    text = pdf_text(memo.pdf)
    for heading in ("1. Decision", "2. Workload and SLO", "3. Options compared", "4. Cost, capacity and memory",
                    "5. Sensitivity", "6. Risks and common mistakes", "7. Assumptions and sources",
                    "Appendix A. Formulas"):
        assert heading in text
    for figure in ("Figure 1.", "Figure 2.", "Figure 3.", "Figure 4.", "Figure 5."):
        assert figure in text  # every bundled example has a self-host option, so all five charts
    assert f"Page {memo.pages} of {memo.pages}" in text
    assert "Date: 2026-12-01" in text
    assert "The two numbers that drive the choice:" in " ".join(text.split())  # wrapped anywhere


def test_same_scenario_and_date_give_the_same_text_and_bytes():
    path = ROOT / "examples" / "rag-service.yaml"
    first = memo_for(path)
    again = build_memo(load_scenario(path), today=TODAY)
    assert pdf_text(again.pdf) == pdf_text(first.pdf)
    assert again.pdf == first.pdf  # reportlab invariant mode + fixed creation date + deterministic rasters


def test_pdf_dates_come_from_the_evaluation_date():
    info = pypdf.PdfReader(io.BytesIO(memo_for(EXAMPLES[0]).pdf)).metadata
    assert info["/CreationDate"].startswith("D:20261201")
    assert info["/ModDate"].startswith("D:20261201")


def test_every_font_is_embedded():
    reader = pypdf.PdfReader(io.BytesIO(memo_for(EXAMPLES[0]).pdf))
    seen = set()
    for page in reader.pages:
        for font in page["/Resources"]["/Font"].values():
            font = font.get_object()
            seen.add(str(font["/BaseFont"]))
            descriptor = font.get("/FontDescriptor")
            assert descriptor is not None and "/FontFile2" in descriptor.get_object(), font["/BaseFont"]
    assert any("DejaVuSans" in name for name in seen)


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) not installed")
def test_pages_render_with_pdftoppm(tmp_path):
    memo = memo_for(EXAMPLES[-1])
    pdf = tmp_path / "memo.pdf"
    pdf.write_bytes(memo.pdf)
    proc = subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(tmp_path / "page")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == memo.pages
    assert all(p.stat().st_size > 1000 for p in pages)


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) not installed")
def test_pdftotext_reads_the_recommendation(tmp_path):
    path = EXAMPLES[0]
    pdf = tmp_path / "memo.pdf"
    pdf.write_bytes(memo_for(path).pdf)
    proc = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, timeout=60, check=True)
    recommendation = memo_for(path).content.decision.recommendation
    assert squeeze(f"Recommendation: {recommendation}.") in squeeze(proc.stdout)


def test_memo_renders_a_given_decision_as_the_app_passes_it():
    # The app's Memo page hands over the Decision it already shows; the hand-built one here has no decide().
    from test_memo_sample import sample_decision

    scenario, decision = sample_decision()
    memo = build_memo(scenario, decision, today=TODAY)
    assert memo.content.decision is decision
    text = squeeze(pdf_text(memo.pdf))
    # 6,087,500 requests x $0.000485 = $2,952 (deepinfra); x $0.000980 = $5,966 (gpt-4.1-mini).
    assert squeeze("1 llama-3.3-70b-deepinfra api $2,952") in text
    assert squeeze("gpt-4.1-mini api $5,966") in text
