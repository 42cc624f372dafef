"""A CJK-capable font for memo text DejaVu cannot draw (Chinese, Japanese, Korean names): Noto Sans CJK
from Debian's fonts-noto-cjk package, subset to the characters the memo uses and embedded.

reportlab embeds TrueType outlines only, and Noto CJK ships PostScript (CFF) outlines in a .ttc, so the
subset's glyphs are converted to TrueType quadratics with fontTools (cu2qu, tolerance 1 font unit) before
reportlab registers it: ~1 s per memo that needs it, nothing for one that does not. Without the package,
text keeps DejaVu (the boxes the issue saw) and `cjk_font_path()` is None.
Imported only when a memo is built (fontTools comes with matplotlib).
"""

from __future__ import annotations

import io
from pathlib import Path

FONT_NAME = "NotoSansCJK"
# Debian fonts-noto-cjk (https://packages.debian.org/bookworm/fonts-noto-cjk), index 0 of the collection.
FONT_PATHS = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/opentype/noto-cjk/NotoSansCJK-Regular.ttc"),
)
_REGISTERED: dict[frozenset[str], str] = {}


def needs_cjk(char: str) -> bool:
    """True for ideographs, kana, hangul and CJK punctuation/full-width forms (DejaVu has none of them)."""
    code = ord(char)
    return (0x2E80 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF or 0xF900 <= code <= 0xFAFF
            or 0xFF00 <= code <= 0xFFEF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F
            or 0x20000 <= code <= 0x3FFFF)


def cjk_font_path() -> Path | None:
    """The installed Noto Sans CJK collection, or None."""
    return next((path for path in FONT_PATHS if path.is_file()), None)


def _truetype_subset(path: Path, text: str) -> io.BytesIO:
    """The font subset to `text`'s characters, with CFF outlines converted to a glyf table."""
    from fontTools import subset
    from fontTools.pens.cu2quPen import Cu2QuPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import TTFont, newTable

    font = TTFont(str(path), fontNumber=0, lazy=True)
    options = subset.Options()
    options.layout_features = []
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    glyph_set, order = font.getGlyphSet(), font.getGlyphOrder()
    glyf = newTable("glyf")
    glyf.glyphOrder, glyf.glyphs = order, {}
    for name in order:
        pen = TTGlyphPen(glyph_set)
        glyph_set[name].draw(Cu2QuPen(pen, 1.0, reverse_direction=True))  # cubic -> quadratic, 1 unit error
        glyf.glyphs[name] = pen.glyph()
    font["glyf"], font["loca"] = glyf, newTable("loca")
    for tag in ("CFF ", "VORG"):
        if tag in font:
            del font[tag]
    maxp = font["maxp"]
    maxp.tableVersion = 0x00010000
    for field in ("maxTwilightPoints", "maxStorage", "maxFunctionDefs", "maxInstructionDefs", "maxStackElements",
                  "maxSizeOfInstructions", "maxComponentElements"):
        setattr(maxp, field, 0)
    maxp.maxZones = 1
    font["head"].glyphDataFormat = 0
    post = font["post"]
    post.formatType, post.extraNames, post.mapping = 2.0, [], {}
    font.sfntVersion = "\x00\x01\x00\x00"
    out = io.BytesIO()
    font.save(out)
    out.seek(0)
    return out


def register_cjk(text: str) -> str | None:
    """Register (once per character set) a font for `text`'s CJK characters; its reportlab name, or None
    when the text has none or the package is not installed."""
    chars = frozenset(ch for ch in text if needs_cjk(ch))
    path = cjk_font_path()
    if not chars or path is None:
        return None
    if chars not in _REGISTERED:
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont

        name = f"{FONT_NAME}-{len(_REGISTERED)}"
        pdfmetrics.registerFont(TTFont(name, _truetype_subset(path, "".join(sorted(chars)))))
        _REGISTERED[chars] = name
    return _REGISTERED[chars]


def wrap_runs(escaped: str, font_name: str | None) -> str:
    """Reportlab markup with every run of CJK characters set in `font_name` (unchanged when None)."""
    if font_name is None:
        return escaped
    out: list[str] = []
    run: list[str] = []
    for ch in escaped:
        if needs_cjk(ch):
            run.append(ch)
            continue
        if run:
            out.append(f'<font name="{font_name}">{"".join(run)}</font>')
            run = []
        out.append(ch)
    if run:
        out.append(f'<font name="{font_name}">{"".join(run)}</font>')
    return "".join(out)

