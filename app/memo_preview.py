"""The Memo page's bytes: the PDF from `costmodel.memo.build_memo`, and PNG previews of its pages
rendered by poppler's `pdftoppm` (the page falls back to the memo's text when it is not installed)."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from costmodel.decision.rank import CapacityCache
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.memo import build_memo
from costmodel.memo.blocks import Block
from costmodel.scenario import Scenario

PREVIEW_DPI = 60


@dataclass(frozen=True)
class MemoFile:
    """A built memo: the PDF bytes the download button offers, its page count and blocks (text preview)."""

    pdf: bytes
    pages: int
    recommendation: str
    blocks: tuple[Block, ...]


def build_memo_file(scenario: Scenario, *, calibration: Calibration | None, today: dt.date,
                    capacity_cache: CapacityCache | None = None) -> MemoFile:
    """One library call: build_memo for the scenario as of `today` (same date, same bytes)."""
    memo = build_memo(scenario, calibration=calibration, today=today, capacity_cache=capacity_cache)
    return MemoFile(pdf=memo.pdf, pages=memo.pages, recommendation=memo.content.decision.recommendation,
                    blocks=memo.content.blocks)


def can_render_pages() -> bool:
    """Whether poppler's pdftoppm is installed (Debian: apt-get install poppler-utils)."""
    return shutil.which("pdftoppm") is not None


def page_images(pdf: bytes, *, dpi: int = PREVIEW_DPI) -> list[bytes]:
    """PNG bytes of every page, in order."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "memo.pdf"
        source.write_bytes(pdf)
        try:
            subprocess.run(["pdftoppm", "-png", "-r", str(dpi), str(source), str(Path(folder) / "page")],
                           check=True, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CostmodelError(f"could not render the memo preview with pdftoppm ({exc})") from None
        return [path.read_bytes() for path in sorted(Path(folder).glob("page-*.png"), key=_page_number)]


def _page_number(path: Path) -> int:
    return int(path.stem.rsplit("-", 1)[1])
