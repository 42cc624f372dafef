"""Text the PDF can set: the embedded DejaVu fonts, user text cleaned of control characters and unpaired
surrogates, and plain text turned into escaped reportlab paragraph markup (CJK runs in a CJK font).

Imported only when a memo is built (needs the `memo` extra), by costmodel/memo/builder.py.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import matplotlib
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

from costmodel.memo.cjk import wrap_runs

FONT_FILES = {  # bundled with matplotlib, so a machine without Debian's fonts still has them
    "DejaVuSans": "DejaVuSans.ttf",
    "DejaVuSans-Bold": "DejaVuSans-Bold.ttf",
    "DejaVuSans-Oblique": "DejaVuSans-Oblique.ttf",
    "DejaVuSansMono": "DejaVuSansMono.ttf",
}


def register_fonts() -> None:
    """Register the DejaVu family with reportlab (embedded, subset, in every memo)."""
    if "DejaVuSans" in pdfmetrics.getRegisteredFontNames():
        return
    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    for name, file in FONT_FILES.items():
        pdfmetrics.registerFont(TTFont(name, str(folder / file)))
    pdfmetrics.registerFontFamily("DejaVuSans", normal="DejaVuSans", bold="DejaVuSans-Bold",
                                  italic="DejaVuSans-Oblique", boldItalic="DejaVuSans-Bold")


def escape(text: str) -> str:
    """`&`, `<` and `>` as entities, `&` first: what `xml.sax.saxutils.escape` does, without its import of
    `urllib.request` (and through it `http.client`, `ssl` and `email`), ~10 ms CPU per memo for three replaces."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clean(text: str, *, limit: int | None = None) -> str:
    """User text made safe to print: control characters become spaces, unpaired surrogates '?', cut at limit."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text


def markup(text: str, *, limit: int | None = None, cjk: str | None = None) -> str:
    """Plain text -> reportlab paragraph markup (escaped: '<b>' prints as '<b>'); runs of CJK characters
    set in the `cjk` font when one is given."""
    return wrap_runs(escape(clean(text, limit=limit)), cjk)
