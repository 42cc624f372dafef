"""`costmodel memo SCENARIO --out FILE`: JSON contract, atomic write, errors, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "examples" / "chat-assistant.yaml"


def test_cli_start_up_does_not_import_the_pdf_stack():
    code = ("import sys, costmodel.cli\ncostmodel.cli.build_parser()\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {'matplotlib', 'reportlab', 'PIL'})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stdout.strip() == ""


def test_memo_json_reports_path_pages_seconds_and_unicode_names_render(tmp_path, capsys):
    pypdf = pytest.importorskip("pypdf")
    pytest.importorskip("reportlab")
    pytest.importorskip("matplotlib")
    scenario = tmp_path / "zurich.yaml"
    text = CHAT.read_text(encoding="utf-8").replace("name: chat-assistant", "name: Support bot \u2013 Z\u00fcrich")
    scenario.write_text(text.replace("description: >", "description: >\n  \u00c9t\u00e9 \u00b5s \u2264 \u20ac5."),
                        encoding="utf-8")
    out = tmp_path / "memo.pdf"
    assert main(["memo", str(scenario), "--out", str(out), "--date", "2026-12-01", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == str(out)
    assert 3 <= payload["pages"] <= 10  # the formula appendix may start a ninth or tenth page (tests/test_memo.py)
    assert payload["seconds"] > 0
    assert payload["recommendation"]
    assert out.read_bytes().startswith(b"%PDF-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.pdf", "zurich.yaml"]  # no temp file left
    pages = pypdf.PdfReader(out).pages
    assert len(pages) == payload["pages"]
    first = pages[0].extract_text()
    assert "Support bot \u2013 Z\u00fcrich" in first
    assert "\u00c9t\u00e9 \u00b5s \u2264 \u20ac5." in first


@pytest.mark.parametrize(("argv", "message"), [
    (["memo", str(CHAT), "--out", "memo.txt"], "ending in .pdf"),
    (["memo", "no-such-scenario.yaml", "--out", "memo.pdf"], "not found"),
])
def test_bad_input_exits_2_with_the_fix(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_bad_date_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["memo", str(CHAT), "--out", "x.pdf", "--date", "2026-13-01"])
    assert exc.value.code == 2
    assert "YYYY-MM-DD" in capsys.readouterr().err
