"""Names and text that could break a PDF: markup, Unicode, right-to-left, control characters, very long."""

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
pytest.importorskip("matplotlib")

from costmodel.memo import build_memo
from costmodel.memo.pdf_text import clean, markup
from costmodel.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
TODAY = dt.date(2026, 12, 1)
MARKUP = "<b>&amp;</para>"
HEBREW = "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd"  # "shalom olam", right to left
ARABIC = "\u0645\u0631\u062d\u0628\u0627"  # "marhaba"


def renamed(*, name: str, description: str, option_names: dict[int, str]) -> object:
    """examples/chat-assistant.yaml with a new scenario name and some options renamed (hybrid refs follow)."""
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["name"], data["description"] = name, description
    old = {i: data["options"][i]["name"] for i in option_names}
    for index, new in option_names.items():
        data["options"][index]["name"] = new
    for option in data["options"]:
        for field in ("self_host", "api"):
            for index, before in old.items():
                if option.get("kind") == "hybrid" and option.get(field) == before:
                    option[field] = option_names[index]
    return parse_scenario(data)


def text_of(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)


def test_markup_is_escaped_and_control_characters_dropped():
    assert markup("<b>&amp;</para>") == "&lt;b&gt;&amp;amp;&lt;/para&gt;"
    assert clean("a\x07b\nc\x00") == "a b c "
    assert clean("x" * 10, limit=5) == "xxxx\u2026"
    assert clean("\ud800 lone surrogate") == "? lone surrogate"


def test_hostile_names_do_not_break_the_pdf(tmp_path):
    long_word = "R" * 600  # no space to break at
    scenario = renamed(
        name=f"{MARKUP} {HEBREW} {ARABIC} \x07\u202e " + "very long name " * 120,
        description=f"</para><para>{MARKUP} & <font size=99>x</font> $x^2$ {HEBREW}",
        option_names={0: f"{MARKUP} $x^2$", 2: f"{HEBREW} \u05d1\u05d5\u05d8", 3: long_word},
    )
    memo = build_memo(scenario, today=TODAY)
    assert memo.pages >= 3
    text = text_of(memo.pdf)
    squeezed = re.sub(r"\s+", "", text)
    assert MARKUP in text  # printed literally, not interpreted
    assert re.sub(r"\s+", "", f"{MARKUP} $x^2$") in squeezed
    assert "<font size=99>x</font>" in text
    assert HEBREW.replace(" ", "") in squeezed or HEBREW[::-1].replace(" ", "") in squeezed
    assert long_word[:80] in squeezed  # the long name wraps instead of overflowing or failing
    assert "\x07" not in text
    if shutil.which("pdftoppm") is not None:
        pdf = tmp_path / "hostile.pdf"
        pdf.write_bytes(memo.pdf)
        proc = subprocess.run(["pdftoppm", "-r", "20", "-png", str(pdf), str(tmp_path / "p")],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert len(list(tmp_path.glob("p-*.png"))) == memo.pages
